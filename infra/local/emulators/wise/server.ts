// Wise emulator for the tests (and, once wired, `npm start`): the calls the Wise rail makes
// (shared/rails/wise/adapter.ts), in Wise's wire format, over the ledger (./ledger.ts) on 127.0.0.1.
//
//   GET  /v1/profiles                                         personal + business profile
//   POST /v3/profiles/{p}/quotes, GET …/quotes/{id}           UUID ids, 30-minute expiry, one currency
//   POST /v1/accounts, GET /v1/accounts/{id}                  email recipients
//   POST /v1/transfers, GET /v1/transfers/{id}                customerTransactionId replay (200, same transfer)
//   PUT  /v1/transfers/{id}/cancel                            unfunded transfers only (else 409)
//   POST/GET /v3/profiles/{p}/batch-groups, GET/PATCH …/{g}   versions (409 on a stale one), statuses
//   POST /v3/profiles/{p}/batch-groups/{g}/transfers          a transfer into a NEW group
//   POST /v3/profiles/{p}/batch-payments/{g}/payments         balance funding: COMPLETED, or REJECTED with
//                                                             errorCode when short; 403 + x-2fa-approval
//                                                             when SCA is required (knob)
//   GET|PUT /v1/simulation/transfers/{id}/{state}             the sandbox's state simulation
//   POST/GET /v3/profiles/{p}/subscriptions                   a test notification to the URL first
//
// Every call needs `Authorization: Bearer <api token>` (else 401 {error: "unauthorized", error_description}).
// Each state change is a `transfers#state-change` event, signed SHA256withRSA over the exact body
// (`X-Signature-SHA256`, base64) with the emulator's RSA key (its public key: `publicKeyPem`), with a fresh
// `X-Delivery-Id`, POSTed one at a time in order to the webhook URL and the subscriptions' URLs. Faults for
// tests, per request: `failNext(label, {status, afterCommit})` answers the next matching call with a 429 or
// a 5xx, before or after the ledger committed it. `/_emulator/{state,balance,sca,simulate}` (no token, loopback)
// let a CLI look and move states by hand. The batch-group listing is the emulator's way for the rail
// to find a group by name after a lost answer (docs/payouts/wise.md "Retries").
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ledger, SIMULATED_STATES, WiseError, type LedgerOptions, type SimulatedState, type StateChange, type Transfer } from './ledger';

export interface WiseEmulatorOptions extends LedgerOptions {
  /** Default 0 = a free port; listens on 127.0.0.1. */
  port?: number;
  /** The personal API token; default random. */
  apiToken?: string;
  /** The RSA private key (PEM) that signs webhooks; default a new 2048-bit key. */
  privateKeyPem?: string;
  /** Where signed events are POSTed; null = not delivered (still recorded). */
  webhookUrl?: string | null;
}

export interface DeliveredWebhook {
  eventType: string;
  rawBody: string;
  headers: Record<string, string>;
  /** HTTP status per target URL; null when not delivered. */
  status: number | null;
}

export interface Fault {
  status: 429 | 500 | 502 | 503;
  /** The call is carried out, then answered with the fault (the client cannot know it happened). */
  afterCommit?: boolean;
  /** How many matching calls; default 1. */
  count?: number;
}

