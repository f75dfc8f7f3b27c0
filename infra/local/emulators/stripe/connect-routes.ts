// The Stripe emulator's Connect API (payouts), mounted by ./server.ts behind the same authentication,
// Stripe-Version check, form decoding, Idempotency-Key replay and faults as the billing API:
//
//   POST /v1/accounts                      GET /v1/accounts/{id}
//   POST /v1/account_links                 GET /v1/balance
//   POST /v1/transfers                     GET /v1/transfers?transfer_group=&destination=  GET /v1/transfers/{id}
//   POST /v1/transfers/{id}/reversals
//
// and the onboarding page an Account Link opens, `/_emulator/connect/onboard/<token>` (GET shows it and uses
// the link up; its form POSTs back to the same path; then 303 to the link's return_url). Control endpoints
// (JSON, for a CLI): POST /_emulator/connect/balance {currency, amount}, POST /_emulator/connect/reverse
// {transfer_id, amount?}, POST /_emulator/connect/onboard-account {account_id}, GET /_emulator/connect/state.
//
// Events go to the rail's webhook URL (`setWebhookUrl`), one at a time in order, signed as Stripe does
// (`Stripe-Signature`): `transfer.*` with the platform endpoint's secret (`webhookSecret`), `account.updated`
// (top-level `account`) with the Connect endpoint's (`connectWebhookSecret`). Faults: `failAfterCommit(n)`
// makes the next n transfers commit (and their Idempotency-Key keep the real answer) while the caller gets a
// 500, as when a connection drops after Stripe wrote; 429 and 5xx before any write are the server's
// `failNext`.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { signatureHeader } from '../../../../shared/rails/stripe/webhook';
import type { ConnectEvent, Transfer } from '../../../../shared/rails/stripe/wire';
import { type ApiAnswer, ConnectLedger } from './connect-ledger';
import { LedgerError } from './ledger';

export interface ConnectOptions {
  /** The platform endpoint's signing secret (transfer events); default `whsec_` + random. */
  webhookSecret?: string;
  /** The Connect endpoint's signing secret (account.updated); default `whsec_` + random. */
  connectWebhookSecret?: string;
  /** Where the rail's events are POSTed; null = recorded, not delivered. */
  webhookUrl?: string | null;
  /** The platform's starting balance per currency, Stripe units; default 1,000,000.00 USD and EUR. */
  balance?: Record<string, number>;
}

export interface DeliveredConnectEvent {
  event: ConnectEvent;
  rawBody: string;
  signature: string;
  status: number | null;
}

export interface ConnectEmulator {
  ledger: ConnectLedger;
  webhookSecret: string;
  connectWebhookSecret: string;
  setWebhookUrl(url: string | null): void;
  /** Sets the platform's available balance in `currency` (Stripe units). */
  setBalance(currency: string, amount: number): void;
  /** The next `count` transfers are written, then answered 500 (the Idempotency-Key keeps the real answer). */
  failAfterCommit(count: number): void;
  /** Every transfer made so far, oldest first. */
  transfers(): Transfer[];
  /** Finishes an account's onboarding without the page (`account.updated`). */
  onboard(accountId: string, outcome?: 'complete' | 'incomplete'): Promise<DeliveredConnectEvent[]>;
  /** Reverses a transfer (all that is left, or `amount`): `transfer.reversed`. */
  reverse(transferId: string, amount?: number): Promise<DeliveredConnectEvent[]>;
  /** Every event built so far, in order. */
  events(): DeliveredConnectEvent[];
  /** Waits for the deliveries under way. */
  settle(): Promise<void>;
}

