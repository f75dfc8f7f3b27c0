// The reads of one SQS batch's records, made together before they run: one BatchGet of every key the records
// will read first, instead of one read per record (the webhook-delivery, member-emails and fraud-screen
// workers; docs/data-model.md "Provider events: calls per path"). The delivery and email workers start all
// their records at once, so the batch's snapshot is as fresh as each record's own read would be, and every
// write after it keeps its own condition. The fraud screenings (5 at a time) read facts from it, not state
// they write against: a finding is recorded once whatever the snapshot (flows/fraud-flags.ts).
// A prefetch that fails costs nothing but the call: each record then reads on its own, as before.
import { errorFields, log } from '../log';
import { batchGet, getItem, keyString, lookup } from './ops';
import type { Key } from './table';

export interface Prefetched {
  /** Every key read (an absent item is known absent only if its key was read). */
  read: Set<string>;
  found: Map<string, Record<string, unknown>>;
}

/** One BatchGet (chunks of 100, in parallel) of the batch's keys; undefined when there are none or it failed. */
export async function prefetch(wanted: Key[]): Promise<Prefetched | undefined> {
  if (wanted.length === 0) return undefined;
  try {
    return { read: new Set(wanted.map(keyString)), found: await batchGet(wanted) };
  } catch (err) {
    log('warn', "the batch's prefetch failed; each record reads on its own", errorFields(err));
    return undefined;
  }
}

/** `batchGet(wanted)`, answered from the batch's prefetch when it read every one of them. */
export function batchGetVia(pre: Prefetched | undefined, wanted: Key[]): Promise<Map<string, Record<string, unknown>>> {
  if (pre && wanted.every((k) => pre.read.has(keyString(k)))) return Promise.resolve(pre.found);
  return batchGet(wanted);
}

/** One item, from the batch's prefetch when it read that key, else its own (consistent) GetItem. */
export function getItemVia(pre: Prefetched | undefined, key: Key): Promise<Record<string, unknown> | undefined> {
  if (pre?.read.has(keyString(key))) return Promise.resolve(lookup(pre.found, key));
  return getItem(key);
}

/** The records' parsed bodies (those that do not parse are left out: the worker fails them on its own). */
export function parsedBodies<M>(records: readonly { body: string }[]): M[] {
  const out: M[] = [];
  for (const r of records) {
    try {
      out.push(JSON.parse(r.body) as M);
    } catch {
      // not JSON: sqsWorker fails that record alone
    }
  }
  return out;
}
