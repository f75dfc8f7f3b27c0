// Formatting the portal needs beyond ui/format.ts (which it shares with the dashboard): times of day,
// chart months and compact counts, all in the browser's locale.
const time = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });
// Stats buckets start at UTC midnight: a month is the same month wherever the browser is.
const shortMonth = new Intl.DateTimeFormat(undefined, { month: 'short', timeZone: 'UTC' });
const longMonth = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });
const monthYear = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

export const timeOnly = (unix: number) => time.format(new Date(unix * 1000));
export const monthShort = (unix: number) => shortMonth.format(new Date(unix * 1000));
export const monthLong = (unix: number) => longMonth.format(new Date(unix * 1000));
export const monthAndYear = (unix: number) => monthYear.format(new Date(unix * 1000));
export const compactCount = (n: number) => compact.format(n);
