// Report buckets (shared/flows/reports.ts): where a day falls for each interval, and the range rules.
import { bucketStart, checkRange } from '../../shared/flows/reports';
import { rangeOf } from '../../shared/domain/report-range';

const at = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;

describe('bucketStart', () => {
  it.each<[string, 'day' | 'week' | 'month', string]>([
    ['2026-11-25', 'day', '2026-11-25'],
    ['2026-11-25', 'week', '2026-11-23'], // a Wednesday: its ISO week starts on Monday the 23rd
    ['2026-11-23', 'week', '2026-11-23'],
    ['2026-11-29', 'week', '2026-11-23'], // Sunday ends the week
    ['2027-01-01', 'week', '2026-12-28'], // across a year
    ['2026-11-25', 'month', '2026-11-01'],
    ['2024-02-29', 'month', '2024-02-01'],
  ])('%s by %s starts on %s', (day, interval, start) => {
    expect(bucketStart(day, interval)).toBe(at(start));
  });
});

describe('ranges', () => {
  it('at most 400 days, and never backwards', () => {
    expect(() => checkRange(0, 400 * 86_400)).not.toThrow();
    expect(() => checkRange(0, 400 * 86_400 + 1)).toThrow('at most 400 days');
    expect(() => checkRange(10, 9)).toThrow('must not be before');
  });

  it('defaults to the 30 days up to now', () => {
    expect(rangeOf({}, 1_000_000_000)).toEqual({ from: 1_000_000_000 - 30 * 86_400 + 1, to: 1_000_000_000 });
    expect(rangeOf({ to: 500_000 })).toEqual({ from: 500_000 - 30 * 86_400 + 1, to: 500_000 });
  });
});
