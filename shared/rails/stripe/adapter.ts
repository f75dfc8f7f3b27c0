// The Stripe Connect (Express) payout rail: the port (../port.ts) over Stripe's HTTP API, with `fetch`, no
// SDK. Form-encoded bodies with bracket keys, `Authorization: Bearer <secret key>`, `Stripe-Version` pinned
// (./wire.ts), a per-call timeout. docs/payouts/stripe.md is the operator's side of it.
//
// Ids (docs/payouts/stripe.md "Ids"):
// - a member's method is a connected Express account `acct_…`, created once per member with
//   `Idempotency-Key: refloop-acct-<member id>` (a retry answers the same account);
// - a payout `po_…` is one transfer from the platform's balance, `Idempotency-Key: refloop-transfer-po_…`,
//   `transfer_group = pb_…`, `metadata[refloop_payout_id]` and `metadata[refloop_batch_id]`. Sending a
//   batch again replays each transfer Stripe already made: nothing is paid twice;
// - a batch's transfers are read back by `transfer_group` (the rail's batch id is `pb_…` itself).
//
// Outcomes: a created transfer has moved the money (Stripe transfers are synchronous): `paid`, railItemId
// `tr_…`. A transfer reversed in full is `failed` ("reversed"). Errors:
// - 400 `balance_insufficient`: before any transfer of the batch went through, RailBatchError
//   `insufficient_funds` (every payout of the batch fails with it); after one went through, that item fails;
// - 400 about the destination (transfers not active on the account, no such account): that item fails;
// - 400 `idempotency_error` (the same payout sent earlier with another amount or destination): the item
//   stays `processing`, the reconciliation reads what Stripe has;
// - 401/403: RailBatchError `unauthorized`; 429, 5xx, 409 `idempotency_key_in_use`, timeouts and network
//   errors: retried a few times in the call (Retry-After when sent), then RailBatchError `unavailable`
//   (retryable: sending the same batch again is safe, whatever was already made is replayed). Once a
//   transfer of the batch went through, such
//   an error no longer fails the batch: the transfers made are answered and the others stay `processing`
//   (`not_confirmed`) until the batch is sent again. A retryable RailBatchError must never fail payouts:
//   a transfer may have been made before the answer was lost; only sending the same ids again settles it.
// - 403 `account_invalid` on an account read: not one of the platform's accounts (not ready).
import { randomUUID } from 'node:crypto';
import { RailBatchError, type PayoutRail, type RailBatchResult, type RailConnection, type RailItemOutcome, type RailPayout } from '../port';
import {
  STRIPE_API_VERSION,
  encodeForm,
  toStripeAmount,
  type AccountLink,
  type ApiErrorBody,
  type ConnectedAccount,
  type FormValue,
  type List,
  type Transfer,
} from './wire';
import { readinessOf, transferOutcome } from './outcomes';

export { readinessOf, transferOutcome };

export const DEFAULT_API_URL = 'https://api.stripe.com';

export interface StripeRailOptions {
  /** Per HTTP call; default 10 s. */
  timeoutMs?: number;
  /** Attempts per call on 429, 5xx, timeouts and network errors; default 3. */
  attempts?: number;
  /** The first backoff (doubled each attempt) when no Retry-After is sent; default 250 ms. */
  backoffMs?: number;
}

/** Stripe refused the call (a 4xx other than 401/403/429). */
export class StripeRailError extends Error {
  override readonly name = 'StripeRailError';
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    readonly detail: string,
    readonly param: string | null,
  ) {
    super(`Stripe: HTTP ${status} ${type}${code ? `/${code}` : ''}: ${detail}`);
  }
}

const MAX_RETRY_AFTER_MS = 5_000;
const seg = (id: string) => encodeURIComponent(id);

export class StripeConnectClient {
  private readonly base: string;
  private readonly secretKey: string;
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly backoffMs: number;

  constructor(connection: RailConnection, options: StripeRailOptions = {}) {
    this.base = (connection.apiUrl || DEFAULT_API_URL).replace(/\/+$/, '');
    this.secretKey = connection.credentials.secret_key ?? '';
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.attempts = Math.max(1, options.attempts ?? 3);
    this.backoffMs = options.backoffMs ?? 250;
  }

