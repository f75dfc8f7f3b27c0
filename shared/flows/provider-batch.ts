// The subscription-sync worker's batch path: the provider webhooks of one SQS batch applied together
// (docs/webhooks.md "Provider events in batches"). Per account (and provider kind):
// - PARSE every message through the account's adapter (read once per batch), concurrently, then PREPARE
//   every fact (the provider re-reads an event whose time cannot order it), concurrently;
// - LOAD: ONE BatchGet of every subscription, marker, payment and refund the facts name;
// - PLAN each fact in order with the store's pure planner (store/subscriptions.ts planProviderUpdate),
//   each on the state the facts before it leave, in waves: facts of distinct subscriptions share a wave;
//   a second fact of one subscription is folded into the first one's transaction when both are plain
//   (applyWave), else it waits for the next wave;
// - RECORD one TransactWriteItems per wave: every fact's items, counters aggregated per name and report
//   buckets per key (a transaction never holds two writes of one key), split at 100 items;
// - ACT: the follow-ups (payer ids, attribution from hints, reward evaluations, the latter sent together).
// Correctness never depends on this path: the facts whose conditions fail (a concurrent duplicate, a
// version race; with the facts folded with them) and any fact that needs more than the planner knows (a
// hint for a subscription not stored yet) go through the per-event path (flows/subscription-sync.ts applyPreparedEvent), which re-reads and
// applies each on its own. A record fails (and is redelivered alone) when any of its facts could not be
// applied or followed up; an applied fact's marker makes its redelivery write nothing.
// An untied subscription whose event names no referral and no coupon gets its unattributed sighting in
// the same transaction (the per-event path writes it after the commit), and its marker says so
// (`sighted`): a redelivery then has nothing left to do.
import { webhookProviderFor, type CachedWebhookProvider, type WebhookProvider } from '../billing/adapters';
import type { BillingEvent } from '../billing/port';
import { isProviderKind, type ProviderKind } from '../billing/registry';
import { log } from '../log';
import { publishAll } from '../queue/publish';
import type { ProviderEventMessage, ProviderWebhookMessage } from '../queue/queues';
import { PoisonMessageError, type BatchEntry } from '../queue/worker';
import { batchGet, ConditionsFailedError, counterUpdate, lookup, transact, type TransactItem } from '../store/ops';
import { forgetProviderConnection, sameSettingsItem } from '../store/provider';
import { ReportDeltas } from '../store/reports';
import {
  planProviderUpdate,
  providerUpdateKeys,
  toSubscription,
  type ProviderPlan,
  type ProviderUpdateResult,
} from '../store/subscriptions';
import { endpointCounterKey, nobodySubscribes, nobodySubscribesCheck } from '../store/endpoint-counts';
import { keys, type CounterName, type Key } from '../store/table';
import { SCREENED_EVENT_TYPES } from '../webhooks/fanout';
import { unattributedUpdate } from '../store/unattributed';
import { NO_HINT_DETAIL } from './attribution';
import { followPayers } from './payer-ids';
import {
  afterUpdate,
  applyPreparedEvent,
  completeFields,
  followUpOf,
  prepareEvent,
  processSyncPage,
  recordLag,
  updateOf,
  webhookOfAlert,
  type PreparedEvent,
} from './subscription-sync';

/** TransactWriteItems' limit. */
const MAX_TRANSACTION_ITEMS = 100;

/** Test hooks (the forced-conflict test writes between the load and the record). Never set in production. */
export const providerBatchHooks: { beforeRecord?: (accountId: string) => Promise<void> } = {};

/** The key of an item in the map batchGet answers (store/ops.ts lookup reads it the same way). */
const keyString = (k: Key) => `${k.pk}\u0000${k.sk}`;

interface Job {
  recordId: string;
  e: PreparedEvent;
  /** The keys its plan reads (and writes, but for counters, report buckets and the referral snapshot). */
  reads: Key[];
  plan?: ProviderPlan;
  /** Its unattributed sighting rides in its transaction. */
  sighted?: boolean;
  /** Transactions it was in that another fact's failed condition cancelled. */
  retries?: number;
}

