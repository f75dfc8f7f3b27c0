// Paddle Billing emulator for `npm start` and the tests: the JSON API Refloop calls (real wire format:
// `{data, meta}`, `{error: {type, code, detail}}`, cursor pagination) over the ledger (./ledger.ts), and
// signed notifications (`Paddle-Signature`) POSTed to a configured URL, one at a time in order.
// Tests drive the money side through the returned handle; the `paddle-billing` CLI drives the same
// simulations through the /_emulator control endpoints.
//
// Every API call must carry `Authorization: Bearer <apiKey>` (else 403 forbidden; the scheme is matched
// without case, as HTTP auth schemes are: @paddle/paddle-node-sdk sends `bearer`) and, if it sends
// `Paddle-Version`, version 1 (else 400 invalid_version). Faults for tests: `failNext(n, status)`
// answers the next n API calls with a 5xx or a 429 (with Retry-After).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signatureHeader } from '../../../../shared/providers/paddle-billing/signature';
import type {
  Adjustment,
  Customer,
  Discount,
  Notification,
  Subscription,
  Transaction,
} from '../../../../shared/providers/paddle-billing/wire';
import { Ledger, LedgerError, type LedgerOptions } from './ledger';

/** The token of an `Authorization: Bearer <token>` header; the scheme without case (RFC 9110 11.1). */
export function bearerToken(header: string | undefined): string | null {
  const m = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+) +(\S+) *$/.exec(header ?? '');
  return m && m[1]?.toLowerCase() === 'bearer' ? (m[2] as string) : null;
}

export interface PaddleBillingEmulatorOptions extends LedgerOptions {
  /** Default 0 = a free port; listens on 127.0.0.1. */
  port?: number;
  /** Default `pdl_sdbx_apikey_` + random. */
  apiKey?: string;
  /** The notification destination's secret; default `pdl_ntfset_` + random. */
  webhookSecret?: string;
  /** Where signed notifications are POSTed; null = not delivered (still recorded). */
  webhookUrl?: string | null;
  /** The Paddle-Signature ts of a delivery, seconds; default the current time (tests may sign with another). */
  signatureTime?: () => number;
}

export interface DeliveredNotification {
  notification: Notification;
  /** The exact body sent, and its signature header. */
  rawBody: string;
  signature: string;
  /** HTTP status from the target; null when not delivered. */
  status: number | null;
}

export interface Simulated<T> {
  result: T;
  delivered: DeliveredNotification[];
}

type Deliver = { deliver?: boolean };

export interface PaddleBillingEmulator {
  /** http://127.0.0.1:<port>: the API base URL (what `--api-url` gets). */
  url: string;
  apiKey: string;
  webhookSecret: string;
  ledger: Ledger;
  setWebhookUrl(url: string | null): void;
  /** The next `count` API calls answer `status` (429 with `Retry-After: retryAfterSeconds`, default 1). */
  failNext(count: number, status: 429 | 500 | 502 | 503, retryAfterSeconds?: number): void;
  /** API calls received, by `METHOD /path` with ids replaced by `{id}`, e.g. `POST /discounts`. */
  callCounts(): Record<string, number>;
  /** The Paddle-Version header of every API call so far (undefined when absent). */
  versionsSeen(): (string | undefined)[];
  /** Every notification built so far, in order (delivered or not). */
  notifications(): DeliveredNotification[];
  checkout(p: Parameters<Ledger['checkout']>[0] & Deliver): Promise<Simulated<{ subscription: Subscription; transaction: Transaction }>>;
  renew(subscriptionId: string, o?: Deliver): Promise<Simulated<{ transaction: Transaction }>>;
  failPayment(subscriptionId: string, o?: Deliver): Promise<Simulated<{ transaction: Transaction }>>;
  cancel(subscriptionId: string, o?: Deliver): Promise<Simulated<{ subscription: Subscription }>>;
  refund(transactionId: string, p?: { amount?: number } & Deliver): Promise<Simulated<{ adjustment: Adjustment }>>;
  approve(adjustmentId: string, o?: Deliver): Promise<Simulated<{ adjustment: Adjustment }>>;
  chargeback(transactionId: string, o?: Deliver): Promise<Simulated<{ adjustment: Adjustment }>>;
  /** Signs any body as a notification to this destination would be. */
  sign(rawBody: string, tsSeconds?: number): string;
  stop(): Promise<void>;
}

