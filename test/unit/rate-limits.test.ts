// The fixed-window arithmetic of the rate limits (pure); the batching against the table is exercised by
// test/integration/api-rate-limits.test.ts and js-endpoints.test.ts.
import { secondsUntilNextWindow, windowStart } from '../../shared/domain/rate-limits';
import { batchSize } from '../../shared/store/rate-limits';

describe('fixed windows', () => {
  it('start at multiples of their length, so every container agrees', () => {
    expect(windowStart(1_000_000_000_000, 10)).toBe(1_000_000_000);
    expect(windowStart(1_000_000_009_999, 10)).toBe(1_000_000_000);
    expect(windowStart(1_000_000_010_000, 10)).toBe(1_000_000_010);
    expect(windowStart(1_000_000_059_999, 60)).toBe(1_000_000_020);
  });

  it('Retry-After is the whole seconds left in the window, at least 1', () => {
    expect(secondsUntilNextWindow(1_000_000_000_000, 10)).toBe(10);
    expect(secondsUntilNextWindow(1_000_000_000_001, 10)).toBe(10);
    expect(secondsUntilNextWindow(1_000_000_009_000, 10)).toBe(1);
    expect(secondsUntilNextWindow(1_000_000_009_999, 10)).toBe(1);
  });

  it('containers write their counts in batches of 5% of the limit; small limits one by one', () => {
    expect([1, 10, 39, 40, 500, 6000].map(batchSize)).toEqual([1, 1, 1, 2, 25, 300]);
  });
});
