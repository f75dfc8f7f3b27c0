// One page of a list endpoint as a table: loading state, empty state that says what to do next, the exact
// `count`, and Previous/Next from the envelope's cursors. The cursor lives in the URL query, so every page
// of a list has its own address and back/forward work.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { cursorOf, toProblem, type Page, type Problem } from '../../api/client';
import { plural } from '../../ui/format';
import { Spinner } from '../../ui/busy-button';
import { urlWith } from '../lib/url';

export interface Column<T> {
  key: string;
  header: ComponentChildren;
  cell: (row: T) => ComponentChildren;
  numeric?: boolean;
  /** A header only screen readers hear (e.g. the actions column). */
  hiddenHeader?: boolean;
}

/** The header row of a table of `columns` (a hidden header is read only by screen readers). */
export function ColumnsHead<T>({ columns }: { columns: Column<T>[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c.key} scope="col" class={c.numeric ? 'num' : undefined}>
            {c.hiddenHeader ? <span class="sr-only">{c.header}</span> : c.header}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** One row of a table of `columns`. */
export function ColumnsRow<T>({ columns, row }: { columns: Column<T>[]; row: T }) {
  return (
    <tr>
      {columns.map((c) => (
        <td key={c.key} class={c.numeric ? 'num' : undefined}>
          {c.cell(row)}
        </td>
      ))}
    </tr>
  );
}

export interface PagedTableProps<T> {
  /** The table's caption (screen readers) and the pager's name. */
  label: string;
  noun: [one: string, many: string];
  load: (query: { cursor?: string; page_size: number }) => Promise<Page<T>>;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  empty: ComponentChildren;
  /** The URL query parameter holding this table's cursor (a page with two lists needs two). */
  cursorParam?: string;
  pageSize?: number;
  /** Reload whenever one of these changes (filters, a counter bumped after a write). */
  deps?: unknown[];
  onLoaded?: (page: Page<T>) => void;
  /**
   * The list's CSV export with the same filters (`/v1/exports/<list>.csv?…`): an "Export CSV" link beside the
   * pager. The session cookie authenticates it like any GET.
   */
  exportHref?: string;
}

/**
 * A counter for a PagedTable's `deps`: `reload` loads the table again where it is (after a row changed);
 * `reloadFromStart` also leaves the page the address's cursor (`cursorParam`) holds for the first one,
 * where a row just created is.
 */
export function useTableReload(cursorParam = 'cursor'): { version: number; reload: () => void; reloadFromStart: () => void } {
  const { path, query, route } = useLocation();
  const [version, setVersion] = useState(0);
  const reload = useCallback(() => setVersion((n) => n + 1), []);
  const reloadFromStart = () => {
    if (query[cursorParam]) route(urlWith(path, query, { [cursorParam]: null }));
    reload();
  };
  return { version, reload, reloadFromStart };
}

export function PagedTable<T>(props: PagedTableProps<T>) {
  const { path, query, route } = useLocation();
  const param = props.cursorParam ?? 'cursor';
  const cursor = query[param] || undefined;
  const pageSize = props.pageSize ?? 20;
  const [page, setPage] = useState<Page<T> | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [loading, setLoading] = useState(true);
  const [attempt, setAttempt] = useState(0);
  const latest = useRef(0);

  useEffect(() => {
    const ticket = ++latest.current;
    setLoading(true);
    setProblem(null);
    props
      .load({ cursor, page_size: pageSize })
      .then((result) => {
        if (ticket !== latest.current) return;
        setPage(result);
        props.onLoaded?.(result);
      })
      .catch((err: unknown) => {
        if (ticket === latest.current) setProblem(toProblem(err));
      })
      .finally(() => {
        if (ticket === latest.current) setLoading(false);
      });
    // `load` is a new closure at every render; what it depends on is in `deps`.
  }, [cursor, pageSize, attempt, ...(props.deps ?? [])]);

  const go = (link: string | null) => route(urlWith(path, query, { [param]: cursorOf(link) }));

  if (problem) {
    return (
      <div class="alert alert-error" role="alert">
        <p>
          Could not load the {props.noun[1]}: {problem.message ?? Object.values(problem.fields).flat().join(' ')}
        </p>
        <button type="button" class="btn btn-secondary btn-small" onClick={() => setAttempt((n) => n + 1)}>
          Try again
        </button>
      </div>
    );
  }
  if (!page) return <Spinner label={`Loading ${props.noun[1]}…`} />;
  if (page.count === 0 && page.results.length === 0 && !cursor) {
    return <div class="empty">{props.empty}</div>;
  }
  const exportLink = props.exportHref && (
    <a class="btn btn-secondary btn-small" href={props.exportHref} download aria-label={`Export CSV of ${props.label}`}>
      Export CSV
    </a>
  );

  return (
    <div class="paged" aria-busy={loading ? 'true' : undefined}>
      <div class="table-wrap">
        <table class={loading ? 'table is-loading' : 'table'}>
          <caption class="sr-only">{props.label}</caption>
          <ColumnsHead columns={props.columns} />
          <tbody>
            {page.results.map((row) => (
              <ColumnsRow key={props.rowKey(row)} columns={props.columns} row={row} />
            ))}
            {page.results.length === 0 && (
              <tr>
                <td colSpan={props.columns.length} class="muted">
                  Nothing on this page.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label={`${props.label}: pages`}>
        <span class="pager-count">{plural(page.count, props.noun[0], props.noun[1])}</span>
        {exportLink}
        {(page.previous || page.next || cursor) && (
          <div class="pager-buttons">
            <button
              type="button"
              class="btn btn-secondary btn-small"
              disabled={!page.previous || loading}
              onClick={() => go(page.previous)}
            >
              ← Previous
            </button>
            <button type="button" class="btn btn-secondary btn-small" disabled={!page.next || loading} onClick={() => go(page.next)}>
              Next →
            </button>
          </div>
        )}
      </nav>
    </div>
  );
}

/**
 * A list's search box: submits `?search=` (the cursor dropped, so results start on their first page); the
 * API matches exactly (docs/api.md "Search"). Clearing it lists everything again.
 */
export function SearchBox({ id, label, placeholder, hint }: { id: string; label: string; placeholder: string; hint?: string }) {
  const { path, query, route } = useLocation();
  const current = query.search ?? '';
  const [value, setValue] = useState(current);
  useEffect(() => setValue(current), [current]);
  const go = (term: string) => route(urlWith(path, query, { search: term.trim(), cursor: null }));
  return (
    // biome-ignore lint/a11y/useSemanticElements: the <search> element is newer than the browsers we support; role=search is its ARIA equivalent.
    <form
      class="inline-field search-box"
      role="search"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        go(value);
      }}
    >
      <label class="label-inline" for={id}>
        {label}
      </label>
      <input
        id={id}
        name="search"
        type="search"
        class="input input-small"
        value={value}
        placeholder={placeholder}
        title={hint}
        autoComplete="off"
        spellcheck={false}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
      <button type="submit" class="btn btn-secondary btn-small">
        Search
      </button>
      {current && (
        <button type="button" class="btn btn-ghost btn-small" onClick={() => go('')}>
          Clear
        </button>
      )}
    </form>
  );
}

/** `/v1/exports/<file>` with the given filters (empty ones left out). */
export function exportHref(file: string, filters: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) params.set(k, v);
  const search = params.toString();
  return `/v1/exports/${file}/${search ? `?${search}` : ''}`;
}
