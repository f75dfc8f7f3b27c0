// The Wise payout rail (shared/rails/port.ts) over Wise's HTTP API with a personal API token
// (`Authorization: Bearer <api_token>`), acting for the connection's business profile. docs/payouts/wise.md
// describes the calls; in short, a batch `pb_…` is one Wise batch group named `pb_…`:
//
//   find the group named pb_… (or create it)      GET/POST /v3/profiles/{p}/batch-groups
//   per payout: an email recipient                 POST /v1/accounts {type: "email", details: {email}}
//               a quote in the batch's currency    POST /v3/profiles/{p}/quotes
//               a transfer into the group          POST /v3/profiles/{p}/batch-groups/{g}/transfers
//                 customerTransactionId = UUIDv5 of po_… (./uuid.ts): sent again, Wise answers the transfer
//                 it already has, so a retried batch makes one transfer per payout
//   close the group (optimistic version check)     PATCH /v3/profiles/{p}/batch-groups/{g} {status: COMPLETED}
//   fund it from the balance                       POST /v3/profiles/{p}/batch-payments/{g}/payments {type: BALANCE}
//
// A retry after any failure picks up where the last attempt stopped: the group is found by name, the
// transfers are answered again, a closed group is not closed twice, and a group whose transfers have all
// left `incoming_payment_waiting` is not funded twice. Errors of the whole batch are RailBatchErrors: 401 and
// 403 (token), 403 with `x-2fa-approval` (Wise wants a strong customer authentication approval), insufficient
// funds (the group is then cancelled, so nothing of it can be paid later), 429 and 5xx (retryable). A payout
// Wise refuses on its own (a bad email, a refused quote) is a failed item with Wise's words.
import { currencyExponent } from '../../domain/currency';
import {
  RailBatchError,
  type PayoutRail,
  type RailBatchResult,
  type RailConnection,
  type RailItemOutcome,
  type RailPayout,
  type RailReadiness,
} from '../port';
import { customerTransactionId } from './uuid';
import { transferOutcome } from './webhook';

export interface WiseRailOptions {
  /** Per HTTP call; default 15 s. */
  timeoutMs?: number;
}

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

interface BatchGroup {
  id: string;
  version: number;
  name: string;
  sourceCurrency: string;
  status: string;
  transferIds?: number[];
}

