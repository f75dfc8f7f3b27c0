// Paddle Classic billing values: plan descriptors ("$10.00 / month"), Paddle's date-time strings and
// Paddle's money strings. Pure functions, no I/O. See docs/design/providers.md "Paddle Classic".

/**
 * The human description of a plan's price (docs/design/api-contract.md "Subscriptions"): `"$10.00 / month"`,
 * `"$30.00 / 3 months"`, `"€9.00 / month"`, `"£100.00 / year"`; other currencies as Intl en-US writes
 * them (`"CHF 10.00 / month"`). `interval` is Paddle's `billing_type` (day | week | month | year) and
 * `frequency` its `billing_period`; a frequency that is not an integer of 2 or more reads as 1.
 * null when the plan has no interval (a one-off product), or when the amount is not a decimal string.
 * A currency code Intl cannot format at all falls back to `"10.00 XXX"`.
 */
export function planDescriptor(amount: string, currency: string, interval: string | null, frequency: number | null): string | null {
  if (interval === null) return null;
  const unit = interval.trim();
  if (unit === '') return null;
  const cents = decimalToCents(amount);
  if (cents === null) return null;
  const price = formatMoney(cents, currency);
  const count = frequency !== null && Number.isInteger(frequency) && frequency >= 2 ? frequency : 1;
  return count === 1 ? `${price} / ${unit}` : `${price} / ${count} ${unit}s`;
}

/**
 * One Intl formatter per currency code Intl accepts (three letters: a bounded set): building one costs
 * ~0.1 ms, and every provider event describes a plan.
 */
const formatters = new Map<string, Intl.NumberFormat>();

function formatMoney(cents: number, currency: string): string {
  const value = cents / 100;
  try {
    let format = formatters.get(currency);
    if (!format) formatters.set(currency, (format = new Intl.NumberFormat('en-US', { style: 'currency', currency })));
    return format.format(value);
  } catch {
    // Intl throws RangeError on a code that is not three letters.
    const sign = cents < 0 ? '-' : '';
    const abs = Math.abs(cents);
    return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')} ${currency}`;
  }
}

const PADDLE_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?$/;

/**
 * Paddle's `YYYY-MM-DD HH:MM:SS` (UTC) or `YYYY-MM-DD` (midnight UTC) as unix milliseconds.
 * null for anything else, including impossible dates and times (`2023-02-30`, `24:00:00`, `:60`).
 */
export function paddleDateTimeToUnixMs(s: string): number | null {
  if (typeof s !== 'string') return null;
  const m = PADDLE_DATE_TIME.exec(s);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4] ?? '0');
  const minute = Number(m[5] ?? '0');
  const second = Number(m[6] ?? '0');
  if (month < 1 || month > 12) return null;
  if (day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear does not.
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}

/** Days in `month` (1..12) of `year`, proleptic Gregorian. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const PADDLE_MONEY = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * A Paddle money string (`"9.99"`, `"19.980"`, `"10"`, `"-1.50"`) as integer cents, rounded half away
 * from zero (`"0.005"` → 1, `"-0.005"` → -1). null on anything else (empty, spaces, `"1e3"`, `"1,00"`,
 * `".5"`, `"+1"`) and on amounts too large to hold exactly.
 */
export function decimalToCents(s: string): number | null {
  if (typeof s !== 'string') return null;
  const m = PADDLE_MONEY.exec(s);
  if (!m) return null;
  const negative = m[1] === '-';
  const whole = m[2] ?? '0';
  const fraction = m[3] ?? '';
  let cents = BigInt(whole) * 100n + BigInt(fraction.slice(0, 2).padEnd(2, '0'));
  const next = fraction.charAt(2);
  if (next !== '' && next >= '5') cents += 1n;
  if (cents > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const n = Number(cents);
  return negative && n !== 0 ? -n : n;
}
