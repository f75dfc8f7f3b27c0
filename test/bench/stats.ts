// Small numeric helpers shared by the bench sections: medians, percentiles, formatting.

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** 1234567 -> "1,234,567"; fractions to `digits` places. */
export function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export const kb = (bytes: number) => `${num(bytes / 1024, 1).replace(/\.0$/, '')} KB`;
export const ms = (value: number, digits = 1) => `${num(value, digits)} ms`;
export const pct = (ratio: number) => `${num(ratio * 100, 0)}%`;
export const mark = (ok: boolean) => (ok ? '✓' : '✗');

/** Writes a progress line to the real stdout (console.* may be redirected to the log file meanwhile). */
export function progress(line: string): void {
  process.stdout.write(`[bench] ${line}\n`);
}
