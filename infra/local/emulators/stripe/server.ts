// Stripe emulator for `npm start` and the tests: the /v1 API Refloop calls, in the real wire format
// (objects with `object`, list envelopes {object: "list", data, has_more, url}, `starting_after` cursors,
// `expand[]`, form-encoded bodies with bracket keys, {error: {type, code, message, param}} bodies,
// `Idempotency-Key` replay), over the ledger (./ledger.ts), and webhooks signed with a `whsec_` secret
// (`Stripe-Signature`) carrying the pinned api_version, POSTed to a configured URL one at a time in order.
// Tests drive the money side through the returned handle; the `stripe` CLI (infra/stripe.ts) drives the
// same simulations through the /_emulator control endpoints. The official `stripe` package, pointed at it
// with host/port/protocol, reads it (test/integration/stripe-emulator.test.ts).
// The Connect side (payouts: accounts, Account Links, transfers, reversals) is ./connect-routes.ts, mounted
// behind the same authentication, idempotency and faults (test/integration/rail-stripe.test.ts).
//
// Every API call must carry the secret key (else 401), as Stripe takes it: `Authorization: Bearer <key>`, or
// HTTP Basic with the key as the user name (`curl -u sk_…:`, docs/providers/stripe.md); schemes without case.
// Enum query parameters (a list's `status`, booleans) are validated as Stripe does: 400 invalid_request_error
// naming the param, never an empty list. And, if it sends
// `Stripe-Version`, the pinned version (else 400). A POST with an `Idempotency-Key` seen before answers the
// stored response when the parameters are the same (header `Idempotent-Replayed: true`), and 400
// idempotency_error when they differ. Faults for tests: `failNext(n, status)` answers the next n API calls
// with a 5xx or a 429 (with Retry-After).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signatureHeader } from '../../../../shared/providers/stripe/signature';
import {
  STRIPE_API_VERSION,
  decodeForm,
  type Charge,
  type CheckoutSession,
  type Customer,
  type Dispute,
  type Invoice,
  type Refund,
  type StripeEvent,
  type Subscription,
} from '../../../../shared/providers/stripe/wire';
import { type ConnectEmulator, type ConnectOptions, createConnect } from './connect-routes';
import { Ledger, LedgerError, list, type LedgerOptions } from './ledger';

/** The API key an Authorization header presents: `Bearer <key>` or Basic `<key>:` (schemes without case). */
export function apiKeyOf(header: string | undefined): string | null {
  const m = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+) +(\S+) *$/.exec(header ?? '');
  if (!m) return null;
  const scheme = (m[1] as string).toLowerCase();
  const token = m[2] as string;
  if (scheme === 'bearer') return token;
  if (scheme !== 'basic') return null;
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  return user === '' ? null : user;
}

/** Stripe's answer to a value outside an enum parameter's list: 400 invalid_request_error naming the param. */
function oneOf(params: Record<string, unknown>, name: string, allowed: readonly string[]): void {
  const v = params[name];
  if (v === undefined) return;
  if (typeof v !== 'string' || !allowed.includes(v)) {
    const list = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')}, or ${allowed[allowed.length - 1]}` : String(allowed[0]);
    throw new LedgerError(400, '', `Invalid ${name}: must be one of ${list}`, name);
  }
}
const BOOLEAN = ['true', 'false'] as const;

export interface StripeEmulatorOptions extends LedgerOptions {
  /** Default 0 = a free port; listens on 127.0.0.1. */
  port?: number;
  /** Default `sk_test_` + random. */
  secretKey?: string;
  /** The webhook endpoint's signing secret; default `whsec_` + random. */
  webhookSecret?: string;
  /** Where signed events are POSTed; null = not delivered (still recorded). */
  webhookUrl?: string | null;
  /** The Stripe-Signature t of a delivery, seconds; default the current time. */
  signatureTime?: () => number;
  /** The Connect side (payouts, ./connect-routes.ts): its endpoints' secrets, webhook URL and balance. */
  connect?: ConnectOptions;
}

export interface DeliveredEvent {
  event: StripeEvent;
  /** The exact body sent, and its signature header. */
  rawBody: string;
  signature: string;
  /** HTTP status from the target; null when not delivered. */
  status: number | null;
}

export interface Simulated<T> {
  result: T;
  delivered: DeliveredEvent[];
}

type Deliver = { deliver?: boolean };

