// The PayPal Payouts adapter: the payout-rail port (../port.ts) over PayPal's REST API with fetch
// (docs/payouts/paypal.md).
//
// - OAuth2 client credentials (`POST /v1/oauth2/token`, HTTP Basic client_id:client_secret); the token is
//   kept per connection (API URL, client id and secret) until shortly before its `expires_in`, and fetched
//   again once when an API call answers 401 with it.
// - A batch `pb_…` is one `POST /v1/payments/payouts` with `sender_batch_id = pb_…` (a re-send `pb_…-r<n>`)
//   and one EMAIL item per payout with `sender_item_id = po_…`. PayPal refuses a `sender_batch_id` it has seen
//   in the last 30 days (400 USER_BUSINESS_ERROR on the field SENDER_BATCH_ID, with a link to the original):
//   that is "already sent", and the answer is the original batch read back. So sending the same batch again
//   after a 5xx, a timeout or a crash pays nothing twice.
// - Amounts: RailPayout.amount is Refloop's hundredths of the major unit; PayPal takes a decimal string, whole
//   units in JPY, HUF and TWD (PayPal refuses decimals there), else two decimals.
import { type PaypalItemErrors, itemOutcome } from './webhook';
import {
  type PayoutRail,
  RailBatchError,
  type RailBatchResult,
  type RailConnection,
  type RailItemOutcome,
  type RailPayout,
  type RailReadiness,
} from '../port';

/** Currencies PayPal takes without decimals. */
const NO_DECIMALS: ReadonlySet<string> = new Set(['JPY', 'HUF', 'TWD']);
const MAX_ITEMS = 15_000;
const PAGE_SIZE = 1000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The decimal string PayPal takes for `cents` hundredths of `currency`'s unit, or null when it cannot. */
export function paypalAmount(cents: number, currency: string): string | null {
  if (!Number.isSafeInteger(cents) || cents <= 0) return null;
  const whole = Math.floor(cents / 100);
  const rest = cents % 100;
  if (NO_DECIMALS.has(currency.toUpperCase())) return rest === 0 ? String(whole) : null;
  return `${whole}.${String(rest).padStart(2, '0')}`;
}

export interface PaypalRailOptions {
  /** Per HTTP call. */
  timeoutMs: number;
  /** The clock the token cache reads (tests). */
  nowMs?: () => number;
}

interface CachedToken {
  token: string;
  expiresAtMs: number;
}
const tokens = new Map<string, CachedToken>();

interface PaypalError {
  name?: string;
  message?: string;
  error?: string;
  error_description?: string;
  details?: { field?: string; issue?: string; description?: string }[];
  links?: { href?: string; rel?: string }[];
}

interface PaypalItem {
  payout_item_id?: string;
  transaction_status?: string;
  payout_item?: { sender_item_id?: string };
  errors?: PaypalItemErrors | null;
}

interface PaypalBatch {
  batch_header?: { payout_batch_id?: string; batch_status?: string };
  items?: PaypalItem[];
  total_pages?: number;
  links?: { href?: string; rel?: string }[];
}

class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
  get error(): PaypalError {
    return this.body && typeof this.body === 'object' ? (this.body as PaypalError) : {};
  }
}

/** What an error answer says, in one sentence. */
function described(answer: HttpAnswer): string {
  const e = answer.error;
  const detail = e.details?.[0];
  const head = e.message ?? e.error_description ?? e.name ?? e.error ?? `HTTP ${answer.status}`;
  const more = detail?.issue ? ` (${detail.field ? `${detail.field}: ` : ''}${detail.issue})` : '';
  return `${head}${more}`;
}

/** A batch-level error for an answer that is no success. */
function batchError(answer: HttpAnswer, what: string): RailBatchError {
  const s = answer.status;
  const e = answer.error;
  if (s === 401) return new RailBatchError('unauthorized', `PayPal refused the credentials while ${what}: ${described(answer)}.`, false);
  if (s === 403)
    return new RailBatchError(
      'unauthorized',
      `PayPal refused ${what}: ${described(answer)}. Payouts may not be enabled on the account, or the app lacks the Payouts scope.`,
      false,
    );
  if (s === 429) return new RailBatchError('unavailable', `PayPal is rate limiting (429) while ${what}; try again later.`, true);
  if (s >= 500) return new RailBatchError('unavailable', `PayPal is unavailable (HTTP ${s}) while ${what}; sending again is safe.`, true);
  if (e.name === 'INSUFFICIENT_FUNDS' || /insufficient/i.test(e.message ?? ''))
    return new RailBatchError('insufficient_funds', `PayPal: the balance cannot cover the batch (${described(answer)}).`, false);
  return new RailBatchError('invalid', `PayPal refused ${what}: ${described(answer)}.`, false);
}