export interface ConnectRoutes {
  handle: ConnectEmulator;
  /** The API's answer, or null when the path is not Connect's. `lost`: answer 500 after saving it. */
  route(method: string, parts: string[], params: Record<string, unknown>): (ApiAnswer & { lost?: boolean }) | null;
  /** Serves `/_emulator/connect/…`. */
  page(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
  stop(): Promise<void>;
}

const secret = () => `whsec_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`;
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new LedgerError(400, '', 'body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function pageOf<T extends { id: string }>(items: T[], params: Record<string, unknown>, url: string) {
  const limit = params.limit === undefined ? 10 : Number(params.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new LedgerError(400, 'parameter_invalid_integer', 'limit must be an integer from 1 to 100', 'limit');
  const newestFirst = [...items].reverse();
  let start = 0;
  if (typeof params.starting_after === 'string') {
    const i = newestFirst.findIndex((t) => t.id === params.starting_after);
    if (i < 0) throw new LedgerError(404, 'resource_missing', `No such object: '${params.starting_after}'`, 'starting_after');
    start = i + 1;
  }
  return { object: 'list', data: newestFirst.slice(start, start + limit), has_more: start + limit < newestFirst.length, url };
}

export function createConnect(
  options: ConnectOptions & { now?: () => number; signatureTime: () => number; baseUrl: () => string },
): ConnectRoutes {
  const ledger = new ConnectLedger({ now: options.now, balance: options.balance });
  const webhookSecret = options.webhookSecret ?? secret();
  const connectWebhookSecret = options.connectWebhookSecret ?? secret();
  let webhookUrl = options.webhookUrl ?? null;
  let lostLeft = 0;
  const built: DeliveredConnectEvent[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  const inFlight = new Set<AbortController>();
  let stopped = false;

  const post = async (d: DeliveredConnectEvent): Promise<number | null> => {
    const target = webhookUrl;
    if (!target || stopped) return null;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 5_000);
    inFlight.add(abort);
    try {
      const res = await fetch(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'stripe-signature': d.signature,
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        },
        body: d.rawBody,
        signal: abort.signal,
      });
      await res.arrayBuffer().catch(() => undefined);
      return res.status;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
      inFlight.delete(abort);
    }
  };

  const deliver = (events: ConnectEvent[]): Promise<DeliveredConnectEvent[]> => {
    const prepared = events.map((event) => {
      const rawBody = JSON.stringify(event, null, 2);
      const key = event.account ? connectWebhookSecret : webhookSecret;
      const d: DeliveredConnectEvent = { event, rawBody, signature: signatureHeader(key, rawBody, options.signatureTime()), status: null };
      built.push(d);
      return d;
    });
    const run = chain.then(async () => {
      for (const d of prepared) d.status = await post(d);
      return prepared;
    });
    chain = run.catch(() => undefined);
    return run;
  };

  const ok = (body: unknown): ApiAnswer => ({ status: 200, body: structuredClone(body) });

  const route: ConnectRoutes['route'] = (method, parts, params) => {
    const [, a, b, c] = parts;
    const key = `${method} ${a ?? ''}${b ? ' {id}' : ''}${c ? ` ${c}` : ''}${parts.length > 4 ? ' …' : ''}`;
    switch (key) {
      case 'POST accounts':
        return ok(ledger.createAccount(params));
      case 'GET accounts {id}': {
        const account = ledger.accounts.get(b as string);
        if (account) return ok(account);
        // Stripe does not say whether an account exists when it is not one of the platform's.
        return {
          status: 403,
          body: {
            error: {
              type: 'invalid_request_error',
              code: 'account_invalid',
              message: `The provided key 'sk_test_****' does not have access to account '${b}' (or that account does not exist). Application access may have been revoked.`,
            },
          },
        };
      }
      case 'POST account_links':
        return ok(ledger.createAccountLink(params, options.baseUrl()));
      case 'GET balance': {
        const amounts = [...ledger.balance.entries()].map(([currency, amount]) => ({ amount, currency, source_types: { card: amount } }));
        return ok({
          object: 'balance',
          available: amounts,
          connect_reserved: [],
          livemode: false,
          pending: amounts.map((x) => ({ ...x, amount: 0, source_types: { card: 0 } })),
        });
      }
      case 'POST transfers': {
        const out = ledger.createTransfer(params);
        if ('error' in out) return out.error;
        void deliver(out.events);
        if (lostLeft > 0) {
          lostLeft -= 1;
          return { ...ok(out.transfer), lost: true };
        }
        return ok(out.transfer);
      }
      case 'GET transfers': {
        const items = [...ledger.transfers.values()].filter(
          (t) =>
            (params.transfer_group === undefined || t.transfer_group === params.transfer_group) &&
            (params.destination === undefined || t.destination === params.destination),
        );
        return ok(pageOf(items, params, '/v1/transfers'));
      }
      case 'GET transfers {id}':
        return ok(ledger.transfer(b as string));
      case 'POST transfers {id} reversals': {
        const out = ledger.reverse(b as string, params);
        void deliver(out.events);
        return ok(out.reversal);
      }
      default:
        return null;
    }
  };

  const handle: ConnectEmulator = {
    ledger,
    webhookSecret,
    connectWebhookSecret,
    setWebhookUrl: (u) => void (webhookUrl = u),
    setBalance: (currency, amount) => void ledger.balance.set(currency.toLowerCase(), amount),
    failAfterCommit: (count) => void (lostLeft = count),
    transfers: () => structuredClone([...ledger.transfers.values()]),
    onboard: (accountId, outcome = 'complete') => deliver(ledger.onboard(accountId, outcome)),
    reverse: (transferId, amount) => deliver(ledger.reverse(transferId, amount === undefined ? {} : { amount: String(amount) }).events),
    events: () => [...built],
    settle: async () => void (await chain),
  };