export interface StripeEmulator {
  /** http://127.0.0.1:<port>: the API base URL (what `--api-url` gets). */
  url: string;
  port: number;
  secretKey: string;
  webhookSecret: string;
  ledger: Ledger;
  /** The Connect side: accounts, onboarding, transfers, reversals and their webhooks (./connect-routes.ts). */
  connect: ConnectEmulator;
  setWebhookUrl(url: string | null): void;
  /** The next `count` API calls answer `status` (429 with `Retry-After: retryAfterSeconds`, default 1). */
  failNext(count: number, status: 429 | 500 | 502 | 503, retryAfterSeconds?: number): void;
  /** API calls received, by `METHOD /v1/path` with ids replaced by `{id}`. */
  callCounts(): Record<string, number>;
  /** The Stripe-Version header of every API call so far (undefined when absent). */
  versionsSeen(): (string | undefined)[];
  /** The Idempotency-Key of every POST so far (undefined when absent). */
  idempotencyKeysSeen(): (string | undefined)[];
  /** Every event built so far, in order (delivered or not). */
  events(): DeliveredEvent[];
  checkout(
    p: Parameters<Ledger['checkout']>[0] & Deliver,
  ): Promise<Simulated<{ session: CheckoutSession; subscription: Subscription; invoice: Invoice; charge: Charge | null }>>;
  renew(subscriptionId: string, o?: Deliver): Promise<Simulated<{ invoice: Invoice; charge: Charge | null }>>;
  failPayment(subscriptionId: string, o?: Deliver): Promise<Simulated<{ invoice: Invoice }>>;
  cancel(subscriptionId: string, o?: Deliver): Promise<Simulated<{ subscription: Subscription }>>;
  /** The customer pays the subscription with another card (number) from now on. */
  updatePaymentMethod(subscriptionId: string, card: string, o?: Deliver): Promise<Simulated<{ subscription: Subscription }>>;
  refund(chargeId: string, p?: { amount?: number } & Deliver): Promise<Simulated<{ refund: Refund; charge: Charge }>>;
  dispute(chargeId: string, o?: Deliver): Promise<Simulated<{ dispute: Dispute }>>;
  /** Delivers an already built event again, with a fresh signature (Stripe's at-least-once redelivery). */
  redeliver(eventId: string): Promise<DeliveredEvent>;
  /** Signs any body as a webhook to this endpoint would be. */
  sign(rawBody: string, tSeconds?: number): string;
  stop(): Promise<void>;
}

const DELIVERY_TIMEOUT_MS = 5_000;
const MAX_BODY_BYTES = 256 * 1024;

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, {
    'content-type': 'application/json',
    'request-id': `req_${randomBytes(7).toString('hex')}`,
    'stripe-version': STRIPE_API_VERSION,
    ...headers,
  });
  res.end(JSON.stringify(body));
};
const apiError = (
  res: ServerResponse,
  status: number,
  type: string,
  code: string | undefined,
  message: string,
  param: string | null = null,
  headers: Record<string, string> = {},
) =>
  send(
    res,
    status,
    {
      error: {
        type,
        ...(code ? { code, doc_url: `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}` } : {}),
        message,
        ...(param ? { param } : {}),
      },
    },
    headers,
  );

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new LedgerError(400, 'parameter_invalid_string', 'body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Newest first (Stripe's list order), `starting_after` = the last id of the previous page. */
function page<T extends { id: string }>(items: T[], params: Record<string, unknown>, url: string, map: (t: T) => unknown = (t) => t) {
  const raw = params.limit;
  const limit = raw === undefined ? 10 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new LedgerError(400, 'parameter_invalid_integer', 'limit must be an integer from 1 to 100', 'limit');
  const newestFirst = [...items].reverse();
  const after = typeof params.starting_after === 'string' ? params.starting_after : null;
  let start = 0;
  if (after) {
    const i = newestFirst.findIndex((t) => t.id === after);
    if (i < 0) throw new LedgerError(404, 'resource_missing', `No such object: '${after}'`, 'starting_after');
    start = i + 1;
  }
  const data = newestFirst.slice(start, start + limit);
  return list(data.map(map), start + limit < newestFirst.length, url);
}

