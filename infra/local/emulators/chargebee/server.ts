// Chargebee emulator for `npm start` and the tests: the /api/v2 calls Refloop makes, in Chargebee's wire
// format, over the ledger (./ledger.ts), and webhooks POSTed with HTTP Basic credentials, one at a time in
// order. Tests drive the money side through the returned handle; the `chargebee` CLI (infra/chargebee.ts)
// drives the same simulations through the /_emulator/ control endpoints (no credentials, loopback only).
// The official `chargebee` package, pointed at it with protocol/hostSuffix/port, reads and writes it
// (test/integration/chargebee-emulator.test.ts).
//
// The wire: `Authorization: Basic base64(<api key>:)` (the key as user name, an empty password) or 401
// api_authentication_failed; POST bodies `application/x-www-form-urlencoded` with bracket keys
// (`subscription_items[item_price_id][0]`, `coupon_ids[0]`, `customer[id]`) and `meta_data` one JSON
// field; answers keyed by resource (`{subscription, customer, card}`), lists `{list: [...], next_offset}`
// (limit 1..100, default 10; opaque offsets; `sort_by[asc|desc]`; `field[op]` filters, `in` taking a JSON
// array); errors `{message, type, api_error_code, param}` plus the legacy `error_code`, `error_msg`,
// `error_param`, `http_status_code`. A POST with a `chargebee-idempotency-key` seen in the last 30 minutes
// (by the emulator's clock) answers the stored success again with `chargebee-idempotency-replayed: true`;
// the same key with other parameters is refused (400 param_wrong_value, an emulator choice). Faults for
// tests: `failNext` answers the next API calls with a 429 or 5xx before doing anything; `failAfterApply`
// does the next POSTs and then answers a 5xx (a lost response); webhook faults: duplicates, each batch in
// reverse order, no Authorization header; `retryDelaysMs`, Chargebee's retry schedule compressed.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CbCreditNote,
  type CbCustomer,
  type CbEvent,
  type CbHostedPage,
  type CbInvoice,
  type CbPromotionalCredit,
  type CbSubscription,
  type CbTransaction,
  ChargebeeError,
  type CheckoutInput,
  Ledger,
  type LedgerOptions,
  only,
  type Params,
  str,
} from './ledger';

export * from './ledger';

export interface ChargebeeEmulatorOptions {
  /** Default 0 = a free port; listens on 127.0.0.1. */
  port?: number;
  /** Default `test_` + random. */
  apiKey?: string;
  /** The site name (`<site>.chargebee.com` on the real service); default `refloop-emulator-test`. */
  site?: string;
  /** The webhook's Basic credentials; default `refloop` and a random password. */
  webhookUsername?: string;
  webhookPassword?: string;
  /** Where events are POSTed; null = built and recorded, not delivered. */
  webhookUrl?: string | null;
  /** The clock, unix ms (events, resource_version, the idempotency window); default Date.now. */
  now?: LedgerOptions['now'];
  /**
   * Chargebee's retries, compressed: a delivery the target did not answer 2xx (or did not answer) is POSTed
   * again after each of these delays in turn (Chargebee waits 2 min, 6 min, 30 min, 1 h, 5 h, 1 d, 2 d).
   * Default none: a failed delivery is only recorded.
   */
  retryDelaysMs?: number[];
}

export interface Delivery {
  event: CbEvent;
  /** The exact body POSTed. */
  rawBody: string;
  headers: { 'content-type': string; authorization?: string };
  /** The target's HTTP status; null when not delivered (no URL, `deliver: false`, or the target is down). */
  status: number | null;
  /** 0 for the first POST of an event, then 1, 2… for its retries (retryDelaysMs) and redeliveries. */
  attempt: number;
}

export interface DeliveryFaults {
  /** Every event is POSTed twice. */
  duplicates?: boolean;
  /** The events of one change (a checkout, a refund…) are POSTed last first. */
  outOfOrder?: boolean;
  /** No Authorization header (Chargebee's "no auth" webhook). */
  noAuth?: boolean;
}

type Deliver = { deliver?: boolean };
type Deliveries = { deliveries: Delivery[] };