/** What one account's part of a batch did (the batch's one log line). */
interface Tally {
  records: number;
  events: number;
  applied: number;
  duplicates: number;
  ignored: Record<string, number>;
  fallbacks: number;
  waves: number;
  transactions: number;
  failed: number;
}

/**
 * Every record of a `provider-events` batch: provider webhooks (and legacy Paddle Classic alerts) through
 * the batch path, per account; sync pages as before, each on its own. Answers the records that failed.
 */
export async function processProviderEventBatch(entries: BatchEntry<ProviderEventMessage>[]): Promise<Map<string, unknown>> {
  const failed = new Map<string, unknown>();
  const groups = new Map<string, { accountId: string; kind: ProviderKind; entries: { id: string; message: ProviderWebhookMessage }[] }>();
  const others: BatchEntry<ProviderEventMessage>[] = [];
  for (const entry of entries) {
    const m = entry.message;
    if (m?.kind !== 'provider-webhook' && m?.kind !== 'paddle-alert') {
      others.push(entry);
      continue;
    }
    const message = m.kind === 'paddle-alert' ? webhookOfAlert(m) : m;
    if (!isProviderKind(message.provider)) {
      failed.set(entry.record.messageId, new PoisonMessageError(`Unknown provider ${String(message.provider)}`));
      continue;
    }
    const group = `${message.account_id}\u0000${message.provider}`;
    const list = groups.get(group) ?? { accountId: message.account_id, kind: message.provider, entries: [] };
    list.entries.push({ id: entry.record.messageId, message });
    groups.set(group, list);
  }
  await Promise.all([
    ...[...groups.values()].map((g) => applyAccountBatch(g.accountId, g.kind, g.entries, failed)),
    ...others.map(async (entry) => {
      try {
        const m = entry.message;
        if (m?.kind === 'sync-account') await processSyncPage(m);
        else throw new PoisonMessageError(`Unknown message kind ${String((m as { kind?: unknown } | null)?.kind)}`);
      } catch (err) {
        failed.set(entry.record.messageId, err);
      }
    }),
  ]);
  return failed;
}

