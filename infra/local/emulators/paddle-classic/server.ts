// Paddle Classic emulator for `npm start` and the integration tests, its HTTP surface: the vendor API
// (/vendors/api/2.0/...), the checkout order lookup (/checkout/api/1.0/order) and signed, form-encoded
// webhook alerts POSTed one at a time in order, in the shapes docs/providers/paddle-classic.md describes.
// The state and its rules are the ledger's (./ledger.ts). Test code drives the money side (checkout,
// renewals, failures, cancellations, refunds) through the methods below; the `paddle` CLI drives the same
// methods through the /_emulator control endpoints. Faults for tests: `setMode('down' | 'error')`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  EmulatorError,
  Ledger,
  type EmulatorCoupon,
  type EmulatorModifier,
  type EmulatorPayment,
  type EmulatorPlan,
  type EmulatorSubscription,
  type LedgerOptions,
  type SignedAlert,
  type VendorParams,
} from './ledger';

export {
  EmulatorError,
  type EmulatorCoupon,
  type EmulatorModifier,
  type EmulatorPayment,
  type EmulatorPlan,
  type EmulatorSubscription,
} from './ledger';

export interface DeliveredAlert {
  /** Signed: includes p_signature. */
  fields: Record<string, string>;
  /** HTTP status from the webhook target; null if not delivered or the connection failed. */
  status: number | null;
}

export interface PaddleEmulatorOptions extends LedgerOptions {
  /** Default 0 = a free port; listens on 127.0.0.1. */
  port?: number;
  /** Where signed alerts are POSTed (application/x-www-form-urlencoded); null = do not deliver. */
  webhookUrl?: string | null;
}

type Mode = 'up' | 'down' | 'error';
type Deliver = { deliver?: boolean };

export interface PaddleEmulator {
  /** http://127.0.0.1:<port> */
  url: string;
  /** `${url}/vendors/api`: the client appends /2.0/subscription/users etc. */
  vendorsApiUrl: string;
  /** `${url}/checkout/api`: the client appends /1.0/order?checkout_id=... */
  checkoutApiUrl: string;
  vendorId: number;
  authCode: string;
  publicKeyPem: string;
  setWebhookUrl(url: string | null): void;
  /** 'up' normal; 'down' = every API request answers HTTP 503; 'error' = HTTP 200 with Paddle error 120. */
  setMode(mode: Mode): void;
  createPlan(p: {
    name: string;
    billing_type: EmulatorPlan['billing_type'];
    billing_period?: number;
    trial_days?: number;
    prices: Record<string, string>;
  }): EmulatorPlan;
  plans(): EmulatorPlan[];
  /**
   * Creates subscription + first paid payment + order. Sends subscription_created then
   * subscription_payment_succeeded (if no trial). `processingMs`: the order answers "processing" for
   * this long after the checkout. `deliver: false` builds and signs the alerts but does not POST them.
   */
  checkout(p: {
    plan_id: number;
    email: string;
    currency?: string;
    quantity?: number;
    passthrough?: string;
    processingMs?: number;
    deliver?: boolean;
    /** A coupon code (created through /2.1/product/create_coupon): discounts the first payment. */
    coupon?: string;
  }): Promise<{ checkout_id: string; subscription: EmulatorSubscription; payment: EmulatorPayment | null; alerts: DeliveredAlert[] }>;
  /** Next paid payment (status active), next_bill_date moves on by one plan interval. */
  renew(subscription_id: number, o?: Deliver): Promise<{ payment: EmulatorPayment; alerts: DeliveredAlert[] }>;
  /** subscription_payment_failed; the subscription becomes past_due. */
  failPayment(subscription_id: number, o?: Deliver): Promise<{ alerts: DeliveredAlert[] }>;
  /** subscription_updated with old_* / new_* fields. */
  updateSubscription(
    subscription_id: number,
    p: { plan_id?: number; state?: EmulatorSubscription['state'] },
    o?: Deliver,
  ): Promise<{ subscription: EmulatorSubscription; alerts: DeliveredAlert[] }>;
  /** subscription_cancelled; state deleted. */
  cancel(subscription_id: number, o?: Deliver): Promise<{ subscription: EmulatorSubscription; alerts: DeliveredAlert[] }>;
  /** subscription_payment_refunded, refund_type full or partial. */
  refund(payment_id: number, p?: { amount?: string; deliver?: boolean }): Promise<{ payment: EmulatorPayment; alerts: DeliveredAlert[] }>;
  subscriptions(): EmulatorSubscription[];
  payments(subscription_id?: number): EmulatorPayment[];
  modifiers(subscription_id?: number): EmulatorModifier[];
  coupons(): EmulatorCoupon[];
  /** Vendor/checkout API requests received per path, for exactly-once assertions. */
  callCounts(): Record<string, number>;
  /** Signs arbitrary alert fields with the emulator's private key. */
  sign(fields: Record<string, string>): Record<string, string>;
  stop(): Promise<void>;
}