export interface ChargebeeEmulator {
  /** http://127.0.0.1:<port>: what a connection's `apiUrl` gets (calls go to `<url>/api/v2/...`). */
  url: string;
  port: number;
  apiKey: string;
  site: string;
  webhookUsername: string;
  webhookPassword: string;
  ledger: Ledger;
  stop(): Promise<void>;
  setWebhookUrl(url: string | null): void;
  /** The next `count` API calls answer `status` before doing anything (429 with `Retry-After`, default 1 s). */
  failNext(count: number, status: 429 | 500 | 503, retryAfterSeconds?: number): void;
  /** The next `count` API POSTs are applied, then answered `status` (the response is lost). */
  failAfterApply(count: number, status: 500 | 503): void;
  /** Webhook faults from now on (each flag replaces the previous one; {} = none). */
  setDeliveryFaults(faults: DeliveryFaults): void;
  /** Every delivery built so far, in order (duplicates included). */
  deliveries(): Delivery[];
  /** POSTs an event already built again, as Chargebee's retries and manual resends do. */
  redeliver(eventId: string): Promise<Delivery>;
  /**
   * One authenticated API call (the key as Basic user), form-encoded like the official package: for tests
   * that play the app (`request('POST', '/api/v2/customers', {id: 'u1', email: 'u1@example.com'})`).
   */
  request(
    method: 'GET' | 'POST',
    path: string,
    params?: Record<string, string | number | boolean>,
  ): Promise<{ status: number; body: unknown }>;
  /** API calls received, by `METHOD /api/v2/path` with ids replaced by `{id}`. */
  callCounts(): Record<string, number>;
  /** The chargebee-idempotency-key of every API POST so far (undefined when absent). */
  idempotencyKeysSeen(): (string | undefined)[];
  /**
   * A customer checks out: the app's customer write first when a referral id is given (customer-cf:
   * `cf_refloop_referral_id`, customer-meta: `meta_data.refloop_referral_id`; subscription-cf puts the field
   * on the subscription), then a hosted page (checkout_new_for_items) completed at once.
   */
  checkout(input: CheckoutInput & Deliver): Promise<
    {
      hostedPage: CbHostedPage;
      customer: CbCustomer;
      subscription: CbSubscription;
      invoice: CbInvoice | null;
      transaction: CbTransaction | null;
    } & Deliveries
  >;
  /** Completes a hosted page opened through the API (state created -> succeeded). */
  completeCheckout(
    hostedPageId: string,
    o?: { email?: string; taxRate?: number; trialDays?: number } & Deliver,
  ): Promise<
    {
      hostedPage: CbHostedPage;
      customer: CbCustomer;
      subscription: CbSubscription;
      invoice: CbInvoice | null;
      transaction: CbTransaction | null;
    } & Deliveries
  >;
  /** The next term: a paid invoice (or a failed payment with `fail`), promotional credits consumed before tax. */
  renew(
    subscriptionId: string,
    o?: { fail?: boolean } & Deliver,
  ): Promise<{ subscription: CbSubscription; invoice: CbInvoice; transaction: CbTransaction | null; creditsUsed: number } & Deliveries>;
  /** A refund of a paid invoice (default: all that is left): credit note + refund transaction. */
  refund(
    invoiceId: string,
    o?: { amount?: number; pending?: boolean } & Deliver,
  ): Promise<{ creditNote: CbCreditNote; transaction: CbTransaction; invoice: CbInvoice } & Deliveries>;
  /** A pending refund (`refund(…, {pending: true})`) succeeds: payment_refunded, the note refunded. */
  settleRefund(
    creditNoteId: string,
    o?: Deliver,
  ): Promise<{ creditNote: CbCreditNote; transaction: CbTransaction; invoice: CbInvoice } & Deliveries>;
  /** The assumed chargeback: credit_note_created (reason_code chargeback), then payment_refunded, for all that is left. */
  dispute(
    invoiceId: string,
    o?: Deliver,
  ): Promise<{ creditNote: CbCreditNote; transaction: CbTransaction; invoice: CbInvoice } & Deliveries>;
  cancel(subscriptionId: string, o?: Deliver): Promise<{ subscription: CbSubscription } & Deliveries>;
  pause(subscriptionId: string, o?: Deliver): Promise<{ subscription: CbSubscription } & Deliveries>;
  resume(subscriptionId: string, o?: Deliver): Promise<{ subscription: CbSubscription } & Deliveries>;
  reactivate(subscriptionId: string, o?: Deliver): Promise<{ subscription: CbSubscription } & Deliveries>;
  /** The customer's promotional credits balance in a currency. */
  balanceOf(customerId: string, currency: string): number;
  /** The promotional credit records (add and deduct), oldest first; of one customer when given. */
  promotionalCredits(customerId?: string): CbPromotionalCredit[];
}

const DELIVERY_TIMEOUT_MS = 5_000;
const MAX_BODY_BYTES = 256 * 1024;
const IDEMPOTENCY_WINDOW_MS = 30 * 60 * 1000;

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json;charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
};

const errorBody = (e: ChargebeeError) => ({
  message: e.message,
  ...(e.type ? { type: e.type } : {}),
  api_error_code: e.apiErrorCode,
  ...(e.param ? { param: e.param, error_param: e.param } : {}),
  error_code: e.apiErrorCode,
  error_msg: e.message,
  http_status_code: e.status,
});

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ChargebeeError(400, 'param_wrong_value', 'The request body is too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `a[b][0]=x&c=y` -> {a: {b: {0: 'x'}}, c: 'y'}; a key given twice, or as both a value and an object, is refused. */
export function decodeParams(encoded: string): Params {
  const out: Params = {};
  for (const [key, value] of new URLSearchParams(encoded)) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    if (!m) throw new ChargebeeError(400, 'param_wrong_value', `${key} : invalid parameter name`, key);
    const path = [m[1] as string, ...[...(m[2] as string).matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1] as string)];
    let node: Params = out;
    for (let i = 0; i < path.length - 1; i++) {
      const k = path[i] as string;
      const next = node[k];
      if (typeof next === 'string') throw new ChargebeeError(400, 'param_wrong_value', `${key} : conflicts with another parameter`, key);
      node = next ?? (node[k] = {});
    }
    const last = path[path.length - 1] as string;
    if (node[last] !== undefined) throw new ChargebeeError(400, 'param_wrong_value', `${key} : given twice`, key);
    node[last] = value;
  }
  return out;
}

/** The API key of `Authorization: Basic base64(<key>:)`; null when absent, another scheme, or a password is given. */
export function apiKeyOf(header: string | undefined): string | null {
  const m = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header ?? '');
  if (!m) return null;
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon !== decoded.length - 1) return null;
  return decoded.slice(0, colon);
}

// --- lists ------------------------------------------------------------------------------------------------

type Getter<T> = (row: T) => unknown;
interface ListSpec<T> {
  /** The filterable fields: `field[op]=value`. */
  filters: Record<string, Getter<T>>;
  /** Sortable fields (sort_by[asc|desc]=<field>) and their sort value. */
  sorts: Record<string, (row: T) => number>;
  /** The default order. */
  defaultSort: [string, 'asc' | 'desc'];
  /** Other parameters the list takes (booleans like include_deleted). */
  extra?: string[];
  /** Hidden unless include_deleted=true. */
  deleted?: (row: T) => boolean;
}

const bad = (param: string, message: string) => new ChargebeeError(400, 'param_wrong_value', `${param} : ${message}`, param);