async function applyAccountBatch(
  accountId: string,
  kind: ProviderKind,
  entries: { id: string; message: ProviderWebhookMessage }[],
  failed: Map<string, unknown>,
  /** 1 when the connection's check in LOAD failed once already (the batch then trusts its fresh read). */
  restarts = 0,
): Promise<void> {
  const fail = (recordId: string, err: unknown) => {
    if (!failed.has(recordId)) failed.set(recordId, err);
  };
  const tally: Tally = {
    records: entries.length,
    events: 0,
    applied: 0,
    duplicates: 0,
    ignored: {},
    fallbacks: 0,
    waves: 0,
    transactions: 0,
    failed: 0,
  };
  let provider: CachedWebhookProvider | null;
  try {
    provider = await webhookProviderFor(accountId, kind, { cachedConnection: true });
  } catch (err) {
    for (const e of entries) fail(e.id, err);
    return;
  }
  if (!provider) {
    // Verified when it arrived, but the account is no longer connected to that provider: nothing to apply to.
    log('warn', 'provider events dropped: the account is not connected to this provider any more', {
      account_id: accountId,
      provider: kind,
      records: entries.length,
    });
    return;
  }
  const p = provider;

  // PARSE, then PREPARE: the adapter's and the provider's calls, concurrently. The parses start together,
  // so an adapter may learn from the whole batch what one event would otherwise look up (the Stripe
  // adapter's parseWebhook: a customer's email from the invoice beside its subscription event).
  const parsed = await Promise.all(
    entries.map(async (entry) => {
      try {
        return await p.parseWebhook({ headers: entry.message.headers, rawBody: entry.message.raw_body });
      } catch (err) {
        // Perhaps a connection changed since it was cached (a key rotated): the redelivery reads it again.
        forgetProviderConnection(accountId);
        fail(entry.id, err);
        return [] as BillingEvent[];
      }
    }),
  );
  const facts: { recordId: string; event: Extract<BillingEvent, { kind: 'subscription' }>; index: number }[] = [];
  parsed.forEach((events, i) => {
    const recordId = (entries[i] as { id: string }).id;
    events.forEach((event, index) => {
      if (event.kind === 'ignored') tally.ignored[event.type || event.reason] = (tally.ignored[event.type || event.reason] ?? 0) + 1;
      else facts.push({ recordId, event, index });
    });
  });
  tally.events = facts.length;
  const prepared = await Promise.all(
    facts.map(async (f) => {
      try {
        return await prepareEvent(accountId, p, f.event, f.index);
      } catch (err) {
        forgetProviderConnection(accountId);
        fail(f.recordId, err);
        return null;
      }
    }),
  );
  let pending: Job[] = [];
  prepared.forEach((e, i) => {
    if (!e) return;
    const recordId = (facts[i] as { recordId: string }).recordId;
    pending.push({ recordId, e, reads: providerUpdateKeys(accountId, updateOf(p, e, {})) });
  });

  // Evaluations to queue (one send for the batch), with the records waiting for them.
  const evaluations = new Map<string, Set<string>>();
  // Keys whose loaded state may be stale (a per-event fallback or a conversion wrote them): read again.
  const dirty = new Set<string>();
  // Keys of a fact that failed: later facts of them fail too (their order is kept by the redelivery).
  const broken = new Map<string, unknown>();
  const failJob = (job: Job, err: unknown) => {
    fail(job.recordId, err);
    tally.failed++;
    for (const k of job.reads) broken.set(keyString(k), err);
  };

  // LOAD: one BatchGet for the whole batch, with the account's webhook endpoints' counter item (withoutOutbox)
  // and, when the connection came from the container's cache, its settings item: the same item as cached, or
  // the batch starts over on a fresh read of the connection, which it caches (nothing was written yet: the
  // parses only read). Once: a second change meanwhile is the race every read of a connection has.
  const settingsKey = keys.providerSettings(accountId);
  const checked = p.connectionSettings;
  let found: Map<string, Record<string, unknown>> = new Map();
  let loaded = false;
  try {
    if (pending.length > 0) {
      found = await batchGet([...pending.flatMap((j) => j.reads), endpointCounterKey(accountId), ...(checked ? [settingsKey] : [])]);
      loaded = true;
    }
  } catch (err) {
    for (const job of pending) failJob(job, err);
    pending = [];
    found = new Map();
  }
  if (checked && loaded && restarts === 0 && !sameSettingsItem(checked, lookup(found, settingsKey))) {
    forgetProviderConnection(accountId);
    for (const e of entries) failed.delete(e.id);
    return applyAccountBatch(accountId, kind, entries, failed, restarts + 1);
  }

  while (pending.length > 0) {
    // The wave: facts whose keys no earlier fact put off to a later wave holds (a fact of a subscription
    // already in the wave may be folded with it: applyWave decides, or puts it off).
    const wave: Job[] = [];
    const rest: Job[] = [];
    const held = new Set<string>();
    for (const job of pending) {
      const ks = job.reads.map(keyString);
      const stop = ks.map((k) => broken.get(k)).find((err) => err !== undefined);
      if (stop !== undefined) {
        failJob(job, stop);
        continue;
      }
      if (ks.some((k) => held.has(k))) {
        rest.push(job);
        for (const k of ks) held.add(k);
      } else wave.push(job);
    }
    if (wave.length === 0) break;
    tally.waves++;
    const next = await applyWave(accountId, p, wave, { found, dirty, evaluations, tally, failJob });
    pending = [...next, ...rest].sort((a, b) => pendingOrder(a, b, pending));
  }

  // The evaluations, in one SendMessageBatch per 10 (the reward worker is idempotent).
  if (evaluations.size > 0) {
    try {
      await publishAll(
        'rewards',
        [...evaluations.keys()].map((referralId) => ({
          kind: 'evaluate-referral' as const,
          account_id: accountId,
          referral_id: referralId,
        })),
      );
    } catch (err) {
      for (const ids of evaluations.values()) for (const id of ids) fail(id, err);
    }
  }
  for (const e of entries) if (!failed.has(e.id)) recordLag(p.kind, e.message.received_at);
  log('info', 'provider events applied', { account_id: accountId, provider: p.kind, ...tally });
}