export function paypalRail(connection: RailConnection, options: PaypalRailOptions): PayoutRail {
  const base = connection.apiUrl.replace(/\/+$/, '');
  const clientId = connection.credentials.client_id ?? '';
  const secret = connection.credentials.client_secret ?? '';
  const cacheKey = `${base}\u0000${clientId}\u0000${secret}`;
  const now = options.nowMs ?? Date.now;

  async function http(
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: string },
    what: string,
  ): Promise<HttpAnswer> {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: { Accept: 'application/json', ...init.headers },
        body: init.body,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (err) {
      const timeout = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new RailBatchError(
        'unavailable',
        timeout ? `PayPal did not answer in time while ${what}; sending again is safe.` : `PayPal could not be reached while ${what}.`,
        true,
      );
    }
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = null;
    }
    return new HttpAnswer(res.status, body);
  }

  async function token(): Promise<string> {
    const cached = tokens.get(cacheKey);
    if (cached && cached.expiresAtMs > now()) return cached.token;
    if (!clientId || !secret)
      throw new RailBatchError('unauthorized', 'The PayPal connection lacks its client_id or client_secret.', false);
    const answer = await http(
      'POST',
      '/v1/oauth2/token',
      {
        headers: {
          Authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      },
      'getting an access token',
    );
    const b = answer.body as { access_token?: unknown; expires_in?: unknown } | null;
    if (answer.status === 400 && answer.error.error === 'invalid_client')
      throw new RailBatchError('unauthorized', 'PayPal refused the client id and secret (invalid_client).', false);
    if (answer.status !== 200 || typeof b?.access_token !== 'string') throw batchError(answer, 'getting an access token');
    const expiresIn = typeof b.expires_in === 'number' && b.expires_in > 0 ? b.expires_in : 0;
    // Kept until shortly before it expires: 5 minutes, or half its life when it is shorter than 10.
    const margin = Math.min(300, expiresIn / 2);
    tokens.set(cacheKey, { token: b.access_token, expiresAtMs: now() + (expiresIn - margin) * 1000 });
    return b.access_token;
  }

  /** An authenticated API call; a 401 with a cached token fetches a new one once. */
  async function api(
    method: 'GET' | 'POST',
    path: string,
    what: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<HttpAnswer> {
    for (let attempt = 0; ; attempt++) {
      const bearer = await token();
      const answer = await http(
        method,
        path,
        {
          headers: { Authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        },
        what,
      );
      if (answer.status !== 401 || attempt > 0) return answer;
      tokens.delete(cacheKey);
    }
  }

  async function readAll(railBatchId: string): Promise<{ status: string; items: PaypalItem[] }> {
    const items: PaypalItem[] = [];
    let status = 'PENDING';
    for (let page = 1; ; page++) {
      const what = `reading batch ${railBatchId}`;
      const answer = await api(
        'GET',
        `/v1/payments/payouts/${encodeURIComponent(railBatchId)}?page=${page}&page_size=${PAGE_SIZE}&total_required=true`,
        what,
      );
      if (answer.status !== 200) throw batchError(answer, what);
      const b = answer.body as PaypalBatch;
      status = b.batch_header?.batch_status ?? status;
      const pageItems = b.items ?? [];
      items.push(...pageItems);
      const hasNext = (b.links ?? []).some((l) => l.rel === 'next');
      const pages = typeof b.total_pages === 'number' ? b.total_pages : null;
      if (pageItems.length === 0 || (pages !== null ? page >= pages : !hasNext)) break;
    }
    return { status, items };
  }

  const outcomeOf = (item: PaypalItem): RailItemOutcome | null => {
    const payoutId = item.payout_item?.sender_item_id;
    if (!payoutId) return null;
    return itemOutcome(payoutId, item.payout_item_id ?? null, item.transaction_status ?? 'PENDING', item.errors);
  };

  /**
   * The batch read back; with `payouts`, their outcomes in the order sent. A payout PayPal does not list is
   * still processing, unless the batch was denied, or it is the original of a duplicate batch id that lists
   * other items (`complete`): then PayPal never had it, and it failed.
   */
  async function read(railBatchId: string, payouts: readonly RailPayout[] | null, complete = false): Promise<RailBatchResult> {
    const { status, items } = await readAll(railBatchId);
    const outcomes = items.map(outcomeOf).filter((o): o is RailItemOutcome => o !== null);
    if (!payouts) return { railBatchId, items: outcomes };
    const byId = new Map(outcomes.map((o) => [o.payoutId, o]));
    const missing = (p: RailPayout): RailItemOutcome => {
      if (status === 'DENIED')
        return { payoutId: p.id, state: 'failed', railStatus: 'DENIED', railItemId: null, reason: 'PayPal denied the whole batch.' };
      if (complete && outcomes.length > 0)
        return {
          payoutId: p.id,
          state: 'failed',
          railStatus: 'NOT_IN_BATCH',
          railItemId: null,
          reason: 'PayPal already has this batch id without this payout: it was not sent.',
        };
      return { payoutId: p.id, state: 'processing', railStatus: 'PENDING', railItemId: null, reason: null };
    };
    return { railBatchId, items: payouts.map((p) => byId.get(p.id) ?? missing(p)) };
  }

  return {
    async verifyConnection() {
      tokens.delete(cacheKey);
      await token();
    },

    async readiness(destination: string): Promise<RailReadiness> {
      const email = destination.trim();
      if (email.length <= 127 && EMAIL.test(email)) return { ready: true, reason: null };
      return { ready: false, reason: 'PayPal pays an email address: the member has to give the email of their PayPal account.' };
    },

    async sendBatch(batchId, payouts) {
      if (payouts.length === 0) throw new RailBatchError('invalid', 'A PayPal batch needs at least one payout.', false);
      if (payouts.length > MAX_ITEMS) throw new RailBatchError('invalid', `PayPal takes at most ${MAX_ITEMS} payouts per batch.`, false);
      if (batchId.length > 256) throw new RailBatchError('invalid', 'The batch id is longer than PayPal allows (256).', false);
      const currency = (payouts[0] as RailPayout).currency.toUpperCase();
      const items = payouts.map((p, i) => {
        if (p.currency.toUpperCase() !== currency) throw new RailBatchError('invalid', 'A PayPal batch pays one currency.', false);
        if (p.id.length > 63) throw new RailBatchError('invalid', `Payout ${p.id} has an id longer than PayPal allows (63).`, false);
        const value = paypalAmount(p.amount, currency);
        if (value === null)
          throw new RailBatchError(
            'invalid',
            NO_DECIMALS.has(currency)
              ? `Payout ${p.id}: PayPal pays ${currency} in whole units only.`
              : `Payout ${p.id}: the amount must be positive (item ${i}).`,
            false,
          );
        return {
          recipient_type: 'EMAIL',
          amount: { value, currency },
          receiver: p.destination.trim(),
          note: p.note ?? 'Referral commission',
          sender_item_id: p.id,
          recipient_wallet: 'PAYPAL',
        };
      });
      const body = {
        sender_batch_header: {
          sender_batch_id: batchId,
          recipient_type: 'EMAIL',
          email_subject: 'You have a payout!',
          email_message: 'You have received a payout for your referrals. Thank you!',
        },
        items,
      };
      const what = `sending batch ${batchId}`;
      const answer = await api('POST', '/v1/payments/payouts', what, body);
      if (answer.status === 201 || answer.status === 200) {
        const id = (answer.body as PaypalBatch | null)?.batch_header?.payout_batch_id;
        if (!id)
          throw new RailBatchError('unavailable', `PayPal accepted batch ${batchId} without naming it; sending again is safe.`, true);
        return read(id, payouts);
      }
      const e = answer.error;
      if (
        answer.status === 400 &&
        e.name === 'USER_BUSINESS_ERROR' &&
        (e.details ?? []).some((d) => d.field?.toUpperCase() === 'SENDER_BATCH_ID')
      ) {
        // Already sent: PayPal names the original batch in a link.
        const original = (e.links ?? [])
          .map((l) => /\/v1\/payments\/payouts\/([^/?#]+)/.exec(l.href ?? '')?.[1])
          .find((x): x is string => typeof x === 'string');
        if (!original)
          throw new RailBatchError(
            'invalid',
            `PayPal already has batch ${batchId} but did not say which; read it with its PayPal batch id.`,
            false,
          );
        return read(decodeURIComponent(original), payouts, true);
      }
      throw batchError(answer, what);
    },

    readBatch: (_batchId, railBatchId) => read(railBatchId, null),

    async cancelItem(railItemId) {
      const what = `canceling item ${railItemId}`;
      const answer = await api('POST', `/v1/payments/payouts-item/${encodeURIComponent(railItemId)}/cancel`, what, undefined);
      if (answer.status === 200) return true;
      const name = answer.error.name;
      if (name === 'ITEM_ALREADY_CANCELLED') return true;
      if (answer.status === 400 || answer.status === 404) return false;
      throw batchError(answer, what);
    },
  };
}