function matches(actual: unknown, op: string, raw: string, param: string): boolean {
  const asNumber = (v: string) => {
    if (!/^-?\d+$/.test(v)) throw bad(param, 'invalid number');
    return Number(v);
  };
  const asList = (v: string): string[] => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      throw bad(param, 'must be a JSON array, e.g. ["active","in_trial"]');
    }
    if (!Array.isArray(parsed)) throw bad(param, 'must be a JSON array, e.g. ["active","in_trial"]');
    return parsed.map(String);
  };
  const a = actual === undefined || actual === null ? undefined : String(actual);
  switch (op) {
    case 'is':
      return a === raw;
    case 'is_not':
      return a !== raw;
    case 'in':
      return a !== undefined && asList(raw).includes(a);
    case 'not_in':
      return a === undefined || !asList(raw).includes(a);
    case 'starts_with':
      return a?.startsWith(raw) ?? false;
    case 'is_present':
      return (a !== undefined) === (raw === 'true');
    case 'after':
      return typeof actual === 'number' && actual > asNumber(raw);
    case 'before':
      return typeof actual === 'number' && actual < asNumber(raw);
    case 'on':
      return typeof actual === 'number' && actual === asNumber(raw);
    case 'between': {
      const [lo, hi] = asList(raw).map(asNumber);
      if (lo === undefined || hi === undefined) throw bad(param, 'must be [from, to]');
      return typeof actual === 'number' && actual >= lo && actual <= hi;
    }
    default:
      throw bad(param, `unknown operator ${op}`);
  }
}

/** Refuses a filter value its operator cannot read (checked before any row, so an empty list still answers 400). */
function checkFilter(op: string, raw: string, param: string): void {
  matches(op === 'after' || op === 'before' || op === 'on' || op === 'between' ? 0 : 'x', op, raw, param);
  if (op === 'is_present' && raw !== 'true' && raw !== 'false') throw bad(param, 'must be true or false');
}

/** One page of `rows` (insertion order = creation order) under `params`, each row shown by `show`. */
function listOf<T>(rows: T[], params: Params, spec: ListSpec<T>, show: (row: T) => Record<string, unknown>) {
  only(params, [
    'limit',
    'offset',
    'sort_by',
    ...(spec.extra ?? []),
    ...(spec.deleted ? ['include_deleted'] : []),
    ...Object.keys(spec.filters),
  ]);
  const rawLimit = str(params, 'limit');
  const limit = rawLimit === undefined ? 10 : Number(rawLimit);
  if (!/^\d+$/.test(rawLimit ?? '10') || limit < 1 || limit > 100) throw bad('limit', 'must be an integer from 1 to 100');
  let [sortField, dir] = spec.defaultSort;
  if (params.sort_by !== undefined) {
    const sortBy = params.sort_by;
    const entries = typeof sortBy === 'string' ? [] : Object.entries(sortBy);
    const [d, f] = entries[0] ?? [];
    if (entries.length !== 1 || (d !== 'asc' && d !== 'desc') || typeof f !== 'string' || !spec.sorts[f])
      throw bad('sort_by', `must be sort_by[asc] or sort_by[desc] of ${Object.keys(spec.sorts).join(', ')}`);
    [sortField, dir] = [f, d];
  }
  const includeDeleted = str(params, 'include_deleted');
  if (includeDeleted !== undefined && includeDeleted !== 'true' && includeDeleted !== 'false')
    throw bad('include_deleted', 'must be true or false');
  let indexed = rows.map((row, seq) => ({ row, seq }));
  if (spec.deleted && includeDeleted !== 'true') indexed = indexed.filter((x) => !spec.deleted?.(x.row));
  for (const [field, get] of Object.entries(spec.filters)) {
    const f = params[field];
    if (f === undefined) continue;
    if (typeof f === 'string') throw bad(field, `use ${field}[is]=… (an operator)`);
    for (const [op, raw] of Object.entries(f)) {
      if (typeof raw !== 'string') throw bad(`${field}[${op}]`, 'invalid value');
      checkFilter(op, raw, `${field}[${op}]`);
      indexed = indexed.filter((x) => matches(get(x.row), op, raw, `${field}[${op}]`));
    }
  }
  const sortOf = spec.sorts[sortField] as (row: T) => number;
  const sign = dir === 'asc' ? 1 : -1;
  const keyed = indexed.map((x) => ({ ...x, key: sortOf(x.row) }));
  keyed.sort((a, b) => sign * (a.key - b.key || a.seq - b.seq));
  let start = 0;
  const offset = str(params, 'offset', { max: 1000 });
  if (offset !== undefined) {
    let cursor: unknown;
    try {
      cursor = JSON.parse(Buffer.from(offset, 'base64url').toString('utf8'));
    } catch {
      throw bad('offset', 'invalid offset');
    }
    if (!Array.isArray(cursor) || cursor.length !== 4 || cursor[0] !== sortField || cursor[1] !== dir)
      throw bad('offset', 'invalid offset');
    const [, , key, seq] = cursor as [string, string, number, number];
    start = keyed.findIndex((x) => sign * (x.key - key || x.seq - seq) > 0);
    if (start < 0) start = keyed.length;
  }
  const page = keyed.slice(start, start + limit);
  const last = page[page.length - 1];
  const more = start + limit < keyed.length;
  return {
    list: page.map((x) => show(x.row)),
    ...(more && last ? { next_offset: Buffer.from(JSON.stringify([sortField, dir, last.key, last.seq])).toString('base64url') } : {}),
  };
}

const COLLECTION_ACTIONS = new Set([
  'hosted_pages/checkout_new_for_items',
  'promotional_credits/add',
  'promotional_credits/deduct',
  'coupons/create_for_items',
]);

const updatedAt = (o: { resource_version?: number; updated_at?: number }) => o.resource_version ?? (o.updated_at ?? 0) * 1000;
const createdAt = (o: { created_at?: number }) => o.created_at ?? 0;