/** Keeps the batch's order among the facts still pending. */
function pendingOrder(a: Job, b: Job, before: Job[]): number {
  return before.indexOf(a) - before.indexOf(b);
}

interface WaveContext {
  found: Map<string, Record<string, unknown>>;
  dirty: Set<string>;
  evaluations: Map<string, Set<string>>;
  tally: Tally;
  failJob: (job: Job, err: unknown) => void;
}

/** Plans, records and follows up one wave; answers the facts put off to the next wave. */
async function applyWave(accountId: string, provider: WebhookProvider, wave: Job[], ctx: WaveContext): Promise<Job[]> {
  const { found, dirty, tally, failJob } = ctx;
  // State a fallback or a conversion may have changed is read again (one BatchGet, only then).
  const stale = wave.flatMap((j) => j.reads).filter((k) => dirty.has(keyString(k)));
  if (stale.length > 0) {
    try {
      const fresh = await batchGet(stale);
      for (const k of stale) {
        const item = lookup(fresh, k);
        if (item) found.set(keyString(k), item);
        else found.delete(keyString(k));
        dirty.delete(keyString(k));
      }
    } catch (err) {
      for (const job of wave) failJob(job, err);
      return [];
    }
  }

  // PLAN, in order, on the state the facts before leave. A fact of a subscription an earlier fact of the
  // wave writes is FOLDED into that fact's transaction when both are plain (no referral tie, no hint: their
  // follow-ups change nothing a plan reads) and they share only the subscription and its sighting: its
  // write, a whole new version conditioned on the table's state, replaces the earlier one's, so the
  // transaction stores what the two would have stored one after the other (each its marker), but for the
  // version in between, which the table never holds: one `subscription.updated` event, of the version
  // stored. Any other overlap waits for the next wave.
  const duplicates: Job[] = [];
  const alone: Job[] = [];
  const later: Job[] = [];
  // Item key -> the fact whose item writes it; read key -> the fact holding it (null: one put off or failed).
  const written = new Map<string, Job>();
  const held = new Map<string, Job | null>();
  const overlay = new Map(found);
  const chunkOf = new Map<Job, Job[]>();
  const chunks: Job[][] = [];
  let chunk: Job[] = [];
  for (const job of wave) {
    const ks = job.reads.map(keyString);
    const release = () => {
      for (const k of ks) held.set(k, null);
    };
    const defer = () => {
      job.plan = undefined;
      later.push(job);
      release();
    };
    const holders = ks.filter((k) => held.has(k)).map((k) => held.get(k) as Job | null);
    const folding = holders.length > 0;
    if (folding && holders.some((h) => h === null || !h.sighted || chunkOf.get(h) !== chunk)) {
      defer();
      continue;
    }
    let plan: ProviderPlan;
    try {
      const current = toSubscription(lookup(overlay, keys.subscription(accountId, job.e.facts.id)));
      const fields = await completeFields(accountId, provider, job.e.facts, { current });
      plan = planProviderUpdate(accountId, updateOf(provider, job.e, fields), overlay, folding ? found : undefined);
      job.plan = plan;
    } catch (err) {
      failJob(job, err);
      release();
      continue;
    }
    if (plan.result.duplicate) {
      // A copy of a fact of this transaction is decided with it (it stays a duplicate only if that commits).
      if (folding) {
        chunk.push(job);
        chunkOf.set(job, chunk);
      } else duplicates.push(job);
      continue;
    }
    if (needsProvider(plan.result, job.e, provider)) {
      if (folding) defer();
      else {
        alone.push(job);
        release();
      }
      continue;
    }
    const sighting = sightingOf(accountId, plan.result, job.e);
    if (folding && !sighting) {
      defer();
      continue;
    }
    // Items another fact of the wave writes too: only a fold of the subscription and its sighting.
    const own = [...plan.items, ...(sighting ? [sighting] : [])];
    const shared = own.flatMap((item) => {
      const k = itemKey(item);
      const owner = k === null ? undefined : written.get(k);
      return owner && k !== null ? [{ item, k, owner }] : [];
    });
    const foldable = shared.every(
      ({ item, owner }) =>
        folding && String(owner.e.facts.id) === String(job.e.facts.id) && (item === plan.items[plan.subscriptionItem] || item === sighting),
    );
    if (!foldable) {
      defer();
      continue;
    }
    // Counted with the sighting, which joins the plan's items below (a fold replaces an item, so this may
    // over-count by one, never under-count), and with withoutOutbox's ConditionCheck.
    if (transactionOf(accountId, [...chunk, job]).length + (sighting ? 1 : 0) + 1 > MAX_TRANSACTION_ITEMS) {
      if (folding) {
        defer();
        continue;
      }
      chunks.push(chunk);
      chunk = [];
    }
    let merged = sighting;
    for (const { item, k, owner } of shared) {
      const items = (owner.plan as ProviderPlan).items;
      const at = items.findIndex((i) => itemKey(i) === k);
      const replaced = items[at];
      items.splice(at, 1);
      (owner.plan as ProviderPlan).subscriptionItem = -1;
      if (item === sighting && replaced?.Update && sighting?.Update) merged = foldSighting(replaced, sighting);
      // The version the earlier fact planned is never stored (this one's replaces it): its event goes with
      // it, and this fact's event, of the version stored, carries both facts' changes.
      if (item === plan.items[plan.subscriptionItem]) {
        const event = items.findIndex((i) => i.Put?.Item?.type === 'Event' && i.Put.Item.event_type === 'subscription.updated');
        if (event >= 0) items.splice(event, 1);
      }
    }
    if (merged) {
      plan.items.push(merged);
      const marker = plan.items[0]?.Put?.Item;
      if (marker) marker.sighted = true;
      job.sighted = true;
    }
    chunk.push(job);
    chunkOf.set(job, chunk);
    for (const item of plan.items) {
      const k = itemKey(item);
      if (k !== null) written.set(k, job);
    }
    for (const k of ks) held.set(k, job);
    for (const item of plan.stored) overlay.set(keyString({ pk: String(item.pk), sk: String(item.sk) }), item);
  }
  if (chunk.length > 0) chunks.push(chunk);

  if (providerBatchHooks.beforeRecord && chunks.length > 0) await providerBatchHooks.beforeRecord(accountId);

  // RECORD: one transaction per chunk (one per wave unless it passes 100 items), in parallel.
  const fallback: Job[] = [...alone];
  const committed: Job[] = [];
  await Promise.all(
    chunks.map(async (jobs) => {
      tally.transactions++;
      try {
        await transact(withoutOutbox(accountId, transactionOf(accountId, jobs), found));
        committed.push(...jobs);
        for (const job of jobs)
          for (const item of job.plan?.stored ?? []) found.set(keyString({ pk: String(item.pk), sk: String(item.sk) }), item);
      } catch (err) {
        if (err instanceof ConditionsFailedError) {
          // Nothing was written. The facts whose own condition failed (a concurrent copy, a version race) go
          // through the per-event path; the others are planned again on a fresh read in the next wave (twice
          // at most, then they go the per-event way too).
          const owners = ownersOf(jobs);
          const failedFacts = new Set(owners.filter((job, i): job is Job => job !== null && err.failed(i)));
          // Facts folded together stand or fall together (their order is kept by the per-event path).
          const lostSubscriptions = new Set([...failedFacts].map((job) => String(job.e.facts.id)));
          const lost = new Set(jobs.filter((job) => lostSubscriptions.has(String(job.e.facts.id))));
          for (const job of jobs) {
            job.retries = (job.retries ?? 0) + 1;
            if (lost.size === 0 || lost.has(job) || job.retries > 2) fallback.push(job);
            else {
              for (const k of job.reads) dirty.add(keyString(k));
              job.plan = undefined;
              job.sighted = false;
              later.push(job);
            }
          }
        } else for (const job of jobs) failJob(job, err);
      }
    }),
  );

  // ACT: follow-ups of what committed and of the duplicates; the per-event path for the rest, in order.
  const queueEvaluation = (recordId: string) => async (_accountId: string, referralId: string) => {
    const ids = ctx.evaluations.get(referralId) ?? new Set<string>();
    ids.add(recordId);
    ctx.evaluations.set(referralId, ids);
  };
  // Facts of one subscription follow up one after the other, in order; subscriptions in parallel.
  const bySubscription = new Map<string, Job[]>();
  for (const job of [...committed, ...duplicates].sort((a, b) => wave.indexOf(a) - wave.indexOf(b)))
    bySubscription.set(String(job.e.facts.id), [...(bySubscription.get(String(job.e.facts.id)) ?? []), job]);
  const act = async (job: Job) => {
    const plan = job.plan as ProviderPlan;
    const result = plan.result;
    if (result.duplicate) tally.duplicates++;
    else tally.applied++;
    // A duplicate whose first delivery wrote its sighting with its marker has nothing to redo there.
    const sighted =
      job.sighted ||
      (result.duplicate && !result.referralId && noHint(job.e) && lookup(ctx.found, keys.alert(accountId, job.e.marker))?.sighted === true);
    try {
      if (sighted) await followPayers(accountId, result, result.duplicate);
      else {
        // Attribution from hints may convert (it writes the subscription): read it again before a next wave.
        if (!result.referralId) dirty.add(keyString(keys.subscription(accountId, job.e.facts.id)));
        await afterUpdate(accountId, provider, result, followUpOf(job.e), queueEvaluation(job.recordId));
      }
    } catch (err) {
      failJob(job, err);
    }
  };
  await Promise.all(
    [...bySubscription.values()].map(async (jobs) => {
      for (const job of jobs) await act(job);
    }),
  );
  fallback.sort((a, b) => wave.indexOf(a) - wave.indexOf(b));
  for (const job of fallback) {
    tally.fallbacks++;
    for (const k of job.reads) dirty.add(keyString(k));
    dirty.add(keyString(keys.subscription(accountId, job.e.facts.id)));
    try {
      await applyPreparedEvent(accountId, provider, job.e, queueEvaluation(job.recordId));
    } catch (err) {
      failJob(job, err);
    }
  }
  return later;
}

