// Page state that belongs in the address (filters, cursors, the overview's range), so reload, back and
// forward keep it.

/** `path` with `query` changed: a null, undefined or empty value removes the parameter. */
export function urlWith(path: string, query: Record<string, string>, changes: Record<string, string | null | undefined>): string {
  const params = new URLSearchParams(query);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === '') params.delete(key);
    else params.set(key, value);
  }
  const search = params.toString();
  // The router's path drops trailing slashes; the overview's address is /app/ (as the server redirects to it).
  const base = path === '/app' ? '/app/' : path;
  return search ? `${base}?${search}` : base;
}

/** The value of `raw` when it is one of `choices`, else `fallback`. */
export function oneOf<T extends string>(raw: string | undefined, choices: readonly T[], fallback: T): T {
  return raw !== undefined && (choices as readonly string[]).includes(raw) ? (raw as T) : fallback;
}