const DELIVERY_TIMEOUT_MS = 5_000;
const MAX_BODY_BYTES = 1024 * 1024;

export async function startPaddleEmulator(options: PaddleEmulatorOptions = {}): Promise<PaddleEmulator> {
  const ledger = new Ledger(options);

  let webhookUrl = options.webhookUrl ?? null;
  let mode: Mode = 'up';
  const counts: Record<string, number> = {};
  // Alerts go out one at a time in creation order, across concurrent calls too.
  let deliveryChain: Promise<unknown> = Promise.resolve();
  const inFlight = new Set<AbortController>();
  let stopped = false;

  // --- alerts ----------------------------------------------------------------------------------

  const post = async (fields: Record<string, string>): Promise<number | null> => {
    const target = webhookUrl;
    if (!target || stopped) return null;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), DELIVERY_TIMEOUT_MS);
    inFlight.add(abort);
    try {
      const res = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        signal: abort.signal,
      });
      await res.arrayBuffer().catch(() => undefined);
      return res.status;
    } catch {
      // A down target is part of what the emulator is for; report it, never throw.
      return null;
    } finally {
      clearTimeout(timer);
      inFlight.delete(abort);
    }
  };

  /** POSTs the alerts the ledger built (and saved), in order, unless deliver is false. */
  const send = async (alerts: SignedAlert[], deliver = true): Promise<DeliveredAlert[]> => {
    if (!deliver) return alerts.map((fields) => ({ fields, status: null }));
    const run = deliveryChain.then(async () => {
      const out: DeliveredAlert[] = [];
      for (const fields of alerts) out.push({ fields, status: await post(fields) });
      return out;
    });
    deliveryChain = run.catch(() => undefined);
    return run;
  };

  // --- the money side: the ledger's simulations, their alerts delivered ------------------------------

  const createPlan: PaddleEmulator['createPlan'] = (p) => ledger.createPlan(p);
  const checkout: PaddleEmulator['checkout'] = async ({ deliver, ...p }) => {
    const out = ledger.checkout(p);
    return { ...out, alerts: await send(out.alerts, deliver) };
  };
  const renew: PaddleEmulator['renew'] = async (id, o = {}) => {
    const out = ledger.renew(id);
    return { ...out, alerts: await send(out.alerts, o.deliver) };
  };
  const failPayment: PaddleEmulator['failPayment'] = async (id, o = {}) => ({
    alerts: await send(ledger.failPayment(id).alerts, o.deliver),
  });
  const updateSubscription: PaddleEmulator['updateSubscription'] = async (id, p, o = {}) => {
    const out = ledger.updateSubscription(id, p);
    return { ...out, alerts: await send(out.alerts, o.deliver) };
  };
  const cancel: PaddleEmulator['cancel'] = async (id, o = {}) => {
    const out = ledger.cancel(id);
    return { ...out, alerts: await send(out.alerts, o.deliver) };
  };
  const refund: PaddleEmulator['refund'] = async (paymentId, { deliver, ...p } = {}) => {
    const out = ledger.refund(paymentId, p);
    return { ...out, alerts: await send(out.alerts, deliver) };
  };

  // --- HTTP ----------------------------------------------------------------------------------------

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
    res.end(text);
  };

  const readBody = (req: IncomingMessage): Promise<string> =>
    new Promise((ok, failRead) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          failRead(new EmulatorError('body too large'));
          req.pause();
        } else chunks.push(chunk);
      });
      req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
      req.on('error', failRead);
    });

  /** Form or JSON body to a flat string map (JSON numbers and booleans become their text, as in a form). */
  const parseParams = (req: IncomingMessage, body: string): VendorParams | null => {
    if ((req.headers['content-type'] ?? '').toLowerCase().includes('application/json')) {
      let parsed: unknown;
      try {
        parsed = body.trim() === '' ? {} : JSON.parse(body);
      } catch {
        return null;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
      const out: VendorParams = {};
      for (const [k, v] of Object.entries(parsed)) {
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
      }
      return out;
    }
    return Object.fromEntries(new URLSearchParams(body));
  };

  const handleVendor = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (req.method !== 'POST') return json(res, 405, { error: 'Method Not Allowed' }, { allow: 'POST' });
    const route = ledger.vendorMethod(path.slice('/vendors/api'.length));
    const body = await readBody(req);
    if (!route) return json(res, 200, { success: false, error: { code: 101, message: 'Bad method call' } });
    const params = parseParams(req, body);
    if (!params) return json(res, 200, { success: false, error: { code: 101, message: 'Bad method call' } });
    if (params.vendor_id !== String(ledger.vendorId) || params.vendor_auth_code !== ledger.authCode) {
      return json(res, 200, { success: false, error: { code: 107, message: "You don't have permission to access this resource" } });
    }
    const result = route(params);
    if ('error' in result) return json(res, 200, { success: false, error: { code: result.error[0], message: result.error[1] } });
    return json(res, 200, { success: true, response: result.response });
  };

  const handleCheckout = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => {
    if (path !== '/checkout/api/1.0/order') return json(res, 404, { error: { code: 101, message: 'Bad method call' } });
    if (req.method !== 'GET') return json(res, 405, { error: 'Method Not Allowed' }, { allow: 'GET' });
    return json(res, 200, ledger.order(query.get('checkout_id')));
  };

  /** The CLI's side door: JSON in, JSON out, the same methods as the tests call. */
  const summary = (alerts: DeliveredAlert[]) =>
    alerts.map((a) => ({ alert_name: a.fields.alert_name, alert_id: a.fields.alert_id, status: a.status }));

  const handleControl = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const action = path.slice('/_emulator/'.length);
    if (action === 'state') {
      if (req.method !== 'GET') return json(res, 405, { error: 'Method Not Allowed' }, { allow: 'GET' });
      return json(res, 200, {
        vendor_id: ledger.vendorId,
        webhook_url: webhookUrl,
        mode,
        plans: ledger.plans(),
        subscriptions: ledger.subscriptions(),
        payments: ledger.payments(),
        modifiers: ledger.modifiers(),
        coupons: ledger.coupons(),
      });
    }
    if (req.method !== 'POST') return json(res, 405, { error: 'Method Not Allowed' }, { allow: 'POST' });
    let input: Record<string, unknown>;
    try {
      const body = await readBody(req);
      const parsed: unknown = body.trim() === '' ? {} : JSON.parse(body);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      input = parsed as Record<string, unknown>;
    } catch {
      return json(res, 400, { error: 'the body must be a JSON object' });
    }
    const int = (name: string): number => {
      const value = typeof input[name] === 'string' ? Number(input[name]) : input[name];
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new EmulatorError(`${name} must be an integer`);
      return value;
    };
    const optional = <T>(name: string, read: (n: string) => T): T | undefined => (input[name] === undefined ? undefined : read(name));
    const str = (name: string): string => {
      if (typeof input[name] !== 'string') throw new EmulatorError(`${name} must be a string`);
      return input[name] as string;
    };
    const run: Record<string, () => Promise<unknown> | unknown> = {
      checkout: async () => {
        const out = await checkout({
          plan_id: int('plan_id'),
          email: str('email'),
          currency: optional('currency', str),
          quantity: optional('quantity', int),
          passthrough: optional('passthrough', str),
          processingMs: optional('processing_ms', int),
          coupon: optional('coupon', str),
        });
        return { ...out, alerts: summary(out.alerts) };
      },
      renew: async () => {
        const out = await renew(int('subscription_id'));
        return { ...out, alerts: summary(out.alerts) };
      },
      fail: async () => ({ alerts: summary((await failPayment(int('subscription_id'))).alerts) }),
      update: async () => {
        const out = await updateSubscription(int('subscription_id'), {
          plan_id: optional('plan_id', int),
          state: optional('state', str) as EmulatorSubscription['state'] | undefined,
        });
        return { ...out, alerts: summary(out.alerts) };
      },
      cancel: async () => {
        const out = await cancel(int('subscription_id'));
        return { ...out, alerts: summary(out.alerts) };
      },
      refund: async () => {
        const out = await refund(int('payment_id'), { amount: optional('amount', str) });
        return { ...out, alerts: summary(out.alerts) };
      },
      plan: () =>
        createPlan({
          name: str('name'),
          billing_type: str('billing_type') as EmulatorPlan['billing_type'],
          billing_period: optional('billing_period', int),
          trial_days: optional('trial_days', int),
          prices: (input.prices ?? {}) as Record<string, string>,
        }),
      mode: () => {
        const wanted = str('mode');
        if (wanted !== 'up' && wanted !== 'down' && wanted !== 'error') throw new EmulatorError('mode must be up, down or error');
        mode = wanted;
        return { mode };
      },
    };
    const handler = run[action];
    if (!handler) return json(res, 404, { error: `unknown control action "${action}"` });
    try {
      return json(res, 200, await handler());
    } catch (err) {
      if (err instanceof EmulatorError) return json(res, err.status, { error: err.message });
      throw err;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const path = url.pathname;
    const isVendor = path.startsWith('/vendors/api/');
    const isCheckout = path.startsWith('/checkout/api/');
    if (isVendor || isCheckout) {
      counts[path] = (counts[path] ?? 0) + 1;
      if (mode === 'down') return json(res, 503, { error: 'Service Unavailable' });
      if (mode === 'error') {
        // The checkout API has no success/response envelope; its errors are a bare `error` object.
        const error = { code: 120, message: 'Internal error' };
        return json(res, 200, isVendor ? { success: false, error } : { error });
      }
      return isVendor ? handleVendor(req, res, path) : handleCheckout(req, res, path, url.searchParams);
    }
    if (path.startsWith('/_emulator/')) return handleControl(req, res, path);
    return json(res, 404, { error: 'Not Found' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      console.error('[paddle-emulator] failed to answer:', err);
      if (!res.headersSent) json(res, err instanceof EmulatorError ? err.status : 500, { error: String(err) });
      else res.end();
    });
  });
  const port = await new Promise<number>((ok, failListen) => {
    server.once('error', failListen);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', failListen);
      const address = server.address();
      ok(typeof address === 'object' && address ? address.port : (options.port ?? 0));
    });
  });
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    url: baseUrl,
    vendorsApiUrl: `${baseUrl}/vendors/api`,
    checkoutApiUrl: `${baseUrl}/checkout/api`,
    vendorId: ledger.vendorId,
    authCode: ledger.authCode,
    publicKeyPem: ledger.publicKeyPem,
    setWebhookUrl: (url) => {
      webhookUrl = url;
    },
    setMode: (m) => {
      mode = m;
    },
    createPlan,
    plans: () => ledger.plans(),
    checkout,
    renew,
    failPayment,
    updateSubscription,
    cancel,
    refund,
    subscriptions: () => ledger.subscriptions(),
    payments: (id) => ledger.payments(id),
    modifiers: (id) => ledger.modifiers(id),
    coupons: () => ledger.coupons(),
    callCounts: () => ({ ...counts }),
    sign: (fields) => ledger.sign(fields),
    stop: async () => {
      stopped = true;
      for (const abort of inFlight) abort.abort();
      await deliveryChain;
      await new Promise<void>((done, failClose) => {
        server.close((err) => (err ? failClose(err) : done()));
        // Keep-alive sockets (fetch keeps them) would otherwise hold close() open.
        server.closeAllConnections();
      });
    },
  };
}