  const html = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body);
  };
  const redirect = (res: ServerResponse, to: string, status = 302) => {
    res.writeHead(status, { location: to });
    res.end();
  };
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const page: ConnectRoutes['page'] = async (req, res, url) => {
    const rest = url.pathname.slice('/_emulator/connect/'.length);
    const onboard = /^onboard\/([A-Za-z0-9_-]+)$/.exec(rest);
    if (onboard) {
      const token = onboard[1] as string;
      if (req.method === 'GET') {
        const visit = ledger.visit(token);
        if (!visit) return html(res, 404, '<!doctype html><title>Link not found</title><p>This onboarding link does not exist.</p>');
        if ('redirect' in visit) return redirect(res, visit.redirect);
        const account = ledger.account(visit.link.account);
        return html(
          res,
          200,
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Stripe Express onboarding (emulator)</title></head><body>
<h1>Set up payouts (Stripe emulator)</h1>
<p>Account <code>${esc(account.id)}</code>${account.email ? ` for ${esc(account.email)}` : ''}. The real page asks for identity and a bank account.</p>
<form method="post" action="/_emulator/connect/onboard/${esc(token)}">
<button type="submit" name="outcome" value="complete">Finish onboarding</button>
<button type="submit" name="outcome" value="incomplete">Submit without a bank account</button>
</form></body></html>`,
        );
      }
      if (req.method === 'POST') {
        const form = new URLSearchParams(await readText(req));
        const outcome = form.get('outcome') === 'incomplete' ? 'incomplete' : 'complete';
        const done = ledger.submit(token, outcome);
        if (!done) return html(res, 404, '<!doctype html><title>Link not found</title><p>This onboarding link does not exist.</p>');
        if ('redirect' in done) return redirect(res, done.redirect, 303);
        await deliver(done.events);
        return redirect(res, done.returnUrl, 303);
      }
      return json(res, 405, { error: 'GET or POST' });
    }
    const body = req.method === 'POST' ? await readText(req) : '';
    let p: Record<string, unknown>;
    try {
      p = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    } catch {
      return json(res, 400, { error: 'body must be JSON' });
    }
    const need = (k: string) => {
      if (typeof p[k] !== 'string' || p[k] === '') throw new LedgerError(400, 'parameter_missing', `${k} is required`);
      return p[k] as string;
    };
    const summary = (ds: DeliveredConnectEvent[]) => ds.map((d) => ({ event_id: d.event.id, type: d.event.type, status: d.status }));
    try {
      if (rest === 'state' && req.method === 'GET')
        return json(res, 200, {
          balance: Object.fromEntries(ledger.balance),
          accounts: [...ledger.accounts.values()].map((x) => ({
            id: x.id,
            email: x.email,
            details_submitted: x.details_submitted,
            payouts_enabled: x.payouts_enabled,
            transfers: x.capabilities.transfers ?? null,
          })),
          transfers: [...ledger.transfers.values()].map((t) => ({
            id: t.id,
            amount: t.amount,
            currency: t.currency,
            destination: t.destination,
            transfer_group: t.transfer_group,
            payout_id: t.metadata.refloop_payout_id ?? null,
            amount_reversed: t.amount_reversed,
          })),
        });
      if (rest === 'balance' && req.method === 'POST') {
        if (typeof p.amount !== 'number' || !Number.isInteger(p.amount) || p.amount < 0)
          throw new LedgerError(400, '', 'amount must be a non-negative integer');
        handle.setBalance(need('currency'), p.amount);
        return json(res, 200, { balance: Object.fromEntries(ledger.balance) });
      }
      if (rest === 'reverse' && req.method === 'POST')
        return json(res, 200, {
          events: summary(await handle.reverse(need('transfer_id'), typeof p.amount === 'number' ? p.amount : undefined)),
        });
      if (rest === 'onboard-account' && req.method === 'POST')
        return json(res, 200, {
          events: summary(await handle.onboard(need('account_id'), p.outcome === 'incomplete' ? 'incomplete' : 'complete')),
        });
    } catch (err) {
      if (err instanceof LedgerError) return json(res, err.status, { error: err.message });
      throw err;
    }
    return json(res, 404, { error: `unknown action connect/${rest}` });
  };

  return {
    handle,
    route,
    page,
    stop: async () => {
      stopped = true;
      for (const a of inFlight) a.abort();
      await chain.catch(() => undefined);
    },
  };
}