interface Transfer {
  id: number;
  status: string;
  customerTransactionId?: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const SCA_MESSAGE = 'Wise asks for a strong customer authentication approval of this payment: approve it in Wise, then reconcile';
/** Batch groups that can still pay (a cancelled one is never reused). */
const CANCELLED_GROUP = new Set(['MARKED_FOR_CANCELLATION', 'PROCESSING_CANCEL', 'CANCELLED']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Wise's own words from an error body (validation `errors[]`, auth `error_description`, system `message`). */
function wiseWords(body: unknown): string {
  if (!isObject(body)) return typeof body === 'string' && body !== '' ? body.slice(0, 300) : 'no details';
  if (Array.isArray(body.errors) && body.errors.length > 0)
    return body.errors
      .map((e) => (isObject(e) ? [e.message, e.code].filter((x) => typeof x === 'string' && x !== '').join(' ') : String(e)))
      .join('; ');
  for (const k of ['error_description', 'message', 'error'] as const)
    if (typeof body[k] === 'string' && body[k] !== '') return body[k] as string;
  return 'no details';
}

/** The RailBatchError a refused call means for the whole batch (`what` names the call in words). */
function batchError(reply: Reply, what: string): RailBatchError {
  const words = wiseWords(reply.body);
  const s = reply.status;
  if (s === 401)
    return new RailBatchError(
      'unauthorized',
      `Wise refused the API token (401) while ${what}: ${words}. Check the token, that it has Full access, and its IP allow-list.`,
      false,
    );
  if (s === 403 && reply.headers.get('x-2fa-approval')) return new RailBatchError('sca_required', SCA_MESSAGE, false);
  if (s === 403)
    return new RailBatchError(
      'unauthorized',
      `Wise refused the call (403) while ${what}: ${words}. The token may be read-only, or not allowed for the profile.`,
      false,
    );
  if (s === 429) return new RailBatchError('unavailable', `Wise is rate limiting the calls (429) while ${what}; send again later.`, true);
  if (s >= 500) return new RailBatchError('unavailable', `Wise answered ${s} while ${what}: ${words}. Send again later.`, true);
  if (/insufficient/i.test(words))
    return new RailBatchError(
      'insufficient_funds',
      `Your Wise balance cannot cover the batch: ${words}. Top it up, then send again.`,
      false,
    );
  return new RailBatchError('invalid', `Wise refused the call (${s}) while ${what}: ${words}.`, false);
}

/** Minor units as the decimal amount Wise reads (1234 USD -> 12.34, 1000 JPY -> 1000). */
export function wiseAmount(minor: number, currency: string): number {
  const e = currencyExponent(currency);
  return Number((minor / 10 ** e).toFixed(e));
}

export function wiseRail(connection: RailConnection, options: WiseRailOptions = {}): PayoutRail {
  const base = connection.apiUrl.replace(/\/+$/, '');
  const token = connection.credentials.api_token ?? '';
  const profile = connection.credentials.profile_id ?? '';
  const timeoutMs = options.timeoutMs ?? 15_000;
  const p = `/v3/profiles/${encodeURIComponent(profile)}`;

  const call = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      // A DOMException (not always an Error of this realm): read by its name.
      const name = typeof err === 'object' && err !== null ? (err as { name?: unknown }).name : undefined;
      const timedOut = name === 'TimeoutError' || name === 'AbortError';
      throw new RailBatchError(
        'unavailable',
        timedOut ? `Wise did not answer ${method} ${path} within ${timeoutMs} ms.` : `Wise could not be reached (${String(err)}).`,
        true,
      );
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // Kept as text: its words go into the error.
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };

  /** The body of a 2xx answer; a RailBatchError otherwise. */
  const ok = async <T>(method: string, path: string, what: string, body?: unknown): Promise<T> => {
    const reply = await call(method, path, body);
    if (reply.status >= 200 && reply.status < 300) return reply.body as T;
    throw batchError(reply, what);
  };

  /** A refusal of one payout only (400/404/409/422): its words; any other failure throws for the batch. */
  const perItem = async <T>(method: string, path: string, what: string, body: unknown): Promise<{ value: T } | { refused: string }> => {
    const reply = await call(method, path, body);
    if (reply.status >= 200 && reply.status < 300) return { value: reply.body as T };
    if ([400, 404, 409, 422].includes(reply.status) && !/insufficient/i.test(wiseWords(reply.body)))
      return { refused: `Wise refused ${what} (${reply.status}): ${wiseWords(reply.body)}` };
    throw batchError(reply, what);
  };

  const getGroup = (id: string) => ok<BatchGroup>('GET', `${p}/batch-groups/${encodeURIComponent(id)}`, 'reading the batch group');
  const getTransfer = (id: number | string) =>
    ok<Transfer>('GET', `/v1/transfers/${encodeURIComponent(String(id))}`, `reading transfer ${id}`);

  /** The usable group named `name`, when the profile has one (a listing the API lacks counts as none). */
  const findGroup = async (name: string): Promise<BatchGroup | null> => {
    const limit = 100;
    for (let offset = 0; offset < 100 * limit; offset += limit) {
      const reply = await call('GET', `${p}/batch-groups?offset=${offset}&limit=${limit}`);
      if (reply.status === 404) return null;
      if (reply.status < 200 || reply.status >= 300) throw batchError(reply, 'listing the batch groups');
      const groups = Array.isArray(reply.body) ? (reply.body as BatchGroup[]) : [];
      const found = groups.find((g) => g.name === name && !CANCELLED_GROUP.has(g.status));
      if (found) return found;
      if (groups.length < limit) return null;
    }
    return null;
  };

  /** One payout into an open group: recipient, quote, transfer (answered again when it exists). */
  const addTransfer = async (group: BatchGroup, payout: RailPayout): Promise<Transfer | { refused: string }> => {
    const recipient = await perItem<{ id: number }>('POST', '/v1/accounts', 'the email recipient', {
      profile: Number(profile),
      type: 'email',
      currency: payout.currency,
      accountHolderName: payout.destination,
      details: { email: payout.destination },
    });
    if ('refused' in recipient) return recipient;
    const quote = await perItem<{ id: string }>('POST', `${p}/quotes`, 'the quote', {
      sourceCurrency: payout.currency,
      targetCurrency: payout.currency,
      targetAmount: wiseAmount(payout.amount, payout.currency),
      targetAccount: recipient.value.id,
      payOut: 'BALANCE',
    });
    if ('refused' in quote) return quote;
    const transfer = await perItem<Transfer>('POST', `${p}/batch-groups/${group.id}/transfers`, 'the transfer', {
      targetAccount: recipient.value.id,
      quoteUuid: quote.value.id,
      customerTransactionId: customerTransactionId(payout.id),
      details: { reference: (payout.note ?? 'Referral payout').slice(0, 35) },
    });
    return 'refused' in transfer ? transfer : transfer.value;
  };

  /** Closes the group; a version that moved meanwhile is read again once. */
  const complete = async (group: BatchGroup): Promise<BatchGroup> => {
    let current = group;
    for (let attempt = 0; ; attempt++) {
      const reply = await call('PATCH', `${p}/batch-groups/${current.id}`, { status: 'COMPLETED', version: current.version });
      if (reply.status >= 200 && reply.status < 300) return reply.body as BatchGroup;
      if (reply.status !== 409 || attempt > 0) throw batchError(reply, 'closing the batch group');
      current = await getGroup(current.id);
      if (current.status !== 'NEW') return current;
    }
  };

  const fund = async (group: BatchGroup): Promise<void> => {
    const reply = await call('POST', `${p}/batch-payments/${group.id}/payments`, { type: 'BALANCE' });
    const body = isObject(reply.body) ? reply.body : {};
    const rejected = reply.status >= 200 && reply.status < 300 && body.status === 'REJECTED';
    const insufficient = /insufficient/i.test(`${String(body.errorCode ?? '')} ${wiseWords(reply.body)}`);
    if (reply.status >= 200 && reply.status < 300 && !rejected) return;
    if ((rejected || reply.status === 422 || reply.status === 400) && insufficient) {
      // The group cannot stay fundable: its payouts fail now and their rewards are paid again under new
      // ids, so a later funding of this group in Wise's website must find nothing to pay.
      await call('PATCH', `${p}/batch-groups/${group.id}`, { status: 'CANCELLED', version: group.version }).catch(() => undefined);
      throw new RailBatchError(
        'insufficient_funds',
        `Your Wise ${group.sourceCurrency} balance cannot cover this batch (${String(body.errorCode ?? 'insufficient funds')}): top it up, then send the payouts again.`,
        false,
      );
    }
    if (rejected)
      throw new RailBatchError('invalid', `Wise rejected the funding of the batch: ${String(body.errorCode ?? 'no reason given')}.`, false);
    throw batchError(reply, 'funding the batch group from the balance');
  };

  const rail: PayoutRail = {
    async verifyConnection() {
      const profiles = await ok<{ id: number; type?: string }[]>('GET', '/v1/profiles', 'listing the profiles');
      if (!Array.isArray(profiles) || !profiles.some((x) => String(x.id) === String(profile)))
        throw new RailBatchError('invalid', `The profile ${profile} is not one of this Wise token's profiles (GET /v1/profiles).`, false);
    },

    async readiness(destination: string): Promise<RailReadiness> {
      return EMAIL.test(destination.trim())
        ? { ready: true, reason: null }
        : { ready: false, reason: 'Wise pays an email address: the member has to give their payout email.' };
    },

    async sendBatch(batchId, payouts): Promise<RailBatchResult> {
      const first = payouts[0];
      if (!first) throw new RailBatchError('invalid', 'A Wise batch needs at least one payout.', false);
      if (payouts.length > 1000) throw new RailBatchError('invalid', 'A Wise batch group holds at most 1000 transfers.', false);
      const currency = first.currency;
      if (payouts.some((x) => x.currency !== currency)) throw new RailBatchError('invalid', 'A Wise batch pays in one currency.', false);

      let group =
        (await findGroup(batchId)) ??
        (await ok<BatchGroup>('POST', `${p}/batch-groups`, 'creating the batch group', {
          name: batchId,
          sourceCurrency: currency,
          targetCurrency: currency,
        }));

      const outcomes = new Map<string, RailItemOutcome>();
      const transfers: Transfer[] = [];
      if (group.status === 'NEW') {
        for (const payout of payouts) {
          const t = await addTransfer(group, payout);
          if ('refused' in t)
            outcomes.set(payout.id, { payoutId: payout.id, state: 'failed', railStatus: 'refused', railItemId: null, reason: t.refused });
          else {
            transfers.push(t);
            outcomes.set(payout.id, transferOutcome(payout.id, t.id, t.status));
          }
        }
        if (transfers.length === 0) return { railBatchId: group.id, items: payouts.map((x) => outcomes.get(x.id) as RailItemOutcome) };
        const open = await getGroup(group.id);
        // Every transfer answered was made earlier in another group (a cancelled one, after insufficient
        // funds): nothing to close or fund here; their states say what became of them.
        if ((open.transferIds ?? []).length === 0)
          return { railBatchId: group.id, items: payouts.map((x) => outcomes.get(x.id) as RailItemOutcome) };
        group = await complete(open);
      }
      if (transfers.length === 0) {
        // A group closed by an earlier attempt: what it holds is what this batch sent.
        const byKey = new Map(payouts.map((x) => [customerTransactionId(x.id), x.id]));
        for (const id of group.transferIds ?? []) {
          const t = await getTransfer(id);
          const payoutId = t.customerTransactionId ? byKey.get(t.customerTransactionId) : undefined;
          if (!payoutId) continue;
          transfers.push(t);
          outcomes.set(payoutId, transferOutcome(payoutId, t.id, t.status));
        }
      }
      if (transfers.some((t) => t.status === 'incoming_payment_waiting')) {
        await fund(group);
      }
      const items = payouts.map(
        (x) =>
          outcomes.get(x.id) ?? {
            payoutId: x.id,
            state: 'failed' as const,
            railStatus: 'missing',
            railItemId: null,
            reason: `The Wise batch group ${batchId} was closed without this payout: send it again in a new batch.`,
          },
      );
      return { railBatchId: group.id, items };
    },

    async readBatch(_batchId, railBatchId, payoutIds = []): Promise<RailBatchResult> {
      const group = await getGroup(railBatchId);
      const byKey = new Map(payoutIds.map((id) => [customerTransactionId(id), id]));
      const items: RailItemOutcome[] = [];
      const seen = new Set<string>();
      for (const id of group.transferIds ?? []) {
        const t = await getTransfer(id);
        const payoutId = (t.customerTransactionId && byKey.get(t.customerTransactionId)) || '';
        if (payoutId) seen.add(payoutId);
        items.push(transferOutcome(payoutId, t.id, t.status));
      }
      if (group.status !== 'NEW')
        for (const id of payoutIds)
          if (!seen.has(id))
            items.push({
              payoutId: id,
              state: 'failed',
              railStatus: 'missing',
              railItemId: null,
              reason: 'The Wise batch group has no transfer for this payout.',
            });
      return { railBatchId: group.id, items };
    },

    async cancelItem(railItemId) {
      const reply = await call('PUT', `/v1/transfers/${encodeURIComponent(railItemId)}/cancel`);
      if (reply.status >= 200 && reply.status < 300) return true;
      if ([400, 404, 409, 422].includes(reply.status)) return false;
      throw batchError(reply, `cancelling transfer ${railItemId}`);
    },
  };
  return rail;
}
