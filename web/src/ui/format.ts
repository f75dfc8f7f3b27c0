// Dates in the browser's time zone and money in its locale. The API gives unix seconds, and amounts as
// decimal strings ("12.50") with their currency.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
// Calendar dates (YYYY-MM-DD, bucket starts at UTC midnight) are shown as the same calendar day everywhere.
const utcDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
const shortUtcDate = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const integer = new Intl.NumberFormat(undefined);
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });

export function formatTime(unix: number | null | undefined): string {
  return unix === null || unix === undefined ? '—' : dateTime.format(new Date(unix * 1000));
}

export function formatDate(unix: number | null | undefined): string {
  return unix === null || unix === undefined ? '—' : dateOnly.format(new Date(unix * 1000));
}

/** A UTC calendar day: `YYYY-MM-DD` or the unix start of a UTC day. */
export function formatDay(day: string | number | null | undefined, short = false): string {
  if (day === null || day === undefined || day === '') return '—';
  const date = typeof day === 'number' ? new Date(day * 1000) : new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return String(day);
  return (short ? shortUtcDate : utcDate).format(date);
}

const moneyFormats = new Map<string, Intl.NumberFormat>();

function moneyFormat(currency: string): Intl.NumberFormat | null {
  let f = moneyFormats.get(currency);
  if (!f) {
    try {
      f = new Intl.NumberFormat(undefined, { style: 'currency', currency });
    } catch {
      return null;
    }
    moneyFormats.set(currency, f);
  }
  return f;
}

/** `"12.50", "EUR"` -> `€12.50` (in the browser's locale). */
export function formatMoney(amount: string | number | null | undefined, currency: string | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  const n = typeof amount === 'number' ? amount : Number(amount);
  if (!currency) return Number.isFinite(n) ? n.toFixed(2) : String(amount);
  const f = moneyFormat(currency);
  return f && Number.isFinite(n) ? f.format(n) : `${String(amount)} ${currency}`;
}

/** A per-currency map (`{"USD": "12.00"}`) as text; `empty` when there is nothing. */
export function formatAmounts(amounts: Record<string, string> | null | undefined, empty = '—'): string {
  const entries = Object.entries(amounts ?? {}).filter(([, v]) => Number(v) !== 0);
  if (entries.length === 0) return empty;
  return entries.map(([c, v]) => formatMoney(v, c)).join(' · ');
}

export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : integer.format(n);
}

export function formatPercent(ratio: number | null): string {
  return ratio === null || !Number.isFinite(ratio) ? '—' : percent.format(ratio);
}

/** "3 members" / "1 member". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

export const titleCase = (s: string) => (s ? s.charAt(0).toUpperCase() + s.slice(1).replace(/_/g, ' ') : s);
