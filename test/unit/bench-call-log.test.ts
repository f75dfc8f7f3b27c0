// The call log's summary (test/bench/call-log.ts) and its lines (infra/local/call-log.ts toLine).
import { toLine, type CallLine } from '../../infra/local/call-log';
import { callTable, NO_WORKER, parseCallLog, summarizeCalls } from '../../test/bench/call-log';

const line = (t: number, op: string, ms: number, extra: Partial<CallLine> = {}): CallLine => ({ t, op, ms, pid: 1, ...extra });

describe('the call log', () => {
  it('turns a recorded call into a line: its end, its time, its items and its caller', () => {
    expect(
      toLine({
        command: 'TransactWriteItems',
        startedAt: 1_000,
        endedAt: 1_250,
        sequential: true,
        writeItems: 8,
        caller: 'SubscriptionSync',
      }),
    ).toEqual({ t: 1_250, ms: 250, op: 'TransactWriteItems', items: 8, caller: 'SubscriptionSync', pid: process.pid });
    expect(toLine({ command: 'GetItem', startedAt: 5, endedAt: 9, sequential: false, error: 'ResourceNotFoundException' })).toEqual({
      t: 9,
      ms: 4,
      op: 'GetItem',
      pid: process.pid,
      error: 'ResourceNotFoundException',
    });
  });

  it('sums calls per caller and operation, most calls first, with the items written and the time quantiles', () => {
    const lines = [
      line(10_000, 'TransactWriteItems', 100, { caller: 'SubscriptionSync', items: 10 }),
      line(10_500, 'TransactWriteItems', 300, { caller: 'SubscriptionSync', items: 12 }),
      line(11_000, 'TransactWriteItems', 200, { caller: 'SubscriptionSync', items: 8 }),
      line(11_000, 'GetItem', 20),
      line(12_000, 'GetItem', 40),
      line(12_500, 'UpdateItem', 700, { caller: 'RewardFanout' }),
    ];
    const groups = summarizeCalls(lines);
    expect(groups.map((g) => [g.caller, g.op, g.calls, g.items])).toEqual([
      ['SubscriptionSync', 'TransactWriteItems', 3, 30],
      [NO_WORKER, 'GetItem', 2, 0],
      ['RewardFanout', 'UpdateItem', 1, 0],
    ]);
    expect(groups[0]).toMatchObject({ meanMs: 200, p50Ms: 200, p90Ms: 300 });
    // A window in seconds after the first call: 1 s to 2 s keeps the calls that ended at 11 and 12 s.
    expect(summarizeCalls(lines, { from: 1, to: 2 }).map((g) => [g.caller, g.op, g.calls])).toEqual([
      [NO_WORKER, 'GetItem', 2],
      ['SubscriptionSync', 'TransactWriteItems', 1],
    ]);
    expect(summarizeCalls([])).toEqual([]);
  });

  it('reads a log file and prints a table', () => {
    const text = `${JSON.stringify(line(1, 'Query', 5, { caller: 'WebhookFanout' }))}\n\n${JSON.stringify(line(2, 'Query', 7, { caller: 'WebhookFanout' }))}\n`;
    const table = callTable(summarizeCalls(parseCallLog(text)));
    expect(table.split('\n')).toEqual([
      '| Caller | Operation | Calls | Items written | Mean ms | p50 ms | p90 ms |',
      '|---|---|---:|---:|---:|---:|---:|',
      '| WebhookFanout | Query | 2 |  | 6 | 7 | 7 |',
    ]);
  });
});