const DELIVERY_TIMEOUT_MS = 5_000;
const MAX_BODY_BYTES = 256 * 1024;

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const requestId = () => randomBytes(8).toString('hex');
const apiError = (res: ServerResponse, status: number, code: string, detail: string, headers: Record<string, string> = {}) =>
  send(
    res,
    status,
    {
      error: {
        type: status >= 500 ? 'api_error' : 'request_error',
        code,
        detail,
        documentation_url: `https://developer.paddle.com/errors/shared/${code}`,
      },
      meta: { request_id: requestId() },
    },
    headers,
  );

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new LedgerError(400, 'request_body_too_large', 'body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A page of `items` (sorted by id) after the `after` cursor, with Paddle's meta.pagination. */
function page<T extends { id: string }>(
  base: string,
  path: string,
  query: URLSearchParams,
  items: T[],
  defaultSize: number,
  maxSize: number,
) {
  const perPage = Math.min(maxSize, Math.max(1, Number(query.get('per_page') ?? defaultSize) || defaultSize));
  const after = query.get('after');
  const sorted = [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const rest = after ? sorted.filter((i) => i.id > after) : sorted;
  const data = rest.slice(0, perPage);
  const next = new URL(base + path);
  query.forEach((v, k) => {
    next.searchParams.set(k, v);
  });
  next.searchParams.set('after', data.length > 0 ? (data[data.length - 1] as T).id : (after ?? ''));
  next.searchParams.set('per_page', String(perPage));
  return {
    data,
    meta: {
      request_id: requestId(),
      pagination: { per_page: perPage, next: next.toString(), has_more: rest.length > perPage, estimated_total: items.length },
    },
  };
}

const listFilter = (query: URLSearchParams, key: string) => {
  const raw = query.get(key);
  return raw ? new Set(raw.split(',')) : null;
};

export async function startPaddleBillingEmulator(options: PaddleBillingEmulatorOptions = {}): Promise<PaddleBillingEmulator> {
  const ledger = new Ledger(options);
  const apiKey = options.apiKey ?? `pdl_sdbx_apikey_${randomBytes(12).toString('hex')}`;
  const webhookSecret = options.webhookSecret ?? `pdl_ntfset_${randomBytes(16).toString('hex')}`;
  const signatureTime = options.signatureTime ?? (() => Math.floor(Date.now() / 1000));
  let webhookUrl = options.webhookUrl ?? null;
  let faults: { left: number; status: number; retryAfter: number } = { left: 0, status: 503, retryAfter: 1 };
  const counts: Record<string, number> = {};
  const versions: (string | undefined)[] = [];
  const built: DeliveredNotification[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  const inFlight = new Set<AbortController>();
  let stopped = false;
  let base = '';

  // --- notifications --------------------------------------------------------------------------------

  const post = async (rawBody: string, signature: string): Promise<number | null> => {
    const target = webhookUrl;
    if (!target || stopped) return null;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), DELIVERY_TIMEOUT_MS);
    inFlight.add(abort);
    try {
      const res = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'paddle-signature': signature },
        body: rawBody,
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

  /** Signs and (unless deliver is false) POSTs the notifications in order, after any earlier ones. */
  const deliver = async (notifications: Notification[], doDeliver = true): Promise<DeliveredNotification[]> => {
    const prepared = notifications.map((notification) => {
      const rawBody = JSON.stringify(notification);
      const d: DeliveredNotification = {
        notification,
        rawBody,
        signature: signatureHeader(webhookSecret, rawBody, signatureTime()),
        status: null,
      };
      built.push(d);
      return d;
    });
    if (!doDeliver) return prepared;
    const run = chain.then(async () => {
      for (const d of prepared) d.status = await post(d.rawBody, d.signature);
      return prepared;
    });
    chain = run.catch(() => undefined);
    return run;
  };

  const simulate = async <T extends { notifications: Notification[] }>(out: T, o: Deliver = {}) => {
    const { notifications, ...result } = out;
    return { result: result as Omit<T, 'notifications'>, delivered: await deliver(notifications, o.deliver !== false) };
  };

  // --- the API ----------------------------------------------------------------------------------------

  const withIncludes = (t: Transaction, include: Set<string>) => {
    const out: Transaction = structuredClone(t);
    if (include.has('customer')) out.customer = t.customer_id ? structuredClone(ledger.customers.get(t.customer_id)) : undefined;
    if (include.has('discount')) out.discount = t.discount_id ? structuredClone(ledger.discounts.get(t.discount_id) ?? null) : null;
    return out;
  };

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean);
    const [collection, id] = parts;
    const route = `${method} /${collection ?? ''}${id ? '/{id}' : ''}`;
    counts[route] = (counts[route] ?? 0) + 1;
    versions.push(req.headers['paddle-version'] as string | undefined);
    if (faults.left > 0) {
      faults.left -= 1;
      req.resume();
      if (faults.status === 429)
        return apiError(res, 429, 'too_many_requests', 'Too many requests.', { 'retry-after': String(faults.retryAfter) });
      return apiError(res, faults.status, 'internal_error', 'Injected fault.');
    }
    if (bearerToken(req.headers.authorization) !== apiKey)
      return apiError(res, 403, 'forbidden', 'You aren’t permitted to perform this request.');
    const version = req.headers['paddle-version'];
    if (version !== undefined && version !== '1')
      return apiError(res, 400, 'invalid_version', `Paddle-Version ${String(version)} is not supported.`);
    const q = url.searchParams;
    const ok = (data: unknown) => send(res, 200, { data: structuredClone(data), meta: { request_id: requestId() } });
    const body = method === 'POST' || method === 'PATCH' ? await readBody(req) : '';
    let json: Record<string, unknown> = {};
    if (body) {
      try {
        const parsed: unknown = JSON.parse(body);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error();
        json = parsed as Record<string, unknown>;
      } catch {
        return apiError(res, 400, 'bad_request', 'Invalid request body: not a JSON object.');
      }
    }

    switch (route) {
      case 'GET /subscriptions/{id}':
        return ok(ledger.subscription(id as string));
      case 'GET /subscriptions': {
        const status = listFilter(q, 'status');
        const customers = listFilter(q, 'customer_id');
        const ids = listFilter(q, 'id');
        const items = [...ledger.subscriptions.values()].filter(
          (s) => (!status || status.has(s.status)) && (!customers || customers.has(s.customer_id)) && (!ids || ids.has(s.id)),
        );
        return send(res, 200, page(base, '/subscriptions', q, items, 50, 200));
      }
      case 'PATCH /subscriptions/{id}': {
        const { subscription, notifications } = ledger.updateSubscription(id as string, json);
        ok(subscription);
        void deliver(notifications);
        return;
      }
      case 'GET /transactions/{id}':
        return ok(withIncludes(ledger.transaction(id as string), listFilter(q, 'include') ?? new Set()));
      case 'GET /transactions': {
        const subs = listFilter(q, 'subscription_id');
        const status = listFilter(q, 'status');
        const include = listFilter(q, 'include') ?? new Set<string>();
        const items = [...ledger.transactions.values()].filter(
          (t) => (!subs || (t.subscription_id !== null && subs.has(t.subscription_id))) && (!status || status.has(t.status)),
        );
        const p = page(base, '/transactions', q, items, 30, 30);
        return send(res, 200, { ...p, data: p.data.map((t) => withIncludes(t, include)) });
      }
      case 'GET /customers/{id}': {
        const c = ledger.customers.get(id as string);
        return c ? ok(c) : apiError(res, 404, 'not_found', `Customer ${id} not found.`);
      }
      case 'GET /customers': {
        const ids = listFilter(q, 'id');
        const emails = listFilter(q, 'email');
        const items: Customer[] = [...ledger.customers.values()].filter((c) => (!ids || ids.has(c.id)) && (!emails || emails.has(c.email)));
        return send(res, 200, page(base, '/customers', q, items, 50, 200));
      }
      case 'GET /discounts/{id}':
        return ok(ledger.discount(id as string));
      case 'GET /discounts': {
        const codes = listFilter(q, 'code');
        const ids = listFilter(q, 'id');
        const status = listFilter(q, 'status');
        const upper = codes ? new Set([...codes].map((c) => c.toUpperCase())) : null;
        const items: Discount[] = [...ledger.discounts.values()].filter(
          (d) =>
            (!upper || (d.code !== null && upper.has(d.code.toUpperCase()))) &&
            (!ids || ids.has(d.id)) &&
            (!status || status.has(d.status)),
        );
        return send(res, 200, page(base, '/discounts', q, items, 50, 200));
      }
      case 'POST /discounts': {
        const d = ledger.createDiscount(json);
        return send(res, 201, { data: structuredClone(d), meta: { request_id: requestId() } });
      }
      default:
        return apiError(res, 404, 'not_found', `Route ${method} ${url.pathname} not found.`);
    }
  };

  // --- control endpoints (the CLI) --------------------------------------------------------------------

  const control = async (req: IncomingMessage, res: ServerResponse, action: string) => {
    const body = req.method === 'POST' ? await readBody(req) : '';
    let p: Record<string, unknown> = {};
    try {
      p = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    } catch {
      return send(res, 400, { error: 'body must be JSON' });
    }
    const str = (key: string) => {
      const v = p[key];
      if (typeof v !== 'string' || v === '') throw new LedgerError(400, 'invalid_field', `${key} is required`);
      return v;
    };
    const summary = (s: { delivered: DeliveredNotification[] }) =>
      s.delivered.map((d) => ({ event_id: d.notification.event_id, event_type: d.notification.event_type, status: d.status }));
    const actions: Record<string, () => Promise<unknown>> = {
      checkout: async () => {
        const s = await handle.checkout({
          email: str('email'),
          ...(typeof p.price_id === 'string' ? { priceId: p.price_id } : {}),
          ...(typeof p.currency === 'string' ? { currency: p.currency } : {}),
          ...(typeof p.quantity === 'number' ? { quantity: p.quantity } : {}),
          ...(p.custom_data !== undefined ? { customData: p.custom_data as Record<string, unknown> } : {}),
          ...(typeof p.discount_code === 'string' ? { discountCode: p.discount_code } : {}),
        });
        return {
          subscription_id: s.result.subscription.id,
          transaction_id: s.result.transaction.id,
          customer_id: s.result.subscription.customer_id,
          notifications: summary(s),
        };
      },
      renew: async () => {
        const s = await handle.renew(str('subscription_id'));
        return {
          transaction_id: s.result.transaction.id,
          grand_total: s.result.transaction.details.totals.grand_total,
          notifications: summary(s),
        };
      },
      fail: async () => summary(await handle.failPayment(str('subscription_id'))),
      cancel: async () => summary(await handle.cancel(str('subscription_id'))),
      refund: async () => {
        const s = await handle.refund(str('transaction_id'), typeof p.amount === 'number' ? { amount: p.amount } : {});
        return { adjustment_id: s.result.adjustment.id, status: s.result.adjustment.status, notifications: summary(s) };
      },
      approve: async () => {
        const s = await handle.approve(str('adjustment_id'));
        return { adjustment_id: s.result.adjustment.id, status: s.result.adjustment.status, notifications: summary(s) };
      },
      chargeback: async () => {
        const s = await handle.chargeback(str('transaction_id'));
        return { adjustment_id: s.result.adjustment.id, notifications: summary(s) };
      },
      state: async () => ({
        prices: [...ledger.catalog.values()].map((c) => ({
          id: c.price.id,
          description: c.price.description,
          unit_price: c.price.unit_price,
          billing_cycle: c.price.billing_cycle,
        })),
        subscriptions: [...ledger.subscriptions.values()].map((s) => ({
          id: s.id,
          status: s.status,
          customer_id: s.customer_id,
          next_billed_at: s.next_billed_at,
          discount: s.discount,
        })),
        transactions: [...ledger.transactions.values()].map((t) => ({
          id: t.id,
          subscription_id: t.subscription_id,
          status: t.status,
          origin: t.origin,
          grand_total: t.details.totals.grand_total,
          discount_id: t.discount_id,
        })),
        adjustments: [...ledger.adjustments.values()].map((a) => ({
          id: a.id,
          action: a.action,
          status: a.status,
          transaction_id: a.transaction_id,
          total: a.totals.total,
        })),
        discounts: [...ledger.discounts.values()].map((d) => ({
          id: d.id,
          code: d.code,
          description: d.description,
          amount: d.amount,
          times_used: d.times_used,
        })),
      }),
    };
    const run = actions[action];
    if (!run) return send(res, 404, { error: `unknown action ${action}` });
    send(res, 200, await run());
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const work = url.pathname.startsWith('/_emulator/') ? control(req, res, url.pathname.slice('/_emulator/'.length)) : api(req, res, url);
    work.catch((err: unknown) => {
      if (res.headersSent) return;
      if (err instanceof LedgerError) {
        return url.pathname.startsWith('/_emulator/')
          ? send(res, err.status, { error: err.message })
          : apiError(res, err.status, err.code, err.message);
      }
      apiError(res, 500, 'internal_error', err instanceof Error ? err.message : String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const handle: PaddleBillingEmulator = {
    url: base,
    apiKey,
    webhookSecret,
    ledger,
    setWebhookUrl: (u) => void (webhookUrl = u),
    failNext: (count, status, retryAfterSeconds = 1) => void (faults = { left: count, status, retryAfter: retryAfterSeconds }),
    callCounts: () => ({ ...counts }),
    versionsSeen: () => [...versions],
    notifications: () => [...built],
    checkout: ({ deliver: d, ...p }) => simulate(ledger.checkout(p), { deliver: d }),
    renew: (id, o) => simulate(ledger.renew(id), o),
    failPayment: (id, o) => simulate(ledger.failPayment(id), o),
    cancel: (id, o) => simulate(ledger.cancel(id), o),
    refund: (id, p = {}) => simulate(ledger.refund(id, p), p),
    approve: (id, o) => simulate(ledger.approve(id), o),
    chargeback: (id, o) => simulate(ledger.chargeback(id), o),
    sign: (rawBody, ts = signatureTime()) => signatureHeader(webhookSecret, rawBody, ts),
    stop: async () => {
      stopped = true;
      for (const a of inFlight) a.abort();
      await chain.catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return handle;
}
