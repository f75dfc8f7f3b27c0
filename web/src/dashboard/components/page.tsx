// Page scaffolding: the one <h1> (and the document title), data loading with its loading and error states.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { toProblem, type Problem } from '../../api/client';
import { Spinner } from '../../ui/busy-button';

export function PageHeader(props: {
  title: string;
  subtitle?: ComponentChildren;
  back?: { href: string; label: string };
  children?: ComponentChildren;
}) {
  useEffect(() => {
    document.title = `${props.title} · Refloop`;
  }, [props.title]);
  return (
    <div class="page-header">
      <div class="page-title">
        {props.back && (
          <a class="back-link" href={props.back.href}>
            <span aria-hidden="true">← </span>
            {props.back.label}
          </a>
        )}
        <h1 tabIndex={-1}>{props.title}</h1>
        {props.subtitle && <p class="subtitle">{props.subtitle}</p>}
      </div>
      {props.children && <div class="page-actions">{props.children}</div>}
    </div>
  );
}

export interface Loaded<T> {
  data: T | null;
  problem: Problem | null;
  loading: boolean;
  reload: () => void;
  setData: (data: T) => void;
}

/** Loads once per change of `deps`; stale answers (an earlier request finishing later) are dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [loading, setLoading] = useState(true);
  const [attempt, setAttempt] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setLoading(true);
    setProblem(null);
    load()
      .then((result) => {
        if (ticket === latest.current) setData(result);
      })
      .catch((err: unknown) => {
        if (ticket === latest.current) setProblem(toProblem(err));
      })
      .finally(() => {
        if (ticket === latest.current) setLoading(false);
      });
  }, [...deps, attempt]);
  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  return { data, problem, loading, reload, setData };
}

/** The loading or error state of a Loaded, or its content once there. */
export function LoadState<T>({ loaded, what, children }: { loaded: Loaded<T>; what: string; children: (data: T) => ComponentChildren }) {
  if (loaded.problem && loaded.data === null) {
    return (
      <div class="alert alert-error" role="alert">
        <p>
          Could not load {what}: {loaded.problem.message ?? Object.values(loaded.problem.fields).flat().join(' ')}
        </p>
        {loaded.problem.status !== 404 && (
          <button type="button" class="btn btn-secondary btn-small" onClick={loaded.reload}>
            Try again
          </button>
        )}
      </div>
    );
  }
  if (loaded.data === null) return <Spinner label={`Loading ${what}…`} />;
  return <>{children(loaded.data)}</>;
}

/** A labelled block of a page: a <section> named by its <h2>. */
export function Section(props: {
  id: string;
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
  class?: string;
  description?: ComponentChildren;
}) {
  return (
    <section id={props.id} class={`card ${props.class ?? ''}`} aria-labelledby={`${props.id}-title`}>
      <div class="card-header">
        <div>
          <h2 id={`${props.id}-title`}>{props.title}</h2>
          {props.description && <p class="card-description">{props.description}</p>}
        </div>
        {props.actions && <div class="card-actions">{props.actions}</div>}
      </div>
      {props.children}
    </section>
  );
}

/** Definition list of a record's fields. */
export function Details({ items }: { items: [label: string, value: ComponentChildren][] }) {
  return (
    <dl class="details">
      {items.map(([label, value]) => (
        <div class="details-row" key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
