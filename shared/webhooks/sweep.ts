// The webhook sweep (scheduled every minute): the healing path of the outbox and the retry clock of
// deliveries. It reads two sparse GSI2 partitions per shard, never a Scan:
// - `OUTBOX#<shard>`: events committed more than GRACE_MS ago and still not dispatched (their hand-off
//   after the commit did not happen) -> `webhook-events`;
// - `WEBHOOK_DUE#<shard>`: deliveries whose next attempt is due (retries, lapsed leases) -> `webhook-deliveries`;
// - `WEBHOOK_PURGE#<shard>`: deleted endpoints whose deliveries are still stored -> `webhook-events` (purge).
// Entries leave the partitions when the fan-out dispatched the event / an attempt recorded its outcome,
// so a message sent twice is harmless (both workers are idempotent).
import { clock } from '../domain/clock';
import { publishAll } from '../queue/publish';
import { undispatchedEvents } from '../store/outbox';
import { SWEEP_SHARDS } from '../store/table';
import { dueDeliveries, pendingPurges } from '../store/webhooks';

/** An event younger than this is probably being dispatched right now. */
export const GRACE_MS = 30_000;
/** Entries handed over per shard and run; a larger backlog continues at the next run. */
const PER_SHARD = 1000;

async function eachShard(fn: (shard: number) => Promise<number>): Promise<number> {
  const counts = await Promise.all(Array.from({ length: SWEEP_SHARDS }, (_, shard) => fn(shard)));
  return counts.reduce((a, b) => a + b, 0);
}

/** `sinceMs` limits the sweep to events committed since then (re-driving a window; the schedule sweeps all). */
export async function sweepOutbox(nowMs = clock.now(), sinceMs = 0): Promise<number> {
  return eachShard(async (shard) => {
    const pending = await undispatchedEvents(shard, nowMs - GRACE_MS, PER_SHARD, sinceMs);
    if (pending.length > 0) await publishAll('webhook-events', pending);
    return pending.length;
  });
}

export async function sweepDeliveries(nowMs = clock.now()): Promise<number> {
  return eachShard(async (shard) => {
    const due = await dueDeliveries(shard, nowMs, PER_SHARD);
    if (due.length > 0)
      await publishAll(
        'webhook-deliveries',
        due.map((d) => ({ kind: 'deliver' as const, ...d })),
      );
    return due.length;
  });
}

/** Deleted endpoints with deliveries left: one purge message each (the worker removes a page per message). */
export async function sweepPurges(nowMs = clock.now()): Promise<number> {
  return eachShard(async (shard) => {
    const purges = await pendingPurges(shard, nowMs);
    if (purges.length > 0)
      await publishAll(
        'webhook-events',
        purges.map((p) => ({ kind: 'purge-endpoint' as const, ...p })),
      );
    return purges.length;
  });
}

export async function sweep(nowMs = clock.now()): Promise<{ events: number; deliveries: number; purges: number }> {
  const [events, deliveries, purges] = await Promise.all([sweepOutbox(nowMs), sweepDeliveries(nowMs), sweepPurges(nowMs)]);
  return { events, deliveries, purges };
}