  /**
   * One call. GET params go in the query, POST params in the form body with `idempotencyKey` (a random one
   * when not given). Throws RailBatchError (unauthorized, unavailable) or StripeRailError.
   */
  async request<T>(method: 'GET' | 'POST', path: string, params: Record<string, FormValue> = {}, idempotencyKey?: string): Promise<T> {
    const form = encodeForm(params);
    const url = this.base + path + (method === 'GET' && form ? `?${form}` : '');
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.secretKey}`,
      'Stripe-Version': STRIPE_API_VERSION,
      Accept: 'application/json',
    };
    if (method === 'POST') {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      headers['Idempotency-Key'] = idempotencyKey ?? randomUUID();
    }
    let last = '';
    for (let attempt = 1; ; attempt++) {
      let waitMs = this.backoffMs * 2 ** (attempt - 1);
      try {
        const res = await fetch(url, {
          method,
          headers,
          body: method === 'POST' ? form : undefined,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        const text = await res.text();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        const e = (body as Partial<ApiErrorBody> | undefined)?.error;
        // 403 `account_invalid`: a connected account that is not the platform's (or does not exist).
        if (res.status === 401 || (res.status === 403 && e?.code !== 'account_invalid'))
          throw new RailBatchError(
            'unauthorized',
            `Stripe refused the secret key (HTTP ${res.status}): ${e?.message ?? 'unauthorized'}`,
            false,
          );
        // 409 `idempotency_key_in_use`: another request with the same key is still running (a concurrent
        // send of the same payout); its answer is replayed once it is done.
        const locked = res.status === 409 && (res.headers.get('stripe-should-retry') === 'true' || e?.code === 'idempotency_key_in_use');
        if (res.status === 429 || res.status >= 500 || locked || body === undefined) {
          last = `HTTP ${res.status}${e?.message ? `: ${e.message}` : ''}`;
          const after = Number(res.headers.get('retry-after'));
          if (Number.isFinite(after) && after > 0) waitMs = Math.min(after * 1000, MAX_RETRY_AFTER_MS);
          if (res.headers.get('stripe-should-retry') === 'false') attempt = this.attempts;
        } else if (res.ok) {
          return body as T;
        } else {
          throw new StripeRailError(
            res.status,
            String(e?.type ?? 'invalid_request_error'),
            String(e?.code ?? ''),
            String(e?.message ?? ''),
            e?.param ?? null,
          );
        }
      } catch (err) {
        if (err instanceof RailBatchError || err instanceof StripeRailError) throw err;
        last = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      }
      if (attempt >= this.attempts)
        throw new RailBatchError(
          'unavailable',
          `Stripe did not answer ${method} ${path} (${last}) after ${attempt} attempt(s); try again later`,
          true,
        );
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }

  getAccount(id: string): Promise<ConnectedAccount> {
    return this.request('GET', `/v1/accounts/${seg(id)}`);
  }
}

/** `POST /v1/accounts`: the member's Express account, once per member (the key replays the same account). */
export async function createConnectedAccount(
  connection: RailConnection,
  memberId: string,
  email: string,
  options?: StripeRailOptions,
): Promise<ConnectedAccount> {
  return new StripeConnectClient(connection, options).request<ConnectedAccount>(
    'POST',
    '/v1/accounts',
    { type: 'express', email, capabilities: { transfers: { requested: true } }, metadata: { refloop_member_id: memberId } },
    `refloop-acct-${memberId}`,
  );
}

/** `POST /v1/account_links`: a single-use onboarding URL (about 5 minutes) for the member's portal. */
export async function createAccountLink(
  connection: RailConnection,
  accountId: string,
  refreshUrl: string,
  returnUrl: string,
  options?: StripeRailOptions,
): Promise<{ url: string; expires_at: number }> {
  const link = await new StripeConnectClient(connection, options).request<AccountLink>('POST', '/v1/account_links', {
    account: accountId,
    type: 'account_onboarding',
    refresh_url: refreshUrl,
    return_url: returnUrl,
  });
  return { url: link.url, expires_at: link.expires_at };
}

function itemFailure(payout: RailPayout, err: StripeRailError): RailItemOutcome {
  const base = { payoutId: payout.id, railItemId: null, railStatus: err.code || err.type };
  if (err.type === 'idempotency_error')
    return {
      ...base,
      state: 'processing',
      reason:
        'Stripe already has a transfer for this payout with another amount or destination; the reconciliation reads what Stripe made.',
    };
  if (err.code === 'balance_insufficient')
    return { ...base, state: 'failed', reason: "The platform's Stripe balance does not cover this transfer." };
  if (err.code === 'resource_missing' && err.param === 'destination')
    return {
      ...base,
      state: 'failed',
      reason:
        "The member's Stripe account is not one of the platform's connected accounts any more: the member has to set up payouts again.",
    };
  if (err.param === 'destination' || err.code === 'insufficient_capabilities_for_transfer')
    return {
      ...base,
      state: 'failed',
      reason: `The member's Stripe account cannot receive transfers yet (onboarding not finished or transfers not active): ${err.detail}`,
    };
  return { ...base, state: 'failed', reason: `Stripe refused the transfer: ${err.detail || err.code || err.type}` };
}