export interface WiseEmulator {
  /** http://127.0.0.1:<port>: the API base URL (the connection's api_url). */
  url: string;
  port: number;
  apiToken: string;
  /** The business profile's id (the connection's profile_id). */
  profileId: number;
  /** The public key that verifies its webhooks (the connection's webhook_public_key). */
  publicKeyPem: string;
  privateKeyPem: string;
  ledger: Ledger;
  setWebhookUrl(url: string | null): void;
  /** The business profile's balance in `currency`, major units. */
  balance(currency: string): number;
  setBalance(currency: string, amount: number): void;
  /** While on, funding answers 403 with `x-2fa-approval` (Wise's SCA challenge). */
  requireSca(on: boolean): void;
  /** The next matching call(s) answer the fault; `label` as callCounts names it, e.g. `POST /v1/transfers`. */
  failNext(label: string, fault: Fault): void;
  /** API calls received, by `METHOD /path` with ids replaced by `{id}`. */
  callCounts(): Record<string, number>;
  /** Every transfer made so far (replays make none). */
  transfers(): Transfer[];
  /** Moves a transfer as the sandbox's simulation does; resolves once its webhooks were POSTed. */
  simulate(transferId: number | string, state: SimulatedState): Promise<{ transfer: Transfer; delivered: DeliveredWebhook[] }>;
  /** Every webhook built so far, in order. */
  webhooks(): DeliveredWebhook[];
  /** Signs a body as a delivery is signed (base64 SHA256withRSA). */
  sign(rawBody: string): string;
  /** Resolves when every webhook queued so far was POSTed. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const DELIVERY_TIMEOUT_MS = 5_000;
const MAX_BODY_BYTES = 256 * 1024;

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', 'x-trace-id': randomUUID(), ...headers });
  res.end(body === undefined ? '' : JSON.stringify(body));
};

/** Wise's system error body (5xx, 429). */
const systemError = (status: number, path: string, message: string) => ({
  timestamp: new Date().toISOString(),
  status,
  error:
    status === 429
      ? 'Too Many Requests'
      : status === 502
        ? 'Bad Gateway'
        : status === 503
          ? 'Service Unavailable'
          : 'Internal Server Error',
  exception: 'EmulatorInjectedFault',
  message,
  path,
});

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new WiseError(413, 'request.too.large', 'The body is too large.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `METHOD /path` with numeric and UUID segments as `{id}`. */
export function labelOf(method: string, pathname: string): string {
  const parts = pathname.split('/').filter(Boolean);
  return `${method} /${parts.map((p) => (/^\d+$/.test(p) || /^[0-9a-f]{8}-[0-9a-f-]{27}$/i.test(p) ? '{id}' : p)).join('/')}`;
}

export async function startWiseEmulator(options: WiseEmulatorOptions = {}): Promise<WiseEmulator> {
  const ledger = new Ledger(options);
  const apiToken = options.apiToken ?? randomUUID();
  let privateKey: KeyObject;
  if (options.privateKeyPem) privateKey = createPrivateKey(options.privateKeyPem);
  else privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicKeyPem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  let webhookUrl = options.webhookUrl ?? null;
  let sca = false;
  const faults: { label: string; fault: Fault; left: number }[] = [];
  const counts: Record<string, number> = {};
  const subscriptions: { id: string; name: string; trigger_on: string; url: string; profile: number; created_at: string }[] = [];
  const built: DeliveredWebhook[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  const inFlight = new Set<AbortController>();
  let stopped = false;

  const signBody = (rawBody: string) => sign('sha256', Buffer.from(rawBody, 'utf8'), privateKey).toString('base64');

  // --- webhooks -----------------------------------------------------------------------------------------

  const post = async (target: string, rawBody: string, headers: Record<string, string>): Promise<number | null> => {
    if (stopped) return null;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), DELIVERY_TIMEOUT_MS);
    inFlight.add(abort);
    try {
      const res = await fetch(target, { method: 'POST', headers, body: rawBody, signal: abort.signal });
      await res.arrayBuffer().catch(() => undefined);
      return res.status;
    } catch {
      return null; // A target that is down is reported, never thrown.
    } finally {
      clearTimeout(timer);
      inFlight.delete(abort);
    }
  };

  const targetsFor = (eventType: string): string[] => [
    ...new Set([...(webhookUrl ? [webhookUrl] : []), ...subscriptions.filter((s) => s.trigger_on === eventType).map((s) => s.url)]),
  ];

  const envelope = (c: StateChange, subscriptionId: string): string =>
    // Wise's key order (as its published sample delivery), no whitespace.
    JSON.stringify({
      data: {
        resource: { id: c.transferId, profile_id: c.profileId, account_id: c.accountId, type: 'transfer' },
        current_state: c.currentState,
        previous_state: c.previousState,
        occurred_at: c.occurredAt,
      },
      subscription_id: subscriptionId,
      event_type: 'transfers#state-change',
      schema_version: '2.0.0',
      sent_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });

  const deliver = (changes: StateChange[]): Promise<DeliveredWebhook[]> => {
    const subscriptionId =
      subscriptions.find((s) => s.trigger_on === 'transfers#state-change')?.id ?? '00000000-0000-4000-8000-000000000001';
    const prepared = changes.map((c) => {
      const rawBody = envelope(c, subscriptionId);
      const d: DeliveredWebhook = {
        eventType: 'transfers#state-change',
        rawBody,
        headers: {
          'content-type': 'application/json',
          'x-signature-sha256': signBody(rawBody),
          'x-delivery-id': randomUUID(),
          'user-agent': 'Wise-Webhooks (emulator)',
        },
        status: null,
      };
      built.push(d);
      return d;
    });
    const run = chain.then(async () => {
      for (const d of prepared) for (const target of targetsFor(d.eventType)) d.status = await post(target, d.rawBody, d.headers);
      return prepared;
    });
    chain = run.catch(() => undefined);
    return run;
  };

  // --- the API ------------------------------------------------------------------------------------------

  const route = async (method: string, parts: string[], body: Record<string, unknown>, query: URLSearchParams) => {
    const [v, a, b, c, d, e] = parts;
    const ok = (result: unknown, status = 200, headers: Record<string, string> = {}) => ({
      status,
      body: structuredClone(result),
      headers,
    });
    if (v === 'v1' && a === 'profiles' && !b && method === 'GET') return ok(ledger.profiles());
    if (v === 'v1' && a === 'accounts') {
      if (!b && method === 'POST') return ok(ledger.createRecipient(body));
      if (b && !c && method === 'GET') return ok(ledger.recipient(b));
    }
    if (v === 'v1' && a === 'transfers') {
      if (!b && method === 'POST') {
        return ok(ledger.createTransfer(body, null, null).transfer);
      }
      if (b && !c && method === 'GET') return ok(ledger.transfer(b));
      if (b && c === 'cancel' && method === 'PUT') {
        const r = ledger.cancelTransfer(b);
        void deliver(r.changes);
        return ok(r.transfer);
      }
    }
    if (v === 'v1' && a === 'simulation' && b === 'transfers' && c && d && !e && (method === 'GET' || method === 'PUT')) {
      if (!(SIMULATED_STATES as readonly string[]).includes(d))
        throw new WiseError(404, 'simulation.state.unknown', `No simulation to ${d}: one of ${SIMULATED_STATES.join(', ')}.`);
      const r = ledger.simulate(c, d as SimulatedState);
      void deliver(r.changes);
      return ok(r.transfer);
    }
    if (v === 'v3' && a === 'profiles' && b) {
      if (c === 'quotes') {
        if (!d && method === 'POST') return ok(ledger.createQuote(b, body));
        if (d && !e && method === 'GET') return ok(ledger.quote(b, d));
      }
      if (c === 'batch-groups') {
        if (!d && method === 'POST') return ok(ledger.createGroup(b, body));
        if (!d && method === 'GET') {
          const offset = Number(query.get('offset') ?? 0);
          const limit = Math.min(100, Number(query.get('limit') ?? 100));
          return ok(
            ledger
              .listGroups(b)
              .slice(offset, offset + limit)
              .map(view),
          );
        }
        if (d && !e && method === 'GET') return ok(view(ledger.group(b, d)));
        if (d && !e && method === 'PATCH') {
          const r = ledger.updateGroup(b, d, body);
          void deliver(r.changes);
          return ok(view(r.group));
        }
        if (d && e === 'transfers' && method === 'POST') return ok(ledger.createTransfer(body, d, b).transfer);
      }
      if (c === 'batch-payments' && d && e === 'payments' && method === 'POST') {
        ledger.group(b, d);
        if (sca)
          throw new WiseError(
            403,
            'sca.required',
            'You are forbidden to send this request: strong customer authentication is required.',
            null,
            [],
            {
              'x-2fa-approval-result': 'REJECTED',
              'x-2fa-approval': randomUUID(),
            },
          );
        const r = ledger.fundGroup(b, d, body);
        void deliver(r.changes);
        return ok(r.payment, 201);
      }
      if (c === 'subscriptions') {
        ledger.profile(b);
        if (!d && method === 'GET') return ok(subscriptions.filter((s) => String(s.profile) === b).map(subscriptionView));
        if (!d && method === 'POST') return ok(subscriptionView(await subscribe(Number(b), body)), 201);
      }
    }
    throw new WiseError(404, 'not.found', `No such endpoint: ${method} /${parts.join('/')}.`);
  };

  const view = (g: ReturnType<Ledger['group']> | ReturnType<Ledger['listGroups']>[number]) => {
    const { profile: _p, funded: _f, ...rest } = g as ReturnType<Ledger['group']>;
    return rest;
  };
  const subscriptionView = (s: (typeof subscriptions)[number]) => ({
    id: s.id,
    name: s.name,
    delivery: { version: '2.0.0', url: s.url },
    trigger_on: s.trigger_on,
    scope: { domain: 'profile', id: String(s.profile) },
    created_by: { type: 'user', id: String(ledger.userId) },
    created_at: s.created_at,
  });

  /** Wise sends a test notification first and refuses the subscription unless the URL answers 2xx. */
  const subscribe = async (profile: number, body: Record<string, unknown>) => {
    const delivery = (body.delivery ?? {}) as Record<string, unknown>;
    if (typeof body.name !== 'string' || typeof body.trigger_on !== 'string' || typeof delivery.url !== 'string')
      throw new WiseError(422, 'NOT_VALID', 'name, trigger_on and delivery.url are required.');
    const url = delivery.url;
    const rawBody = JSON.stringify({
      data: {},
      subscription_id: null,
      event_type: body.trigger_on,
      schema_version: '2.0.0',
      sent_at: new Date().toISOString(),
    });
    const status = await post(url, rawBody, {
      'content-type': 'application/json',
      'x-signature-sha256': signBody(rawBody),
      'x-delivery-id': randomUUID(),
      'x-test-notification': 'true',
    });
    if (status === null || status < 200 || status >= 300)
      throw new WiseError(422, 'INVALID_CALLBACK_URL', `The test notification to ${url} was not answered with a 2xx.`, 'delivery.url');
    const s = { id: randomUUID(), name: body.name, trigger_on: body.trigger_on, url, profile, created_at: new Date().toISOString() };
    subscriptions.push(s);
    return s;
  };

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const method = req.method ?? 'GET';
    const label = labelOf(method, url.pathname);
    counts[label] = (counts[label] ?? 0) + 1;
    const raw = method === 'GET' ? '' : await readBody(req);
    const i = faults.findIndex((f) => f.label === label && f.left > 0);
    const fault = i < 0 ? null : (faults[i] as (typeof faults)[number]);
    if (fault) {
      fault.left -= 1;
      if (fault.left === 0) faults.splice(i, 1);
    }
    const faultReply = (f: Fault) =>
      send(
        res,
        f.status,
        systemError(f.status, url.pathname, f.status === 429 ? 'Too many requests (injected).' : 'An internal error occurred (injected).'),
        f.status === 429 ? { 'retry-after': '1' } : {},
      );
    if (fault && !fault.fault.afterCommit) return faultReply(fault.fault);
    const auth = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    if (!auth || auth[1] !== apiToken) return send(res, 401, { error: 'unauthorized', error_description: 'Invalid token' });
    let body: Record<string, unknown> = {};
    if (raw !== '') {
      try {
        const parsed = JSON.parse(raw) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
        body = parsed as Record<string, unknown>;
      } catch {
        return send(res, 400, { errors: [{ code: 'NOT_VALID', message: 'The body must be a JSON object.', arguments: [] }] });
      }
    }
    const out = await route(method, url.pathname.split('/').filter(Boolean), body, url.searchParams);
    if (fault?.fault.afterCommit) return faultReply(fault.fault);
    return send(res, out.status, out.body, out.headers);
  };

