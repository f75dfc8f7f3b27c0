// A report's range: `to` defaults to now, `from` to 30 days before `to`.
export function rangeOf(
  q: { from?: number | undefined; to?: number | undefined },
  now = Math.floor(Date.now() / 1000),
): { from: number; to: number } {
  const to = q.to ?? now;
  return { from: q.from ?? to - 30 * 86_400 + 1, to };
}