/** Whether the event names neither a referral nor a coupon (its attribution can only record a sighting). */
const noHint = (e: PreparedEvent) => !e.hints.referralId && !e.hints.couponCode?.trim();

/**
 * What the follow-up of an untied subscription would need the provider for (an event naming a referral
 * before its subscription is stored): the per-event path does it.
 */
function needsProvider(result: ProviderUpdateResult, e: PreparedEvent, provider: WebhookProvider): boolean {
  return !result.referralId && !result.subscription && !noHint(e) && provider.getSubscription !== undefined;
}

/** The sighting an untied subscription's event that names nothing records (flows/attribution.ts), as a transaction item. */
function sightingOf(accountId: string, result: ProviderUpdateResult, e: PreparedEvent): TransactItem | null {
  const subscription = result.subscription;
  if (result.referralId || !subscription || subscription.referral_id || !noHint(e)) return null;
  const update = unattributedUpdate(accountId, {
    subscriptionId: subscription.id,
    email: subscription.email ?? '',
    reason: 'no_referral_hint',
    detail: NO_HINT_DETAIL,
    eventId: e.marker,
    checkoutId: e.hints.checkoutId,
    status: subscription.status,
    planName: subscription.plan?.name,
  });
  return update ? { Update: update } : null;
}

/**
 * One sighting for two facts of a subscription folded into one transaction, as the two updates would leave
 * it one after the other (both name no referral: the reason, detail and event id are kept when present,
 * so the first's win; the later one's status, plan and time otherwise; optional fields the later one lacks
 * keep the first's).
 */
