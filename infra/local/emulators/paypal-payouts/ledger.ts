// The PayPal Payouts emulator's state and rules (no HTTP): access tokens, payout batches and their items,
// the validation and errors of `POST /v1/payments/payouts`, how each item settles (per receiver), cancel,
// and the webhook events each change produces. ./server.ts puts PayPal's HTTP surface over it.
//
// Knobs per receiver: an address starting `fail@`, `unclaimed@` or `hold@` settles FAILED, UNCLAIMED or
// ONHOLD; `setOutcome(email, status)` sets any status for one address; every other address settles SUCCESS.
import { randomBytes, randomUUID } from 'node:crypto';

export type ItemStatus = 'PENDING' | 'SUCCESS' | 'FAILED' | 'UNCLAIMED' | 'RETURNED' | 'ONHOLD' | 'BLOCKED' | 'REFUNDED' | 'REVERSED';
export type BatchStatus = 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'DENIED';

export interface ErrorDetail {
  field?: string;
  location?: 'body' | 'path' | 'query';
  issue: string;
}

/** PayPal's error body: {name, message, debug_id, information_link, details[], links[]}. */
export class PaypalError extends Error {
  constructor(
    readonly status: number,
    readonly errorName: string,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly links: { href: string; rel: string; method: string }[] = [],
  ) {
    super(message);
  }
  body(): Record<string, unknown> {
    return {
      name: this.errorName,
      message: this.message,
      debug_id: randomBytes(7).toString('hex').slice(0, 13),
      information_link: `https://developer.paypal.com/docs/api/payments.payouts-batch/#errors`,
      details: this.details,
      links: this.links,
    };
  }
}

export interface Item {
  payout_item_id: string;
  transaction_id: string | null;
  transaction_status: ItemStatus;
  payout_batch_id: string;
  sender_batch_id: string;
  payout_item: {
    recipient_type: string;
    amount: { value: string; currency: string };
    note?: string;
    receiver: string;
    sender_item_id?: string;
    recipient_wallet: string;
  };
  time_processed: string | null;
  errors: { name: string; message: string } | null;
  /** Set by a cancel (an item returned by its sender). */
  canceled: boolean;
}

export interface Batch {
  payout_batch_id: string;
  batch_status: BatchStatus;
  time_created: string;
  time_completed: string | null;
  sender_batch_header: Record<string, unknown>;
  items: Item[];
}

/** A webhook event body, before signing. */
export interface PaypalEvent {
  id: string;
  create_time: string;
  resource_type: string;
  event_type: string;
  summary: string;
  resource: Record<string, unknown>;
  links: { href: string; rel: string; method: string }[];
  event_version: string;
  resource_version: string;
}

const MAX_ITEMS = 15_000;
const NO_DECIMALS = new Set(['JPY', 'HUF', 'TWD']);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const ITEM_EVENT: Partial<Record<ItemStatus, string>> = {
  SUCCESS: 'SUCCEEDED',
  FAILED: 'FAILED',
  UNCLAIMED: 'UNCLAIMED',
  ONHOLD: 'HELD',
  BLOCKED: 'BLOCKED',
  RETURNED: 'RETURNED',
  REFUNDED: 'REFUNDED',
  REVERSED: 'REVERSED',
};

const ITEM_ERRORS: Partial<Record<ItemStatus, { name: string; message: string }>> = {
  FAILED: { name: 'RECEIVER_ACCOUNT_LOCKED', message: "Receiver's account is locked or inactive" },
  UNCLAIMED: { name: 'RECEIVER_UNREGISTERED', message: 'Receiver is unregistered' },
  BLOCKED: { name: 'RECEIVER_COUNTRY_NOT_ALLOWED', message: 'Payments to the receiver are blocked' },
};

// Always with a digit, as PayPal's are (and as the server's call counts recognise an id in a path: one
// made only of letters, about 1 in 70, was counted under its own path, failing a test now and then).
const id = (prefix: string, n = 13) => {
  const raw = randomBytes(n)
    .toString('base64')
    .replace(/[^A-Z0-9]/gi, '')
    .toUpperCase()
    .slice(0, n);
  return prefix + (/\d/.test(raw) ? raw : `${raw.slice(0, -1)}${randomBytes(1)[0]! % 10}`);
};

export interface LedgerOptions {
  clientId: string;
  clientSecret: string;
  /** A token's life, seconds; default 32400 (9 hours, PayPal's sample). */
  tokenTtlSeconds?: number;
  /** The API's own URL, for HATEOAS links. */
  baseUrl: () => string;
  nowMs?: () => number;
}

