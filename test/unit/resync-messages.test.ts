// The background sync's run messages (shared/flows/resync.ts): a full pass for an account that never
// completed a run and for the day's first run; otherwise the live half asks only for what changed since the
// last complete run started, with the overlap.
import { FULL_SYNC_HOURS, SYNC_OVERLAP_SECONDS, syncMessagesOf } from '../../shared/flows/resync';

const at = (iso: string) => Date.parse(iso);

describe('background sync run messages', () => {
  const mark = at('2026-11-27T06:00:00Z');

  it('an account with a sync mark gets an incremental live half, from the mark less the overlap', () => {
    const now = at('2026-11-27T12:00:00Z');
    const [live, deleted] = syncMessagesOf(['acct_a'], { acct_a: mark }, now);
    expect(live).toEqual({
      kind: 'sync-account',
      account_id: 'acct_a',
      state: 'live',
      page: 1,
      started_at: now,
      updated_after: mark / 1000 - SYNC_OVERLAP_SECONDS,
    });
    expect(deleted).toEqual({ kind: 'sync-account', account_id: 'acct_a', state: 'deleted', page: 1, started_at: now });
  });

  it('an account without a mark gets a full pass', () => {
    const now = at('2026-11-27T12:00:00Z');
    const messages = syncMessagesOf(['acct_a', 'acct_b'], { acct_a: mark }, now);
    expect(messages).toHaveLength(4);
    expect(messages.filter((m) => m.account_id === 'acct_b').every((m) => m.updated_after === undefined)).toBe(true);
    expect(messages.find((m) => m.account_id === 'acct_a' && m.state === 'live')?.updated_after).toBeDefined();
  });

  it(`a run starting in the first ${FULL_SYNC_HOURS} hours of the UTC day is a full pass for everyone`, () => {
    for (const iso of ['2026-11-28T00:00:00Z', `2026-11-28T0${FULL_SYNC_HOURS - 1}:59:59Z`]) {
      expect(syncMessagesOf(['acct_a'], { acct_a: mark }, at(iso)).every((m) => m.updated_after === undefined)).toBe(true);
    }
    expect(syncMessagesOf(['acct_a'], { acct_a: mark }, at(`2026-11-28T0${FULL_SYNC_HOURS}:00:00Z`))[0]?.updated_after).toBeDefined();
  });

  it('never asks for a negative instant', () => {
    expect(syncMessagesOf(['acct_a'], { acct_a: 1000 }, at('2026-11-27T12:00:00Z'))[0]?.updated_after).toBe(0);
  });
});