function foldSighting(first: TransactItem, later: TransactItem): TransactItem {
  const a = first.Update as NonNullable<TransactItem['Update']>;
  const b = later.Update as NonNullable<TransactItem['Update']>;
  const values: Record<string, unknown> = { ...b.ExpressionAttributeValues, ':event': a.ExpressionAttributeValues?.[':event'] };
  let expression = b.UpdateExpression as string;
  for (const name of ['checkout_id', 'coupon_code', 'sub_status', 'plan_name']) {
    const v = a.ExpressionAttributeValues?.[`:${name}`];
    if (v !== undefined && values[`:${name}`] === undefined) {
      values[`:${name}`] = v;
      expression += `, ${name} = :${name}`;
    }
  }
  return { Update: { ...b, UpdateExpression: expression, ExpressionAttributeValues: values } };
}

/** The item one transaction entry writes, as a key string. */
function itemKey(item: TransactItem): string | null {
  const key = (item.Put?.Item ?? item.Update?.Key ?? item.Delete?.Key ?? item.ConditionCheck?.Key) as Key | undefined;
  return key ? keyString({ pk: String(key.pk), sk: String(key.sk) }) : null;
}

/** The fact each item of transactionOf(jobs) belongs to (null: a merged counter or report bucket). */
function ownersOf(jobs: Job[]): (Job | null)[] {
  return jobs.flatMap((job) => (job.plan as ProviderPlan).items.map(() => job));
}