export function stripeRail(connection: RailConnection, options: StripeRailOptions = {}): PayoutRail {
  const client = new StripeConnectClient(connection, options);

  return {
    async verifyConnection() {
      await client.request('GET', '/v1/balance');
    },

    async readiness(destination) {
      try {
        return readinessOf(await client.getAccount(destination));
      } catch (err) {
        if (err instanceof StripeRailError && (err.status === 404 || err.code === 'account_invalid'))
          return { ready: false, reason: `No such Stripe account ${destination} on the platform: the member has to set up payouts again.` };
        throw err;
      }
    },

    async sendBatch(batchId, payouts) {
      const items: RailItemOutcome[] = [];
      let sent = 0;
      for (const [index, payout] of payouts.entries()) {
        try {
          const transfer = await client.request<Transfer>(
            'POST',
            '/v1/transfers',
            {
              amount: toStripeAmount(payout.amount, payout.currency),
              currency: payout.currency.toLowerCase(),
              destination: payout.destination,
              transfer_group: batchId,
              description: payout.note,
              metadata: { refloop_payout_id: payout.id, refloop_batch_id: batchId, refloop_member_id: payout.memberId },
            },
            `refloop-transfer-${payout.id}`,
          );
          sent += 1;
          items.push(transferOutcome(transfer, payout.id));
        } catch (err) {
          if (err instanceof RailBatchError && sent > 0) {
            // Some transfers went through: they are answered, and this one and the rest stay processing
            // (this one may even have been made); sending the batch again settles them, paying nothing twice.
            for (const rest of payouts.slice(index))
              items.push({
                payoutId: rest.id,
                state: 'processing',
                railStatus: 'not_confirmed',
                railItemId: null,
                reason: `Stripe did not confirm this transfer (${err.message}); sending the batch again settles it without paying twice.`,
              });
            break;
          }
          if (!(err instanceof StripeRailError)) throw err;
          if (err.code === 'balance_insufficient' && sent === 0)
            throw new RailBatchError(
              'insufficient_funds',
              `The platform's Stripe balance does not cover the batch (${err.detail || 'balance_insufficient'}). Add funds to the Stripe balance, then pay again.`,
              false,
            );
          items.push(itemFailure(payout, err));
        }
      }
      return { railBatchId: batchId, items };
    },

    async readBatch(batchId, railBatchId) {
      const group = railBatchId || batchId;
      const items = new Map<string, RailItemOutcome>();
      let after: string | undefined;
      for (;;) {
        const page = await client.request<List<Transfer>>('GET', '/v1/transfers', {
          transfer_group: group,
          limit: 100,
          starting_after: after,
        });
        for (const transfer of page.data) {
          const payoutId = transfer.metadata?.refloop_payout_id;
          if (payoutId && !items.has(payoutId)) items.set(payoutId, transferOutcome(transfer, payoutId));
        }
        const lastItem = page.data[page.data.length - 1];
        if (!page.has_more || !lastItem) break;
        after = lastItem.id;
      }
      return { railBatchId: group, items: [...items.values()] } satisfies RailBatchResult;
    },

    async cancelItem() {
      // A Stripe transfer has moved the money when it is created: there is nothing to cancel (a reversal
      // takes money back, which is a clawback, not a cancel).
      return false;
    },
  };
}