  // --- control endpoints (a CLI moves states by hand; loopback only, no token) ---------------------------

  const control = async (req: IncomingMessage, res: ServerResponse, action: string) => {
    const raw = req.method === 'POST' ? await readBody(req) : '';
    let p: Record<string, unknown> = {};
    try {
      p = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      return send(res, 400, { error: 'body must be JSON' });
    }
    const actions: Record<string, () => Promise<unknown>> = {
      state: async () => ({
        profile_id: ledger.business.id,
        balances: Object.fromEntries([...ledger.balances.entries()].map(([k, v]) => [k.split(':')[1], v])),
        sca_required: sca,
        batch_groups: [...ledger.groups.values()].map((g) => ({
          id: g.id,
          name: g.name,
          status: g.status,
          version: g.version,
          funded: g.funded,
          transfer_ids: g.transferIds,
        })),
        transfers: [...ledger.transfers.values()].map((t) => ({
          id: t.id,
          status: t.status,
          customer_transaction_id: t.customerTransactionId,
          amount: t.targetValue,
          currency: t.targetCurrency,
          email: ledger.recipients.get(t.targetAccount)?.details.email ?? null,
        })),
      }),
      balance: async () => {
        if (typeof p.currency !== 'string' || typeof p.amount !== 'number')
          throw new WiseError(400, 'NOT_VALID', 'currency and amount are required.');
        ledger.setBalance(p.currency, p.amount);
        return { currency: p.currency, amount: ledger.balance(p.currency) };
      },
      sca: async () => {
        sca = p.on === true;
        return { sca_required: sca };
      },
      simulate: async () => {
        if (typeof p.state !== 'string' || !(SIMULATED_STATES as readonly string[]).includes(p.state))
          throw new WiseError(400, 'NOT_VALID', `state must be one of ${SIMULATED_STATES.join(', ')}.`);
        const r = ledger.simulate(String(p.transfer_id), p.state as SimulatedState);
        const delivered = await deliver(r.changes);
        return { transfer_id: r.transfer.id, status: r.transfer.status, webhooks: delivered.map((d) => ({ status: d.status })) };
      },
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
      if (err instanceof WiseError) return send(res, err.status, err.body, err.headers);
      send(res, 500, systemError(500, url.pathname, err instanceof Error ? err.message : String(err)));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    apiToken,
    profileId: ledger.business.id,
    publicKeyPem,
    privateKeyPem,
    ledger,
    setWebhookUrl: (u) => void (webhookUrl = u),
    balance: (currency) => ledger.balance(currency),
    setBalance: (currency, amount) => ledger.setBalance(currency, amount),
    requireSca: (on) => void (sca = on),
    failNext: (label, fault) => void faults.push({ label, fault, left: fault.count ?? 1 }),
    callCounts: () => ({ ...counts }),
    transfers: () => [...ledger.transfers.values()].map((t) => structuredClone(t)),
    simulate: async (transferId, state) => {
      const r = ledger.simulate(transferId, state);
      return { transfer: structuredClone(r.transfer), delivered: await deliver(r.changes) };
    },
    webhooks: () => [...built],
    sign: signBody,
    idle: async () => {
      await chain.catch(() => undefined);
    },
    stop: async () => {
      stopped = true;
      for (const a of inFlight) a.abort();
      await chain.catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