/**
 * Events that no webhook endpoint of the account can want (it has none, or none of its endpoints subscribes
 * to their type: store/endpoint-counts.ts nobodySubscribes, from the endpoints' counter item read in the load) are
 * written already dispatched: no outbox entry, so nothing is queued for the fan-out, which would find no
 * endpoint for them and mark each one dispatched. Types that fraud screening reads keep their entry. One
 * ConditionCheck keeps it true at the commit: an endpoint created, or updated to want one of those types,
 * meanwhile cancels the transaction, and its facts go the per-event way, which queues every event. The
 * events stay readable as always (the event log).
 */
function withoutOutbox(accountId: string, items: TransactItem[], found: Map<string, Record<string, unknown>>): TransactItem[] {
  const counter = lookup(found, endpointCounterKey(accountId));
  const stripped = new Set<string>();
  const out = items.map((item) => {
    const event = item.Put?.Item;
    if (event?.type !== 'Event' || event.gsi2pk === undefined) return item;
    const type = String(event.event_type);
    if (SCREENED_EVENT_TYPES.includes(type) || !nobodySubscribes(counter, type)) return item;
    stripped.add(type);
    const { gsi2pk: _pk, gsi2sk: _sk, ...rest } = event;
    return { Put: { ...item.Put, Item: { ...rest, dispatched_at: Date.now() } } } as TransactItem;
  });
  if (stripped.size === 0) return items;
  out.push(nobodySubscribesCheck(accountId, [...stripped]));
  return out;
}

/** One transaction for several plans: their items, then counters merged per name and report buckets per key. */
function transactionOf(accountId: string, jobs: Job[]): TransactItem[] {
  const counters = new Map<CounterName, number>();
  const report = new ReportDeltas(accountId);
  const items: TransactItem[] = [];
  for (const job of jobs) {
    const plan = job.plan as ProviderPlan;
    items.push(...plan.items);
    for (const [name, delta] of plan.counters) counters.set(name, (counters.get(name) ?? 0) + delta);
    for (const add of plan.reports) report.add(...add);
  }
  for (const [name, delta] of counters) if (delta !== 0) items.push(counterUpdate(accountId, name, delta));
  items.push(...report.items());
  return items;
}