export async function startChargebeeEmulator(options: ChargebeeEmulatorOptions = {}): Promise<ChargebeeEmulator> {
  const now = options.now ?? Date.now;
  const ledger = new Ledger({ now, baseUrl: () => handle.url });
  const apiKey = options.apiKey ?? `test_${randomBytes(16).toString('hex')}`;
  const site = options.site ?? 'refloop-emulator-test';
  const webhookUsername = options.webhookUsername ?? 'refloop';
  const webhookPassword = options.webhookPassword ?? randomBytes(24).toString('base64url');
  let webhookUrl = options.webhookUrl ?? null;
  ledger.webhookConfigured = () => webhookUrl !== null;
  let faults: { left: number; status: number; retryAfter: number } = { left: 0, status: 503, retryAfter: 1 };
  let lost: { left: number; status: number } = { left: 0, status: 500 };
  let deliveryFaults: DeliveryFaults = {};
  const counts: Record<string, number> = {};
  const keys: (string | undefined)[] = [];
  const idempotency = new Map<string, { fingerprint: string; status: number; body: unknown; at: number }>();
  const built: Delivery[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  const inFlight = new Set<AbortController>();
  let stopped = false;
  const retryDelays = options.retryDelaysMs ?? [];
  const retryTimers = new Set<NodeJS.Timeout>();

  // --- webhooks -----------------------------------------------------------------------------------------

  const post = async (d: Delivery): Promise<number | null> => {
    const target = webhookUrl;
    if (!target || stopped) return null;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), DELIVERY_TIMEOUT_MS);
    inFlight.add(abort);
    try {
      const res = await fetch(target, {
        method: 'POST',
        headers: { ...d.headers, 'user-agent': 'ChargeBee' },
        body: d.rawBody,
        signal: abort.signal,
      });
      await res.arrayBuffer().catch(() => undefined);
      return res.status;
    } catch {
      return null; // A down target is part of what the emulator is for: reported, never thrown.
    } finally {
      clearTimeout(timer);
      inFlight.delete(abort);
    }
  };

  const enqueue = (prepared: Delivery[]): Promise<Delivery[]> => {
    const run = chain.then(async () => {
      for (const d of prepared) {
        d.status = await post(d);
        // The stored event (GET /events/{id}) tells how its delivery went; the delivered body stays as sent.
        const stored = ledger.events.find((e) => e.id === d.event.id);
        const ok = d.status !== null && d.status >= 200 && d.status < 300;
        const delay = retryDelays[d.attempt];
        if (!ok && delay !== undefined && webhookUrl !== null && !stopped) {
          if (stored) stored.webhook_status = 're_scheduled';
          const timer = setTimeout(() => {
            retryTimers.delete(timer);
            if (stopped) return;
            const again: Delivery = { ...d, headers: { ...d.headers }, status: null, attempt: d.attempt + 1 };
            built.push(again);
            void enqueue([again]);
          }, delay);
          retryTimers.add(timer);
        } else if (stored && d.status !== null) stored.webhook_status = ok ? 'succeeded' : 'failed';
      }
      return prepared;
    });
    chain = run.catch(() => undefined);
    return run;
  };

  const build = (event: CbEvent): Delivery => {
    const authorization = deliveryFaults.noAuth
      ? undefined
      : `Basic ${Buffer.from(`${handle.webhookUsername}:${handle.webhookPassword}`, 'utf8').toString('base64')}`;
    const d: Delivery = {
      event: structuredClone(event),
      rawBody: JSON.stringify(event),
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      status: null,
      attempt: 0,
    };
    built.push(d);
    return d;
  };

  /** Builds the deliveries of one change (faults applied) and, unless deliver is false, POSTs them in order. */
  const deliver = async (events: CbEvent[], doDeliver = true): Promise<Delivery[]> => {
    const ordered = deliveryFaults.outOfOrder ? [...events].reverse() : events;
    const prepared: Delivery[] = [];
    for (const e of ordered) {
      prepared.push(build(e));
      if (deliveryFaults.duplicates) prepared.push(build(e));
    }
    return doDeliver ? enqueue(prepared) : prepared;
  };

  const simulate = async <T extends { events: CbEvent[] }>(out: T, o: Deliver = {}): Promise<Omit<T, 'events'> & Deliveries> => {
    const { events, ...rest } = out;
    const snapshot = structuredClone(rest);
    return { ...snapshot, deliveries: await deliver(events, o.deliver !== false) };
  };

  // --- the API ------------------------------------------------------------------------------------------

  const withCustomer = (s: CbSubscription) => {
    const card = ledger.cardOf(s.customer_id);
    return { subscription: s, customer: ledger.customer(s.customer_id), ...(card ? { card } : {}) };
  };
  const customerAnswer = (c: CbCustomer) => {
    const card = ledger.cardOf(c.id);
    return { customer: c, ...(card ? { card } : {}) };
  };

  /** The answer and the events of one API call. */
  const route = (method: string, parts: string[], p: Params): { body: unknown; events: CbEvent[] } => {
    const ok = (body: unknown, events: CbEvent[] = []) => ({ body: structuredClone(body), events });
    const [a, b, c, d] = parts;
    // `/promotional_credits/add` is an action on the collection; `/customers/u1` an id.
    const collectionAction = b !== undefined && COLLECTION_ACTIONS.has(`${a}/${b}`);
    const key = `${method} ${a ?? ''}${b ? (collectionAction ? ` ${b}` : ' {id}') : ''}${c ? ` ${c}` : ''}${d ? ' {id}' : ''}`;
    switch (key) {
      case 'GET customers':
        return ok(
          listOf(
            [...ledger.customers.values()],
            p,
            {
              filters: { id: (x) => x.id, email: (x) => x.email, created_at: (x) => x.created_at, updated_at: (x) => x.updated_at },
              sorts: { created_at: createdAt, updated_at: updatedAt },
              defaultSort: ['created_at', 'desc'],
              deleted: (x) => x.deleted,
            },
            customerAnswer,
          ),
        );
      case 'GET customers {id}':
        only(p, []);
        return ok(customerAnswer(ledger.customer(b as string)));
      case 'POST customers': {
        const { customer, events } = ledger.createCustomer(p);
        return ok(customerAnswer(customer), events);
      }
      case 'POST customers {id}': {
        const { customer, events } = ledger.updateCustomer(b as string, p);
        return ok(customerAnswer(customer), events);
      }
      case 'GET subscriptions':
        return ok(
          listOf(
            [...ledger.subscriptions.values()],
            p,
            {
              filters: {
                id: (x) => x.id,
                customer_id: (x) => x.customer_id,
                status: (x) => x.status,
                created_at: (x) => x.created_at,
                updated_at: (x) => x.updated_at,
                next_billing_at: (x) => x.next_billing_at,
                cancelled_at: (x) => x.cancelled_at,
                item_id: (x) =>
                  x.subscription_items[0] ? ledger.itemPrices.get(x.subscription_items[0].item_price_id)?.item_id : undefined,
                item_price_id: (x) => x.subscription_items[0]?.item_price_id,
              },
              sorts: { created_at: createdAt, updated_at: updatedAt },
              defaultSort: ['created_at', 'asc'],
              deleted: (x) => x.deleted,
            },
            withCustomer,
          ),
        );
      case 'GET subscriptions {id}':
        only(p, []);
        return ok(withCustomer(ledger.subscription(b as string)));
      case 'POST subscriptions {id} update_for_items': {
        const { subscription, events } = ledger.updateSubscription(b as string, p);
        return ok(withCustomer(subscription), events);
      }
      case 'POST subscriptions {id} cancel_for_items': {
        only(p, ['end_of_term', 'cancel_reason_code']);
        const endOfTerm = str(p, 'end_of_term');
        if (endOfTerm !== undefined && endOfTerm !== 'true' && endOfTerm !== 'false') throw bad('end_of_term', 'must be true or false');
        const { subscription, events } = endOfTerm === 'true' ? ledger.cancelAtTermEnd(b as string) : ledger.cancel(b as string, 'api');
        return ok(withCustomer(subscription), events);
      }
      case 'POST subscriptions {id} delete': {
        only(p, []);
        const { subscription, events } = ledger.deleteSubscription(b as string);
        return ok(withCustomer(subscription), events);
      }
      case 'GET item_prices':
        return ok(
          listOf(
            [...ledger.itemPrices.values()],
            p,
            {
              filters: { id: (x) => x.id, item_id: (x) => x.item_id, currency_code: (x) => x.currency_code, status: (x) => x.status },
              sorts: { name: (x) => x.name.localeCompare(''), id: () => 0, updated_at: updatedAt },
              defaultSort: ['updated_at', 'asc'],
            },
            (x) => ({ item_price: x }),
          ),
        );
      case 'GET item_prices {id}':
        only(p, []);
        return ok({ item_price: ledger.itemPrice(b as string) });
      case 'POST hosted_pages checkout_new_for_items':
        return ok(ledger.openCheckout(p));
      case 'GET hosted_pages {id}':
        only(p, []);
        return ok({ hosted_page: ledger.hostedPage(b as string) });
      case 'GET invoices':
        return ok(
          listOf(
            [...ledger.invoices.values()],
            p,
            {
              filters: {
                id: (x) => x.id,
                subscription_id: (x) => x.subscription_id,
                customer_id: (x) => x.customer_id,
                status: (x) => x.status,
                date: (x) => x.date,
                paid_at: (x) => x.paid_at,
                updated_at: (x) => x.updated_at,
              },
              sorts: { date: (x) => x.date ?? 0, updated_at: updatedAt },
              defaultSort: ['date', 'desc'],
            },
            (x) => ({ invoice: x }),
          ),
        );
      case 'GET invoices {id}':
        only(p, []);
        return ok({ invoice: ledger.invoice(b as string) });
      case 'GET transactions':
        return ok(
          listOf(
            [...ledger.transactions.values()],
            p,
            {
              filters: {
                id: (x) => x.id,
                subscription_id: (x) => x.subscription_id,
                customer_id: (x) => x.customer_id,
                type: (x) => x.type,
                status: (x) => x.status,
                date: (x) => x.date,
                updated_at: (x) => x.updated_at,
              },
              sorts: { date: (x) => x.date ?? 0, updated_at: updatedAt },
              defaultSort: ['date', 'desc'],
            },
            (x) => ({ transaction: x }),
          ),
        );
      case 'GET transactions {id}':
        only(p, []);
        return ok({ transaction: ledger.transaction(b as string) });
      case 'GET credit_notes':
        return ok(
          listOf(
            [...ledger.creditNotes.values()],
            p,
            {
              filters: {
                id: (x) => x.id,
                subscription_id: (x) => x.subscription_id,
                customer_id: (x) => x.customer_id,
                reference_invoice_id: (x) => x.reference_invoice_id,
                type: (x) => x.type,
                reason_code: (x) => x.reason_code,
                status: (x) => x.status,
                date: (x) => x.date,
                updated_at: (x) => x.updated_at,
              },
              sorts: { date: (x) => x.date ?? 0, updated_at: updatedAt },
              defaultSort: ['date', 'desc'],
            },
            (x) => ({ credit_note: x }),
          ),
        );
      case 'GET credit_notes {id}':
        only(p, []);
        return ok({ credit_note: ledger.creditNote(b as string) });
      case 'POST promotional_credits add':
      case 'POST promotional_credits deduct': {
        const { events, ...body } = ledger.promotional(b === 'add' ? 'add' : 'deduct', p);
        return ok(body, events);
      }
      case 'GET promotional_credits':
        return ok(
          listOf(
            [...ledger.promotionalCredits.values()],
            p,
            {
              filters: { id: (x) => x.id, customer_id: (x) => x.customer_id, type: (x) => x.type, created_at: (x) => x.created_at },
              sorts: { created_at: createdAt },
              defaultSort: ['created_at', 'desc'],
            },
            (x) => ({ promotional_credit: x }),
          ),
        );
      case 'GET promotional_credits {id}':
        only(p, []);
        return ok({ promotional_credit: ledger.promotionalCredit(b as string) });
      case 'POST coupons create_for_items':
        return ok(ledger.createCoupon(p));
      case 'GET coupons {id}':
        only(p, []);
        return ok({ coupon: ledger.coupon(b as string) });
      case 'POST coupon_codes':
        return ok(ledger.createCouponCode(p));
      case 'GET coupon_codes {id}':
        only(p, []);
        return ok({ coupon_code: ledger.couponCode(b as string) });
      case 'POST coupon_codes {id} archive':
        only(p, []);
        return ok(ledger.archiveCouponCode(b as string));
      case 'GET events':
        return ok(
          listOf(
            ledger.events,
            p,
            {
              filters: {
                id: (x) => x.id,
                event_type: (x) => x.event_type,
                source: (x) => x.source,
                occurred_at: (x) => x.occurred_at,
                webhook_status: (x) => x.webhook_status,
              },
              sorts: { occurred_at: (x) => x.occurred_at },
              defaultSort: ['occurred_at', 'desc'],
              extra: ['start_time', 'end_time'],
            },
            (x) => ({ event: x }),
          ),
        );
      case 'GET events {id}':
        only(p, []);
        return ok({ event: ledger.eventById(b as string) });
      case 'POST webhook_endpoints': {
        // The endpoint the emulator POSTs to (one; a new one replaces it), with its Basic credentials.
        only(p, [
          'name',
          'url',
          'api_version',
          'basic_auth_username',
          'basic_auth_password',
          'enabled_events',
          'send_card_resource',
          'disabled',
        ]);
        const url = str(p, 'url', { required: true, max: 1000 }) as string;
        if (!/^https?:\/\//.test(url)) throw bad('url', 'must be an http(s) URL');
        webhookUrl = url;
        const user = str(p, 'basic_auth_username', { max: 100 });
        const password = str(p, 'basic_auth_password', { max: 100 });
        if (user !== undefined) handle.webhookUsername = user;
        if (password !== undefined) handle.webhookPassword = password;
        return ok({
          webhook_endpoint: {
            id: `whv2_${randomBytes(8).toString('hex')}`,
            name: str(p, 'name') ?? 'refloop',
            url,
            api_version: 'v2',
            send_card_resource: str(p, 'send_card_resource') === 'true',
            disabled: false,
            primary_url: true,
            ...(user !== undefined ? { basic_auth_username: user } : {}),
            object: 'webhook_endpoint',
          },
        });
      }
      default:
        throw new ChargebeeError(
          404,
          'resource_not_found',
          `Sorry, we couldn't find that resource (${method} /api/v2/${parts.join('/')})`,
          null,
        );
    }
  };

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const method = req.method ?? 'GET';
    let parts: string[];
    try {
      parts = url.pathname.split('/').filter(Boolean).slice(2).map(decodeURIComponent);
    } catch {
      throw new ChargebeeError(400, 'param_wrong_value', 'The request path is not valid percent-encoding');
    }
    // Ids have digits or capitals; resource names and actions never do.
    const label = `${method} /api/v2/${parts.map((x, i) => (i % 2 === 1 && !COLLECTION_ACTIONS.has(`${parts[0]}/${x}`) ? '{id}' : x)).join('/')}`;
    counts[label] = (counts[label] ?? 0) + 1;
    const body = method === 'POST' ? await readBody(req) : '';
    const idemKey = method === 'POST' ? (req.headers['chargebee-idempotency-key'] as string | undefined) : undefined;
    if (method === 'POST') keys.push(idemKey);
    if (faults.left > 0) {
      faults.left -= 1;
      if (faults.status === 429)
        return send(
          res,
          429,
          errorBody(
            new ChargebeeError(
              429,
              'api_request_limit_exceeded',
              'Sorry, access has been blocked temporarily due to request count exceeding acceptable limits.',
              null,
              'invalid_request',
            ),
          ),
          { 'retry-after': String(faults.retryAfter) },
        );
      return send(
        res,
        faults.status,
        errorBody(
          new ChargebeeError(
            faults.status as 500,
            faults.status === 503 ? 'internal_temporary_error' : 'internal_error',
            'Sorry, something went wrong (injected).',
            null,
            null,
          ),
        ),
      );
    }
    if (apiKeyOf(req.headers.authorization) !== apiKey)
      return send(
        res,
        401,
        errorBody(new ChargebeeError(401, 'api_authentication_failed', 'Sorry, authentication failed. Invalid api key', null, null)),
      );
    if (method !== 'GET' && method !== 'POST') throw new ChargebeeError(404, 'resource_not_found', `Sorry, ${method} is not supported`);
    if (method === 'POST' && body && !String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      throw new ChargebeeError(400, 'param_wrong_value', 'The request body must be application/x-www-form-urlencoded');
    const params = decodeParams(method === 'POST' ? body : url.search.slice(1));
    if (idemKey !== undefined) {
      if (idemKey === '' || idemKey.length > 100) throw bad('chargebee-idempotency-key', 'must be 1 to 100 characters');
      const fingerprint = `${url.pathname}?${body}`;
      const stored = idempotency.get(idemKey);
      if (stored && now() - stored.at < IDEMPOTENCY_WINDOW_MS) {
        if (stored.fingerprint !== fingerprint)
          throw new ChargebeeError(
            400,
            'param_wrong_value',
            `The idempotency key ${idemKey} was used with other parameters in the last 30 minutes`,
            'chargebee-idempotency-key',
          );
        return send(res, stored.status, stored.body, { 'chargebee-idempotency-replayed': 'true' });
      }
    }
    const out = route(method, parts, params);
    if (idemKey !== undefined) idempotency.set(idemKey, { fingerprint: `${url.pathname}?${body}`, status: 200, body: out.body, at: now() });
    // Webhooks of API writes go out after the answer, in order with every other delivery.
    if (out.events.length > 0) void deliver(out.events);
    if (method === 'POST' && lost.left > 0) {
      lost.left -= 1;
      return send(
        res,
        lost.status,
        errorBody(
          new ChargebeeError(
            lost.status as 500,
            lost.status === 503 ? 'internal_temporary_error' : 'internal_error',
            'Sorry, something went wrong after the change was saved (injected).',
            null,
            null,
          ),
        ),
      );
    }
    send(res, 200, out.body);
  };

  // --- control endpoints (the CLI) ----------------------------------------------------------------------

  const summary = (ds: Delivery[]) => ds.map((x) => ({ event_id: x.event.id, type: x.event.event_type, status: x.status }));

  const control = async (req: IncomingMessage, res: ServerResponse, action: string) => {
    const body = req.method === 'POST' ? await readBody(req) : '';
    let p: Record<string, unknown> = {};
    try {
      p = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    } catch {
      return send(res, 400, { error: 'body must be JSON' });
    }
    if (typeof p !== 'object' || p === null || Array.isArray(p)) return send(res, 400, { error: 'body must be a JSON object' });
    const text = (key: string, required = true): string | undefined => {
      const v = p[key];
      if (v === undefined && !required) return undefined;
      if (typeof v !== 'string' || v === '') throw new ChargebeeError(400, 'param_wrong_value', `${key} is required (a string)`);
      return v;
    };
    const num = (key: string): number | undefined => {
      const v = p[key];
      if (v === undefined) return undefined;
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new ChargebeeError(400, 'param_wrong_value', `${key} must be a number`);
      return v;
    };
    const actions: Record<string, () => Promise<unknown>> = {
      checkout: async () => {
        const referralOn = text('referral_on', false);
        if (referralOn !== undefined && !['customer-cf', 'customer-meta', 'subscription-cf'].includes(referralOn))
          throw new ChargebeeError(400, 'param_wrong_value', 'referral_on must be customer-cf, customer-meta or subscription-cf');
        const r = await handle.checkout({
          email: text('email') as string,
          ...(text('customer_id', false) ? { customerId: text('customer_id') } : {}),
          ...(text('referral_id', false) ? { referralId: text('referral_id') } : {}),
          ...(referralOn ? { referralOn: referralOn as CheckoutInput['referralOn'] } : {}),
          ...(text('coupon_code', false) ? { couponCode: text('coupon_code') } : {}),
          ...(text('item_price_id', false) ? { itemPriceId: text('item_price_id') } : {}),
          ...(num('tax_rate') !== undefined ? { taxRate: num('tax_rate') } : {}),
          ...(num('trial_days') !== undefined ? { trialDays: num('trial_days') } : {}),
        });
        return {
          hosted_page_id: r.hostedPage.id,
          customer_id: r.customer.id,
          subscription_id: r.subscription.id,
          status: r.subscription.status,
          invoice_id: r.invoice?.id ?? null,
          transaction_id: r.transaction?.id ?? null,
          amount_paid: r.invoice?.amount_paid ?? 0,
          currency_code: r.subscription.currency_code,
          events: summary(r.deliveries),
        };
      },
      complete: async () => {
        const r = await handle.completeCheckout(text('hosted_page_id') as string, {
          ...(text('email', false) ? { email: text('email') } : {}),
          ...(num('tax_rate') !== undefined ? { taxRate: num('tax_rate') } : {}),
        });
        return {
          hosted_page_id: r.hostedPage.id,
          customer_id: r.customer.id,
          subscription_id: r.subscription.id,
          invoice_id: r.invoice?.id ?? null,
          amount_paid: r.invoice?.amount_paid ?? 0,
          events: summary(r.deliveries),
        };
      },
      renew: async () => renewed(await handle.renew(text('subscription_id') as string)),
      fail: async () => renewed(await handle.renew(text('subscription_id') as string, { fail: true })),
      cancel: async () => {
        const r = await handle.cancel(text('subscription_id') as string);
        return { subscription_id: r.subscription.id, status: r.subscription.status, events: summary(r.deliveries) };
      },
      refund: async () => {
        const amount = num('amount');
        const r = await handle.refund(text('invoice_id') as string, {
          ...(amount !== undefined ? { amount } : {}),
          ...(p.pending === true ? { pending: true } : {}),
        });
        return refunded(r);
      },
      dispute: async () => refunded(await handle.dispute(text('invoice_id') as string)),
      'settle-refund': async () => refunded(await handle.settleRefund(text('credit_note_id') as string)),
      credits: async () => {
        const id = text('customer_id') as string;
        const c = ledger.customer(id);
        return {
          customer_id: id,
          promotional_credits: c.promotional_credits,
          balances: c.balances.map((x) => ({ currency_code: x.currency_code, promotional_credits: x.promotional_credits })),
          history: handle.promotionalCredits(id).map((x) => ({
            id: x.id,
            type: x.type,
            amount: x.amount,
            currency_code: x.currency_code,
            closing_balance: x.closing_balance,
            reference: x.reference ?? null,
          })),
        };
      },
      state: async () => ({
        site: handle.site,
        item_prices: [...ledger.itemPrices.values()].map((x) => ({
          id: x.id,
          price: x.price,
          currency_code: x.currency_code,
          period_unit: x.period_unit,
        })),
        customers: [...ledger.customers.values()].map((x) => ({
          id: x.id,
          email: x.email ?? null,
          balances: x.balances.map((b) => ({ currency_code: b.currency_code, promotional_credits: b.promotional_credits })),
        })),
        subscriptions: [...ledger.subscriptions.values()].map((x) => ({
          id: x.id,
          customer_id: x.customer_id,
          status: x.status,
          due_invoices_count: x.due_invoices_count ?? 0,
          next_billing_at: x.next_billing_at ?? null,
        })),
        invoices: [...ledger.invoices.values()].map((x) => ({
          id: x.id,
          subscription_id: x.subscription_id,
          status: x.status,
          total: x.total,
          amount_paid: x.amount_paid,
        })),
        credit_notes: [...ledger.creditNotes.values()].map((x) => ({
          id: x.id,
          reference_invoice_id: x.reference_invoice_id,
          reason_code: x.reason_code,
          total: x.total,
        })),
        coupon_codes: [...ledger.couponCodes.values()].map((x) => ({ code: x.code, coupon_id: x.coupon_id, status: x.status })),
      }),
    };
    const run = actions[action];
    if (!run) return send(res, 404, { error: `unknown action ${action}` });
    send(res, 200, await run());
  };

  const renewed = (r: Awaited<ReturnType<ChargebeeEmulator['renew']>>) => ({
    subscription_id: r.subscription.id,
    status: r.subscription.status,
    invoice_id: r.invoice.id,
    invoice_status: r.invoice.status,
    total: r.invoice.total,
    amount_paid: r.invoice.amount_paid,
    credits_used: r.creditsUsed,
    events: summary(r.deliveries),
  });
  const refunded = (r: Awaited<ReturnType<ChargebeeEmulator['refund']>>) => ({
    credit_note_id: r.creditNote.id,
    reason_code: r.creditNote.reason_code,
    transaction_id: r.transaction.id,
    invoice_id: r.invoice.id,
    amount: r.creditNote.total,
    events: summary(r.deliveries),
  });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const isControl = url.pathname.startsWith('/_emulator/');
    const isApi = url.pathname.startsWith('/api/v2/');
    let work: Promise<unknown>;
    if (isControl) work = control(req, res, url.pathname.slice('/_emulator/'.length));
    else if (isApi) work = api(req, res, url);
    else if (req.method === 'GET' && /^\/pages\/v3\/[A-Za-z0-9]+\/checkout$/.test(url.pathname)) {
      const id = url.pathname.split('/')[3] as string;
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`Chargebee emulator: hosted page ${id}.\nComplete it with: npm run --silent chargebee -- complete --hosted-page ${id}\n`);
      return;
    } else work = Promise.reject(new ChargebeeError(404, 'resource_not_found', `Sorry, we couldn't find that resource (${url.pathname})`));
    work.catch((err: unknown) => {
      if (res.headersSent) return;
      if (err instanceof ChargebeeError)
        return isControl ? send(res, err.status, { error: err.message }) : send(res, err.status, errorBody(err));
      send(res, 500, errorBody(new ChargebeeError(500, 'internal_error', err instanceof Error ? err.message : String(err), null, null)));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const handle: ChargebeeEmulator = {
    url: `http://127.0.0.1:${port}`,
    port,
    apiKey,
    site,
    webhookUsername,
    webhookPassword,
    ledger,
    setWebhookUrl: (u) => void (webhookUrl = u),
    failNext: (count, status, retryAfterSeconds = 1) => void (faults = { left: count, status, retryAfter: retryAfterSeconds }),
    failAfterApply: (count, status) => void (lost = { left: count, status }),
    setDeliveryFaults: (f) => void (deliveryFaults = { ...f }),
    deliveries: () => [...built],
    callCounts: () => ({ ...counts }),
    idempotencyKeysSeen: () => [...keys],
    request: async (method, path, params = {}) => {
      const form = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
      const res = await fetch(`${handle.url}${path}${method === 'GET' && form ? `?${form}` : ''}`, {
        method,
        headers: {
          authorization: `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`,
          ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' } : {}),
        },
        ...(method === 'POST' ? { body: form } : {}),
      });
      return { status: res.status, body: (await res.json()) as unknown };
    },
    redeliver: async (eventId) => {
      const event = ledger.eventById(eventId);
      const previous = built.filter((d) => d.event.id === eventId).length;
      const again = build(event);
      again.attempt = previous;
      return (await enqueue([again]))[0] as Delivery;
    },
    checkout: async ({ deliver: d, ...input }) => {
      const events: CbEvent[] = [];
      const price = ledger.itemPrice(input.itemPriceId ?? 'pro-USD-monthly', 'item_price_id');
      let customerId = input.customerId;
      // The app writes the referral id to the customer before opening the checkout.
      if (input.referralId !== undefined && (input.referralOn ?? 'customer-cf') !== 'subscription-cf') {
        const fields: Params =
          input.referralOn === 'customer-meta'
            ? { meta_data: JSON.stringify({ refloop_referral_id: input.referralId }) }
            : { cf_refloop_referral_id: input.referralId };
        if (customerId !== undefined && ledger.customers.has(customerId)) events.push(...ledger.updateCustomer(customerId, fields).events);
        else {
          const made = ledger.createCustomer({
            ...(customerId !== undefined ? { id: customerId } : {}),
            email: input.email,
            preferred_currency_code: price.currency_code,
            ...fields,
          });
          customerId = made.customer.id;
          events.push(...made.events);
        }
      }
      const { hosted_page } = ledger.openCheckout({
        customer: { ...(customerId !== undefined ? { id: customerId } : {}), email: input.email },
        subscription_items: { item_price_id: { 0: price.id } },
        ...(input.couponCode !== undefined ? { coupon_ids: { 0: input.couponCode } } : {}),
      });
      const done = ledger.completeCheckout(hosted_page.id, {
        email: input.email,
        ...(input.taxRate !== undefined ? { taxRate: input.taxRate } : {}),
        ...(input.trialDays !== undefined ? { trialDays: input.trialDays } : {}),
        ...(input.referralId !== undefined && input.referralOn === 'subscription-cf'
          ? { subscriptionFields: { cf_refloop_referral_id: input.referralId } }
          : {}),
      });
      const { events: more, ...made } = done;
      return simulate({ ...made, events: [...events, ...more] }, { deliver: d });
    },
    completeCheckout: async (id, { deliver: d, ...o } = {}) => simulate(ledger.completeCheckout(id, o), { deliver: d }),
    renew: async (id, { deliver: d, ...o } = {}) => simulate(ledger.renew(id, o), { deliver: d }),
    refund: async (id, { deliver: d, ...o } = {}) => simulate(ledger.refund(id, o), { deliver: d }),
    settleRefund: async (id, o = {}) => simulate(ledger.settleRefund(id), o),
    dispute: async (id, o = {}) => simulate(ledger.refund(id, { reasonCode: 'chargeback', source: 'system' }), o),
    cancel: async (id, o = {}) => simulate(ledger.cancel(id), o),
    pause: async (id, o = {}) => simulate(ledger.setState(id, 'pause'), o),
    resume: async (id, o = {}) => simulate(ledger.setState(id, 'resume'), o),
    reactivate: async (id, o = {}) => simulate(ledger.setState(id, 'reactivate'), o),
    balanceOf: (customerId, currency) => ledger.balanceOf(customerId, currency),
    promotionalCredits: (customerId) =>
      structuredClone([...ledger.promotionalCredits.values()].filter((x) => customerId === undefined || x.customer_id === customerId)),
    stop: async () => {
      stopped = true;
      for (const t of retryTimers) clearTimeout(t);
      retryTimers.clear();
      for (const a of inFlight) a.abort();
      await chain.catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return handle;
}