const expansions = (params: Record<string, unknown>): Set<string> => {
  const e = params.expand;
  if (e === undefined) return new Set();
  if (!Array.isArray(e) || !e.every((x) => typeof x === 'string'))
    throw new LedgerError(400, 'parameter_invalid_string', 'expand must be a list of strings', 'expand');
  return new Set(e as string[]);
};

function allowOnly(expand: Set<string>, allowed: string[]): void {
  for (const e of expand)
    if (!allowed.includes(e)) throw new LedgerError(400, 'parameter_invalid_string', `This property cannot be expanded (${e}).`, 'expand');
}

export async function startStripeEmulator(options: StripeEmulatorOptions = {}): Promise<StripeEmulator> {
  const ledger = new Ledger(options);
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(16).toString('hex')}`;
  const webhookSecret = options.webhookSecret ?? `whsec_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`;
  const signatureTime = options.signatureTime ?? (() => Math.floor(Date.now() / 1000));
  let webhookUrl = options.webhookUrl ?? null;
  let faults: { left: number; status: number; retryAfter: number } = { left: 0, status: 503, retryAfter: 1 };
  const counts: Record<string, number> = {};
  const versions: (string | undefined)[] = [];
  const keys: (string | undefined)[] = [];
  const idempotency = new Map<string, { params: string; status: number; body: unknown }>();
  const built: DeliveredEvent[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  const inFlight = new Set<AbortController>();
  let stopped = false;
  const connect = createConnect({ ...options.connect, now: options.now, signatureTime, baseUrl: () => handle.url });

  // --- webhooks -----------------------------------------------------------------------------------------

  const post = async (rawBody: string, signature: string): Promise<number | null> => {
    const target = webhookUrl;
    if (!target || stopped) return null;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), DELIVERY_TIMEOUT_MS);
    inFlight.add(abort);
    try {
      const res = await fetch(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'stripe-signature': signature,
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        },
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

  const enqueue = (prepared: DeliveredEvent[]): Promise<DeliveredEvent[]> => {
    const run = chain.then(async () => {
      for (const d of prepared) d.status = await post(d.rawBody, d.signature);
      return prepared;
    });
    chain = run.catch(() => undefined);
    return run;
  };

  /** Signs and (unless deliver is false) POSTs the events in order, after any earlier ones. */
  const deliver = async (events: StripeEvent[], doDeliver = true): Promise<DeliveredEvent[]> => {
    const prepared = events.map((event) => {
      // Stripe's bodies are pretty-printed JSON; the signature covers these exact bytes.
      const rawBody = JSON.stringify(event, null, 2);
      const d: DeliveredEvent = { event, rawBody, signature: signatureHeader(webhookSecret, rawBody, signatureTime()), status: null };
      built.push(d);
      return d;
    });
    return doDeliver ? enqueue(prepared) : prepared;
  };

  const simulate = async <T extends { events: StripeEvent[] }>(out: T, o: Deliver = {}) => {
    const { events, ...result } = out;
    return { result: result as Omit<T, 'events'>, delivered: await deliver(events, o.deliver !== false) };
  };

  // --- the API ------------------------------------------------------------------------------------------

  const customerView = (c: Customer, expand: Set<string>) => {
    const out: Customer = structuredClone(c);
    if (!expand.has('invoice_credit_balance')) delete out.invoice_credit_balance;
    return out;
  };

  const subscriptionView = (s: Subscription, expand: Set<string>, prefix = '') => {
    const out: Subscription = structuredClone(s);
    if (expand.has(`${prefix}customer`)) out.customer = customerView(ledger.customer(s.customer as string), new Set());
    if (expand.has(`${prefix}default_payment_method`) && typeof s.default_payment_method === 'string')
      out.default_payment_method = structuredClone(ledger.paymentMethod(s.default_payment_method));
    if (expand.has(`${prefix}items.data.price.product`)) {
      for (const item of out.items.data)
        item.price.product = structuredClone(ledger.products.get(item.price.product as string) ?? item.price.product);
    }
    return out;
  };

  const byId = <T>(map: Map<string, T>, what: string, id: string): T => {
    const v = map.get(id);
    if (!v) throw new LedgerError(404, 'resource_missing', `No such ${what}: '${id}'`, 'id');
    return v;
  };

  const route = (method: string, parts: string[], params: Record<string, unknown>): { status: number; body: unknown; lost?: boolean } => {
    const ok = (body: unknown) => ({ status: 200, body: structuredClone(body) });
    const [v1, a, b, c, d] = parts;
    if (v1 !== 'v1') throw new LedgerError(404, '', `Unrecognized request URL (${method}: /${parts.join('/')}).`);
    const expand = expansions(params);
    const key = `${method} ${a ?? ''}${b ? ' {id}' : ''}${c ? ` ${c}` : ''}${d ? ' {id}' : ''}`;
    switch (key) {
      case 'GET subscriptions {id}':
        allowOnly(expand, ['customer', 'items.data.price.product', 'latest_invoice', 'default_payment_method']);
        return ok(subscriptionView(ledger.subscription(b as string), expand));
      case 'GET subscriptions': {
        allowOnly(expand, ['data.customer', 'data.default_payment_method']);
        oneOf(params, 'status', [
          'active',
          'past_due',
          'unpaid',
          'canceled',
          'incomplete',
          'incomplete_expired',
          'trialing',
          'all',
          'ended',
          'paused',
        ]);
        const status = params.status ?? null;
        const customer = params.customer ?? null;
        const items = [...ledger.subscriptions.values()].filter(
          (s) =>
            (status === 'all' || (status === null ? s.status !== 'canceled' && s.status !== 'incomplete_expired' : s.status === status)) &&
            (customer === null || s.customer === customer),
        );
        return ok(page(items, params, '/v1/subscriptions', (s) => subscriptionView(s, expand, 'data.')));
      }
      case 'GET payment_methods {id}':
        allowOnly(expand, []);
        return ok(ledger.paymentMethod(b as string));
      case 'GET customers {id}':
        allowOnly(expand, ['invoice_credit_balance']);
        return ok(customerView(ledger.customer(b as string), expand));
      case 'GET customers {id} balance_transactions':
        allowOnly(expand, []);
        ledger.customer(b as string);
        return ok(
          page([...(ledger.balanceTransactions.get(b as string) ?? [])].reverse(), params, `/v1/customers/${b}/balance_transactions`),
        );
      case 'POST customers {id} balance_transactions':
        return ok(ledger.createBalanceTransaction(b as string, params));
      case 'GET products {id}':
        return ok(byId(ledger.products, 'product', b as string));
      case 'GET invoices {id}':
        return ok(ledger.invoice(b as string));
      case 'GET invoices': {
        allowOnly(expand, []);
        oneOf(params, 'status', ['draft', 'open', 'paid', 'uncollectible', 'void']);
        const items = [...ledger.invoices.values()].filter(
          (i) =>
            (params.subscription === undefined || i.parent?.subscription_details?.subscription === params.subscription) &&
            (params.status === undefined || i.status === params.status),
        );
        return ok(page(items, params, '/v1/invoices'));
      }
      case 'GET invoice_payments': {
        allowOnly(expand, ['data.invoice']);
        oneOf(params, 'status', ['canceled', 'open', 'paid']);
        const payment = (params.payment ?? {}) as Record<string, unknown>;
        if (params.payment !== undefined && payment.type !== 'payment_intent' && payment.type !== 'payment_record') {
          throw new LedgerError(400, 'parameter_invalid_string', 'payment[type] must be payment_intent or payment_record', 'payment[type]');
        }
        const items = [...ledger.invoicePayments.values()].filter(
          (p) =>
            (params.invoice === undefined || p.invoice === params.invoice) &&
            (payment.payment_intent === undefined || p.payment.payment_intent === payment.payment_intent) &&
            (params.status === undefined || p.status === params.status),
        );
        return ok(
          page(items, params, '/v1/invoice_payments', (p) =>
            expand.has('data.invoice') ? { ...p, invoice: ledger.invoice(p.invoice as string) } : p,
          ),
        );
      }
      case 'GET charges {id}': {
        allowOnly(expand, ['refunds']);
        const charge = ledger.charge(b as string);
        const out: Charge = structuredClone(charge);
        if (expand.has('refunds')) {
          const refunds = [...ledger.refunds.values()].filter((r) => r.charge === charge.id).reverse();
          out.refunds = list(refunds.slice(0, 10), refunds.length > 10, `/v1/charges/${charge.id}/refunds`);
        }
        return ok(out);
      }
      case 'GET refunds': {
        const items = [...ledger.refunds.values()].filter((r) => params.charge === undefined || r.charge === params.charge);
        return ok(page(items, params, '/v1/refunds'));
      }
      case 'GET coupons {id}':
        return ok(byId(ledger.coupons, 'coupon', b as string));
      case 'POST coupons':
        return ok(ledger.createCoupon(params));
      case 'GET promotion_codes {id}':
        return ok(byId(ledger.promotionCodes, 'promotion code', b as string));
      case 'GET promotion_codes': {
        oneOf(params, 'active', BOOLEAN);
        const items = [...ledger.promotionCodes.values()].filter(
          (p) =>
            (typeof params.code !== 'string' || p.code.toUpperCase() === params.code.toUpperCase()) &&
            (params.active === undefined || String(p.active) === params.active) &&
            (params.coupon === undefined || p.promotion.coupon === params.coupon),
        );
        return ok(page(items, params, '/v1/promotion_codes'));
      }
      case 'POST promotion_codes':
        return ok(ledger.createPromotionCode(params));
      default:
        break;
    }
    // Checkout lives under /v1/checkout/sessions.
    if (a === 'checkout' && b === 'sessions') {
      if (method === 'GET' && c && !d) return ok(byId(ledger.sessions, 'checkout.session', c));
      if (method === 'GET' && !c) {
        oneOf(params, 'status', ['open', 'complete', 'expired']);
        const items = [...ledger.sessions.values()].filter(
          (s) =>
            (params.subscription === undefined || s.subscription === params.subscription) &&
            (params.status === undefined || s.status === params.status),
        );
        return ok(page(items, params, '/v1/checkout/sessions'));
      }
    }
    const connected = connect.route(method, parts, params);
    if (connected) return connected;
    throw new LedgerError(404, '', `Unrecognized request URL (${method}: /${parts.join('/')}).`);
  };

  /** A write that committed but whose answer is lost (connect.failAfterCommit): a 500 instead. */
  const lostAnswer = (res: ServerResponse) =>
    apiError(res, 500, 'api_error', undefined, 'An unknown error occurred (injected after the write was committed).', null, {
      'stripe-should-retry': 'true',
    });

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean);
    // Ids have digits or capitals (sub_9nz…, cs_test_…, refloop-pct-1000-once); resource names never do.
    const label = `${method} /${parts.map((p, i) => (i > 1 && /[0-9A-Z]/.test(p) ? '{id}' : p)).join('/')}`;
    counts[label] = (counts[label] ?? 0) + 1;
    versions.push(req.headers['stripe-version'] as string | undefined);
    const body = method === 'POST' ? await readBody(req) : '';
    if (method === 'POST') keys.push(req.headers['idempotency-key'] as string | undefined);
    if (faults.left > 0) {
      faults.left -= 1;
      if (faults.status === 429)
        return apiError(res, 429, 'invalid_request_error', 'rate_limit', 'Too many requests hit the API too quickly.', null, {
          'retry-after': String(faults.retryAfter),
        });
      return apiError(res, faults.status, 'api_error', undefined, 'An unknown error occurred (injected).', null, {
        'stripe-should-retry': 'true',
      });
    }
    const presented = apiKeyOf(req.headers.authorization);
    if (presented !== secretKey) {
      if (presented === null)
        return apiError(
          res,
          401,
          'invalid_request_error',
          undefined,
          "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'), or as the basic auth username.",
        );
      return apiError(res, 401, 'invalid_request_error', undefined, `Invalid API Key provided: ${presented.slice(0, 8)}********`);
    }
    const version = req.headers['stripe-version'];
    if (version !== undefined && version !== STRIPE_API_VERSION)
      return apiError(
        res,
        400,
        'invalid_request_error',
        'api_version_invalid',
        `Invalid Stripe API version: ${String(version)}. The emulator speaks ${STRIPE_API_VERSION}.`,
      );
    if (method === 'POST' && body && !String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return apiError(res, 400, 'invalid_request_error', undefined, 'Invalid request: the body must be application/x-www-form-urlencoded.');
    }
    let params: Record<string, unknown>;
    try {
      params = decodeForm(method === 'POST' ? body : url.search.slice(1));
    } catch (err) {
      return apiError(res, 400, 'invalid_request_error', 'parameter_invalid_string', `Invalid request: ${(err as Error).message}`);
    }
    const idemKey = method === 'POST' ? (req.headers['idempotency-key'] as string | undefined) : undefined;
    if (idemKey !== undefined) {
      const fingerprint = `${url.pathname}?${body}`;
      const stored = idempotency.get(idemKey);
      if (stored) {
        if (stored.params !== fingerprint) {
          return apiError(
            res,
            400,
            'idempotency_error',
            undefined,
            `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idemKey}' if you meant to execute a different request.`,
          );
        }
        return send(res, stored.status, stored.body, { 'idempotent-replayed': 'true', 'idempotency-key': idemKey });
      }
      // Only a result is saved: a request refused by validation saves nothing (Stripe's rule), so a corrected
      // retry with the same key runs.
      const out = route(method, parts, params);
      idempotency.set(idemKey, { params: fingerprint, status: out.status, body: out.body });
      if (out.lost) return lostAnswer(res);
      return send(res, out.status, out.body, { 'idempotency-key': idemKey });
    }
    const out = route(method, parts, params);
    if (out.lost) return lostAnswer(res);
    return send(res, out.status, out.body);
  };

  // --- control endpoints (the CLI) ----------------------------------------------------------------------

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
      if (typeof v !== 'string' || v === '') throw new LedgerError(400, 'parameter_missing', `${key} is required`);
      return v;
    };
    const metadata = (key: string) => {
      const v = p[key];
      if (v === undefined) return undefined;
      if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.values(v).every((x) => typeof x === 'string'))
        throw new LedgerError(400, 'parameter_invalid_string', `${key} must be an object of strings`);
      return v as Record<string, string>;
    };
    const chargeOf = () => (typeof p.charge_id === 'string' ? p.charge_id : ledger.chargeOfInvoice(str('invoice_id')).id);
    const summary = (s: { delivered: DeliveredEvent[] }) =>
      s.delivered.map((d) => ({ event_id: d.event.id, type: d.event.type, status: d.status }));
    const actions: Record<string, () => Promise<unknown>> = {
      checkout: async () => {
        const s = await handle.checkout({
          email: str('email'),
          ...(typeof p.price_id === 'string' ? { priceId: p.price_id } : {}),
          ...(typeof p.currency === 'string' ? { currency: p.currency } : {}),
          ...(typeof p.quantity === 'number' ? { quantity: p.quantity } : {}),
          ...(typeof p.client_reference_id === 'string' ? { clientReferenceId: p.client_reference_id } : {}),
          ...(metadata('metadata') ? { metadata: metadata('metadata') } : {}),
          ...(metadata('subscription_metadata') ? { subscriptionMetadata: metadata('subscription_metadata') } : {}),
          ...(typeof p.promotion_code === 'string' ? { promotionCode: p.promotion_code } : {}),
          ...(typeof p.card === 'string' ? { card: p.card } : {}),
        });
        const r = s.result;
        return {
          checkout_session_id: r.session.id,
          subscription_id: r.subscription.id,
          customer_id: r.subscription.customer,
          invoice_id: r.invoice.id,
          charge_id: r.charge?.id ?? null,
          amount_paid: r.invoice.amount_paid,
          events: summary(s),
        };
      },
      renew: async () => {
        const s = await handle.renew(str('subscription_id'));
        return {
          invoice_id: s.result.invoice.id,
          charge_id: s.result.charge?.id ?? null,
          amount_paid: s.result.invoice.amount_paid,
          credit_applied: s.result.invoice.starting_balance - (s.result.invoice.ending_balance ?? 0),
          events: summary(s),
        };
      },
      fail: async () => {
        const s = await handle.failPayment(str('subscription_id'));
        return { invoice_id: s.result.invoice.id, status: s.result.invoice.status, events: summary(s) };
      },
      cancel: async () => ({ events: summary(await handle.cancel(str('subscription_id'))) }),
      'update-payment-method': async () => {
        const s = await handle.updatePaymentMethod(str('subscription_id'), str('card'));
        return { payment_method_id: s.result.subscription.default_payment_method, events: summary(s) };
      },
      refund: async () => {
        const s = await handle.refund(chargeOf(), typeof p.amount === 'number' ? { amount: p.amount } : {});
        return {
          refund_id: s.result.refund.id,
          charge_id: s.result.charge.id,
          amount: s.result.refund.amount,
          amount_refunded: s.result.charge.amount_refunded,
          events: summary(s),
        };
      },
      dispute: async () => {
        const s = await handle.dispute(chargeOf());
        return { dispute_id: s.result.dispute.id, amount: s.result.dispute.amount, events: summary(s) };
      },
      state: async () => ({
        prices: [...ledger.prices.values()].map((x) => ({
          id: x.id,
          nickname: x.nickname,
          unit_amount: x.unit_amount,
          currency: x.currency,
          recurring: x.recurring,
        })),
        customers: [...ledger.customers.values()].map((x) => ({
          id: x.id,
          email: x.email,
          balance: x.balance,
          invoice_credit_balance: x.invoice_credit_balance,
        })),
        subscriptions: [...ledger.subscriptions.values()].map((x) => ({
          id: x.id,
          status: x.status,
          customer: x.customer,
          metadata: x.metadata,
          current_period_end: x.items.data[0]?.current_period_end,
        })),
        invoices: [...ledger.invoices.values()].map((x) => ({
          id: x.id,
          subscription: x.parent?.subscription_details?.subscription,
          status: x.status,
          total: x.total,
          amount_paid: x.amount_paid,
          credit_applied: x.starting_balance - (x.ending_balance ?? 0),
        })),
        charges: [...ledger.charges.values()].map((x) => ({
          id: x.id,
          amount: x.amount,
          amount_refunded: x.amount_refunded,
          disputed: x.disputed,
        })),
        coupons: [...ledger.coupons.values()].map((x) => ({
          id: x.id,
          percent_off: x.percent_off,
          amount_off: x.amount_off,
          currency: x.currency,
          times_redeemed: x.times_redeemed,
        })),
        promotion_codes: [...ledger.promotionCodes.values()].map((x) => ({
          id: x.id,
          code: x.code,
          coupon: x.promotion.coupon,
          active: x.active,
          times_redeemed: x.times_redeemed,
        })),
      }),
    };
    const run = actions[action];
    if (!run) return send(res, 404, { error: `unknown action ${action}` });
    send(res, 200, await run());
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const isControl = url.pathname.startsWith('/_emulator/');
    const work = url.pathname.startsWith('/_emulator/connect/')
      ? connect.page(req, res, url)
      : isControl
        ? control(req, res, url.pathname.slice('/_emulator/'.length))
        : api(req, res, url);
    work.catch((err: unknown) => {
      if (res.headersSent) return;
      if (err instanceof LedgerError)
        return isControl
          ? send(res, err.status, { error: err.message })
          : apiError(res, err.status, err.type, err.code || undefined, err.message, err.param);
      apiError(res, 500, 'api_error', undefined, err instanceof Error ? err.message : String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const handle: StripeEmulator = {
    url: `http://127.0.0.1:${port}`,
    port,
    secretKey,
    webhookSecret,
    ledger,
    connect: connect.handle,
    setWebhookUrl: (u) => void (webhookUrl = u),
    failNext: (count, status, retryAfterSeconds = 1) => void (faults = { left: count, status, retryAfter: retryAfterSeconds }),
    callCounts: () => ({ ...counts }),
    versionsSeen: () => [...versions],
    idempotencyKeysSeen: () => [...keys],
    events: () => [...built],
    checkout: ({ deliver: d, ...p }) => simulate(ledger.checkout(p), { deliver: d }),
    renew: (id, o) => simulate(ledger.renew(id), o),
    failPayment: (id, o) => simulate(ledger.failPayment(id), o),
    cancel: (id, o) => simulate(ledger.cancel(id), o),
    updatePaymentMethod: (id, card, o) => simulate(ledger.updatePaymentMethod(id, card), o),
    refund: (id, p = {}) => simulate(ledger.refund(id, p), p),
    dispute: (id, o) => simulate(ledger.dispute(id), o),
    redeliver: async (eventId) => {
      const first = built.find((d) => d.event.id === eventId);
      if (!first) throw new LedgerError(404, 'resource_missing', `No such event: '${eventId}'`);
      const again: DeliveredEvent = {
        event: first.event,
        rawBody: first.rawBody,
        signature: signatureHeader(webhookSecret, first.rawBody, signatureTime()),
        status: null,
      };
      built.push(again);
      return (await enqueue([again]))[0] as DeliveredEvent;
    },
    sign: (rawBody, t = signatureTime()) => signatureHeader(webhookSecret, rawBody, t),
    stop: async () => {
      stopped = true;
      for (const a of inFlight) a.abort();
      await chain.catch(() => undefined);
      await connect.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return handle;
}