export class Ledger {
  readonly batches = new Map<string, Batch>();
  /** sender_batch_id -> payout_batch_id. */
  readonly bySenderBatchId = new Map<string, string>();
  readonly items = new Map<string, Item>();
  readonly tokens = new Map<string, number>();
  readonly outcomes = new Map<string, ItemStatus>();
  tokenCalls = 0;
  private readonly now: () => number;

  constructor(readonly options: LedgerOptions) {
    this.now = options.nowMs ?? Date.now;
  }

  private iso(): string {
    return new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  /** `POST /v1/oauth2/token` with HTTP Basic credentials. */
  issueToken(basicUser: string | null, basicPassword: string | null, grantType: string | null): Record<string, unknown> {
    this.tokenCalls++;
    if (basicUser !== this.options.clientId || basicPassword !== this.options.clientSecret)
      throw Object.assign(new PaypalError(401, 'invalid_client', 'Client Authentication failed'), { oauth: true });
    if (grantType !== 'client_credentials')
      throw Object.assign(new PaypalError(400, 'unsupported_grant_type', 'Grant Type is NULL or not supported'), { oauth: true });
    const ttl = this.options.tokenTtlSeconds ?? 32400;
    const token = `A21AA${randomBytes(24).toString('base64url')}`;
    this.tokens.set(token, this.now() + ttl * 1000);
    return {
      scope: 'https://uri.paypal.com/services/payments/payouts https://uri.paypal.com/payments/payouts',
      access_token: token,
      token_type: 'Bearer',
      app_id: 'APP-80W284485P519543T',
      expires_in: ttl,
      nonce: `${this.iso()}${randomBytes(8).toString('hex')}`,
    };
  }

  tokenValid(token: string | null): boolean {
    if (!token) return false;
    const exp = this.tokens.get(token);
    return exp !== undefined && exp > this.now();
  }

  /** What a receiver's item settles to. */
  outcomeFor(receiver: string): ItemStatus {
    const r = receiver.toLowerCase();
    const set = this.outcomes.get(r);
    if (set) return set;
    if (r.startsWith('fail@')) return 'FAILED';
    if (r.startsWith('unclaimed@')) return 'UNCLAIMED';
    if (r.startsWith('hold@')) return 'ONHOLD';
    return 'SUCCESS';
  }

  /** `POST /v1/payments/payouts`: validates the whole request, then records the batch PENDING. */
  createBatch(body: unknown): Batch {
    const b = (body && typeof body === 'object' ? body : {}) as { sender_batch_header?: Record<string, unknown>; items?: unknown };
    const header = b.sender_batch_header;
    const details: ErrorDetail[] = [];
    const senderBatchId = header?.sender_batch_id;
    if (header !== undefined && (typeof header !== 'object' || header === null))
      details.push({ field: 'sender_batch_header', location: 'body', issue: 'Invalid sender_batch_header' });
    if (senderBatchId !== undefined && (typeof senderBatchId !== 'string' || senderBatchId.length > 256))
      details.push({ field: 'sender_batch_header.sender_batch_id', location: 'body', issue: 'Length must be 256 characters or less' });
    if (!Array.isArray(b.items) || b.items.length === 0)
      details.push({ field: 'items', location: 'body', issue: 'Items array must have at least one item' });
    else if (b.items.length > MAX_ITEMS)
      details.push({ field: 'items', location: 'body', issue: `Items array must not exceed ${MAX_ITEMS} items` });
    const items = Array.isArray(b.items) && b.items.length <= MAX_ITEMS ? (b.items as Record<string, unknown>[]) : [];
    const defaultType = typeof header?.recipient_type === 'string' ? header.recipient_type : undefined;
    const seenSenderItems = new Set<string>();
    items.forEach((raw, i) => {
      const it = raw && typeof raw === 'object' ? raw : {};
      const type = (typeof it.recipient_type === 'string' ? it.recipient_type : defaultType) ?? 'EMAIL';
      const receiver = it.receiver;
      if (typeof receiver !== 'string' || receiver === '' || receiver.length > 127 || (type === 'EMAIL' && !EMAIL.test(receiver)))
        details.push({ field: `items[${i}].receiver`, location: 'body', issue: 'Receiver is invalid or does not match with type' });
      const amount = it.amount as { value?: unknown; currency?: unknown } | undefined;
      const value = amount?.value;
      const currency = amount?.currency;
      if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))
        details.push({ field: `items[${i}].amount.currency`, location: 'body', issue: 'Currency code is invalid' });
      if (typeof value !== 'string' || !/^\d+(\.\d{1,3})?$/.test(value) || Number(value) <= 0)
        details.push({ field: `items[${i}].amount.value`, location: 'body', issue: 'Amount value is invalid' });
      else if (typeof currency === 'string' && NO_DECIMALS.has(currency) && value.includes('.'))
        details.push({ field: `items[${i}].amount.value`, location: 'body', issue: 'Currency does not support decimals.' });
      const sid = it.sender_item_id;
      if (sid !== undefined && (typeof sid !== 'string' || sid.length > 63))
        details.push({ field: `items[${i}].sender_item_id`, location: 'body', issue: 'Length must be 63 characters or less' });
      if (typeof sid === 'string') {
        if (seenSenderItems.has(sid))
          details.push({
            field: `items[${i}].sender_item_id`,
            location: 'body',
            issue: 'This transaction is duplicated in this batch. Please check the Ref_ID / Sender_Item_ID',
          });
        seenSenderItems.add(sid);
      }
    });
    if (details.length > 0) throw new PaypalError(400, 'VALIDATION_ERROR', 'Invalid request - see details', details);
    if (typeof senderBatchId === 'string') {
      const existing = this.bySenderBatchId.get(senderBatchId);
      if (existing)
        throw new PaypalError(
          400,
          'USER_BUSINESS_ERROR',
          'User business error.',
          [{ field: 'SENDER_BATCH_ID', location: 'body', issue: `Batch with given sender_batch_id already exists` }],
          [{ href: `${this.options.baseUrl()}/v1/payments/payouts/${existing}`, rel: 'self', method: 'GET' }],
        );
    }
    const batchId = id('', 13);
    const batch: Batch = {
      payout_batch_id: batchId,
      batch_status: 'PENDING',
      time_created: this.iso(),
      time_completed: null,
      sender_batch_header: { ...(header ?? {}) },
      items: [],
    };
    for (const it of items) {
      const amount = it.amount as { value: string; currency: string };
      const item: Item = {
        payout_item_id: id('', 13),
        transaction_id: null,
        transaction_status: 'PENDING',
        payout_batch_id: batchId,
        sender_batch_id: typeof senderBatchId === 'string' ? senderBatchId : '',
        payout_item: {
          recipient_type: (typeof it.recipient_type === 'string' ? it.recipient_type : defaultType) ?? 'EMAIL',
          amount: { value: amount.value, currency: amount.currency },
          ...(typeof it.note === 'string' ? { note: it.note } : {}),
          receiver: String(it.receiver),
          ...(typeof it.sender_item_id === 'string' ? { sender_item_id: it.sender_item_id } : {}),
          recipient_wallet: typeof it.recipient_wallet === 'string' ? it.recipient_wallet : 'PAYPAL',
        },
        time_processed: null,
        errors: null,
        canceled: false,
      };
      batch.items.push(item);
      this.items.set(item.payout_item_id, item);
    }
    this.batches.set(batchId, batch);
    if (typeof senderBatchId === 'string') this.bySenderBatchId.set(senderBatchId, batchId);
    return batch;
  }

  /** Settles every PENDING item of a batch (or of every batch) to its receiver's outcome; the events, in order. */
  settle(payoutBatchId?: string): PaypalEvent[] {
    const events: PaypalEvent[] = [];
    const batches = payoutBatchId ? [this.batches.get(payoutBatchId)].filter((b): b is Batch => !!b) : [...this.batches.values()];
    for (const batch of batches) {
      if (batch.batch_status === 'SUCCESS' || batch.batch_status === 'DENIED') continue;
      for (const item of batch.items) {
        if (item.transaction_status !== 'PENDING') continue;
        events.push(...this.setStatus(item.payout_item_id, this.outcomeFor(item.payout_item.receiver)));
      }
      batch.batch_status = 'SUCCESS';
      batch.time_completed = this.iso();
      events.push(this.batchEvent(batch));
    }
    return events;
  }

  /** Moves one item to a status (a settle, a cancel, or a later reversal/refund/return); its event. */
  setStatus(payoutItemId: string, status: ItemStatus): PaypalEvent[] {
    const item = this.items.get(payoutItemId);
    if (!item) throw new PaypalError(404, 'INVALID_RESOURCE_ID', 'Requested resource ID was not found.');
    item.transaction_status = status;
    item.time_processed = this.iso();
    if (status === 'SUCCESS' && !item.transaction_id) item.transaction_id = id('', 17);
    item.errors = ITEM_ERRORS[status] ?? null;
    const suffix = item.canceled ? 'CANCELED' : ITEM_EVENT[status];
    return suffix ? [this.itemEvent(item, `PAYMENT.PAYOUTS-ITEM.${suffix}`)] : [];
  }

  /** `POST /v1/payments/payouts-item/{id}/cancel`: only an UNCLAIMED item; it becomes RETURNED. */
  cancel(payoutItemId: string): { item: Item; events: PaypalEvent[] } {
    const item = this.items.get(payoutItemId);
    if (!item) throw new PaypalError(404, 'INVALID_RESOURCE_ID', 'Requested resource ID was not found.');
    if (item.canceled) throw new PaypalError(400, 'ITEM_ALREADY_CANCELLED', 'Item is already cancelled.');
    if (item.transaction_status !== 'UNCLAIMED')
      throw new PaypalError(400, 'ITEM_INCORRECT_STATUS', 'Item cannot be cancelled because it is not in UNCLAIMED status.');
    item.canceled = true;
    return { item, events: this.setStatus(payoutItemId, 'RETURNED') };
  }

  /** An item as `GET /v1/payments/payouts-item/{id}` and a batch's `items[]` show it. */
  itemView(item: Item, withSenderBatch: boolean): Record<string, unknown> {
    const base = this.options.baseUrl();
    return {
      payout_item_id: item.payout_item_id,
      transaction_id: item.transaction_id,
      activity_id: item.transaction_id ? `ACT${item.transaction_id}` : null,
      transaction_status: item.transaction_status,
      payout_item_fee: { currency: item.payout_item.amount.currency, value: '0.00' },
      payout_batch_id: item.payout_batch_id,
      ...(withSenderBatch ? { sender_batch_id: item.sender_batch_id } : {}),
      payout_item: item.payout_item,
      time_processed: item.time_processed,
      ...(item.errors ? { errors: item.errors } : {}),
      links: [{ href: `${base}/v1/payments/payouts-item/${item.payout_item_id}`, rel: 'item', method: 'GET' }],
    };
  }

  batchHeader(batch: Batch): Record<string, unknown> {
    const currency = batch.items[0]?.payout_item.amount.currency ?? 'USD';
    const total = batch.items.reduce((s, i) => s + Number(i.payout_item.amount.value), 0);
    return {
      payout_batch_id: batch.payout_batch_id,
      batch_status: batch.batch_status,
      time_created: batch.time_created,
      ...(batch.time_completed ? { time_completed: batch.time_completed, time_closed: batch.time_completed } : {}),
      sender_batch_header: batch.sender_batch_header,
      funding_source: 'BALANCE',
      amount: { currency, value: NO_DECIMALS.has(currency) ? String(total) : total.toFixed(2) },
      fees: { currency, value: NO_DECIMALS.has(currency) ? '0' : '0.00' },
    };
  }

  private itemEvent(item: Item, type: string): PaypalEvent {
    return this.event(type, 'payouts_item', `A payout item is now ${item.transaction_status}`, this.itemView(item, true));
  }

  private batchEvent(batch: Batch): PaypalEvent {
    return this.event(`PAYMENT.PAYOUTSBATCH.${batch.batch_status}`, 'payouts', `Payouts batch is ${batch.batch_status}`, {
      batch_header: this.batchHeader(batch),
      links: [{ href: `${this.options.baseUrl()}/v1/payments/payouts/${batch.payout_batch_id}`, rel: 'self', method: 'GET' }],
    });
  }

  private event(type: string, resourceType: string, summary: string, resource: Record<string, unknown>): PaypalEvent {
    const eventId = `WH-${randomUUID().toUpperCase().replace(/-/g, '').slice(0, 17)}-${randomUUID().toUpperCase().replace(/-/g, '').slice(0, 17)}`;
    return {
      id: eventId,
      create_time: new Date(this.now()).toISOString(),
      resource_type: resourceType,
      event_type: type,
      summary,
      resource,
      links: [{ href: `${this.options.baseUrl()}/v1/notifications/webhooks-events/${eventId}`, rel: 'self', method: 'GET' }],
      event_version: '1.0',
      resource_version: '1.0',
    };
  }
}
