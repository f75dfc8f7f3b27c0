// The Wise emulator's state and rules (no HTTP): profiles, balances, v3 quotes, email recipients, transfers
// keyed by customerTransactionId, batch groups with versions and statuses, balance funding, and the transfer
// state changes each step produces (the server signs and delivers them as `transfers#state-change`).
// Errors carry Wise's bodies: validation {errors: [{code, message, path?, arguments?}]} with 400/409/422.
import { randomUUID } from 'node:crypto';

export class WiseError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly path: string | null = null,
    readonly args: string[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
  get body(): unknown {
    return { errors: [{ code: this.code, message: this.message, ...(this.path ? { path: this.path } : {}), arguments: this.args }] };
  }
}

export interface Profile {
  id: number;
  type: 'personal' | 'business';
  details: Record<string, string>;
}

export interface Quote {
  id: string;
  profile: number;
  sourceCurrency: string;
  targetCurrency: string;
  sourceAmount: number;
  targetAmount: number;
  rate: number;
  rateType: 'FIXED';
  payOut: string;
  payIn: string;
  status: 'PENDING' | 'ACCEPTED' | 'EXPIRED';
  createdTime: string;
  expirationTime: string;
  targetAccount: number | null;
}

export interface Recipient {
  id: number;
  business: number | null;
  profile: number;
  accountHolderName: string;
  type: 'email';
  currency: string;
  country: null;
  details: { email: string; legalType: 'PRIVATE' };
  user: number;
  active: boolean;
  ownedByCustomer: boolean;
}

export type TransferStatus =
  | 'incoming_payment_waiting'
  | 'waiting_recipient_input_to_proceed'
  | 'processing'
  | 'funds_converted'
  | 'outgoing_payment_sent'
  | 'bounced_back'
  | 'funds_refunded'
  | 'cancelled'
  | 'charged_back';

export interface Transfer {
  id: number;
  user: number;
  targetAccount: number;
  sourceAccount: null;
  quote: null;
  quoteUuid: string;
  status: TransferStatus;
  reference: string;
  rate: number;
  created: string;
  business: number | null;
  transferRequest: null;
  details: { reference: string };
  hasActiveIssues: boolean;
  sourceCurrency: string;
  sourceValue: number;
  targetCurrency: string;
  targetValue: number;
  customerTransactionId: string;
}

export type BatchGroupStatus = 'NEW' | 'COMPLETED' | 'MARKED_FOR_CANCELLATION' | 'PROCESSING_CANCEL' | 'CANCELLED';

export interface BatchGroup {
  id: string;
  version: number;
  name: string;
  sourceCurrency: string;
  status: BatchGroupStatus;
  transferIds: number[];
  payInDetails: { type: string; reference: string; amount: number; currency: string }[];
}

/** One transfer's state change: what a `transfers#state-change` webhook reports. */
export interface StateChange {
  transferId: number;
  profileId: number;
  accountId: number;
  currentState: TransferStatus;
  previousState: TransferStatus | null;
  occurredAt: string;
}

export interface LedgerOptions {
  /** The clock (quote expiry, timestamps); default Date.now. */
  now?: () => number;
  /** Starting balance of the business profile in each currency it is asked about (major units); default 100000. */
  startingBalance?: number;
}

const QUOTE_LIFETIME_MS = 30 * 60 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const CURRENCY = /^[A-Z]{3}$/;

/** Where the sandbox's simulation can move a transfer, and the states it passes through on the way. */
const PATH: TransferStatus[] = ['incoming_payment_waiting', 'processing', 'funds_converted', 'outgoing_payment_sent'];
export const SIMULATED_STATES = ['processing', 'funds_converted', 'outgoing_payment_sent', 'bounced_back', 'funds_refunded'] as const;
export type SimulatedState = (typeof SIMULATED_STATES)[number];

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const round = (n: number) => Math.round(n * 1000) / 1000;

export class Ledger {
  readonly userId = 4_100_001;
  readonly personal: Profile = { id: 16_000_001, type: 'personal', details: { firstName: 'Ada', lastName: 'Emulator' } };
  readonly business: Profile = { id: 16_000_002, type: 'business', details: { name: 'Refloop Local Ltd', registrationNumber: 'LOCAL-1' } };
  readonly quotes = new Map<string, Quote>();
  readonly recipients = new Map<number, Recipient>();
  readonly transfers = new Map<number, Transfer>();
  readonly groups = new Map<string, BatchGroup & { profile: number; funded: boolean }>();
  /** `${profile}:${currency}` -> major units. */
  readonly balances = new Map<string, number>();
  private readonly byCustomerTransactionId = new Map<string, number>();
  private nextId = 50_000_001;
  private readonly now: () => number;
  private readonly startingBalance: number;

  constructor(options: LedgerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.startingBalance = options.startingBalance ?? 100_000;
  }

  profiles(): Profile[] {
    return [this.personal, this.business];
  }

  profile(id: string | number): Profile {
    const found = this.profiles().find((p) => String(p.id) === String(id));
    if (!found) throw new WiseError(403, 'profile.forbidden', `You are not allowed to act for profile ${id}.`);
    return found;
  }

  balance(currency: string, profile = this.business.id): number {
    return this.balances.get(`${profile}:${currency}`) ?? this.startingBalance;
  }

  setBalance(currency: string, amount: number, profile = this.business.id): void {
    this.balances.set(`${profile}:${currency}`, round(amount));
  }

  createQuote(profileId: string, body: Record<string, unknown>): Quote {
    const profile = this.profile(profileId);
    const source = body.sourceCurrency;
    const target = body.targetCurrency;
    if (typeof source !== 'string' || !CURRENCY.test(source))
      throw new WiseError(422, 'NOT_VALID', 'Please specify a source currency.', 'sourceCurrency');
    if (typeof target !== 'string' || !CURRENCY.test(target))
      throw new WiseError(422, 'NOT_VALID', 'Please specify a target currency.', 'targetCurrency');
    if (source !== target) {
      throw new WiseError(
        422,
        'error.route.not.supported',
        'The emulator converts no currency: the source and target currencies must be the same.',
        null,
        [`${source}-${target}`],
      );
    }
    const hasSource = body.sourceAmount !== undefined && body.sourceAmount !== null;
    const hasTarget = body.targetAmount !== undefined && body.targetAmount !== null;
    if (hasSource === hasTarget) throw new WiseError(422, 'NOT_VALID', 'Please give either sourceAmount or targetAmount.', 'targetAmount');
    const amount = hasSource ? body.sourceAmount : body.targetAmount;
    if (typeof amount !== 'number' || !(amount > 0))
      throw new WiseError(422, 'NOT_VALID', 'The amount must be a positive number.', hasSource ? 'sourceAmount' : 'targetAmount');
    const created = this.now();
    const quote: Quote = {
      id: randomUUID(),
      profile: profile.id,
      sourceCurrency: source,
      targetCurrency: target,
      sourceAmount: round(amount),
      targetAmount: round(amount),
      rate: 1,
      rateType: 'FIXED',
      payOut: typeof body.payOut === 'string' ? body.payOut : 'BANK_TRANSFER',
      payIn: 'BALANCE',
      status: 'PENDING',
      createdTime: iso(created),
      expirationTime: iso(created + QUOTE_LIFETIME_MS),
      targetAccount: typeof body.targetAccount === 'number' ? body.targetAccount : null,
    };
    this.quotes.set(quote.id, quote);
    return quote;
  }

  quote(profileId: string, id: string): Quote {
    this.profile(profileId);
    const q = this.quotes.get(id);
    if (!q || String(q.profile) !== String(profileId)) throw new WiseError(404, 'quote.not.found', `Quote ${id} not found.`);
    if (q.status === 'PENDING' && Date.parse(q.expirationTime) <= this.now()) q.status = 'EXPIRED';
    return q;
  }

  createRecipient(body: Record<string, unknown>): Recipient {
    const profile = this.profile(body.profile === undefined ? this.business.id : String(body.profile));
    if (body.type !== 'email') throw new WiseError(422, 'NOT_VALID', 'The emulator keeps email recipients only (type "email").', 'type');
    if (typeof body.currency !== 'string' || !CURRENCY.test(body.currency))
      throw new WiseError(422, 'NOT_VALID', 'Please specify a currency.', 'currency');
    if (typeof body.accountHolderName !== 'string' || body.accountHolderName.trim() === '')
      throw new WiseError(422, 'NOT_VALID', 'Please enter the recipient name.', 'accountHolderName');
    const details = (body.details ?? {}) as Record<string, unknown>;
    if (typeof details.email !== 'string' || !EMAIL.test(details.email))
      throw new WiseError(422, 'NOT_VALID', 'Please specify a valid email.', 'email');
    const recipient: Recipient = {
      id: this.nextId++,
      business: profile.type === 'business' ? profile.id : null,
      profile: profile.id,
      accountHolderName: body.accountHolderName,
      type: 'email',
      currency: body.currency,
      country: null,
      details: { email: details.email, legalType: 'PRIVATE' },
      user: this.userId,
      active: true,
      ownedByCustomer: false,
    };
    this.recipients.set(recipient.id, recipient);
    return recipient;
  }

  recipient(id: string): Recipient {
    const r = this.recipients.get(Number(id));
    if (!r) throw new WiseError(404, 'account.not.found', `Recipient ${id} not found.`);
    return r;
  }

  transfer(id: string | number): Transfer {
    const t = this.transfers.get(Number(id));
    if (!t) throw new WiseError(404, 'transfer.not.found', `Transfer ${id} not found.`);
    return t;
  }

  /**
   * A transfer (into `groupId` when given). The same customerTransactionId answers the transfer it already
   * made (`replayed`), whatever the rest of the body: Wise's idempotency.
   */
  createTransfer(
    body: Record<string, unknown>,
    groupId: string | null,
    profileId: string | null,
  ): { transfer: Transfer; replayed: boolean } {
    const profile = profileId === null ? this.business : this.profile(profileId);
    const cti = body.customerTransactionId;
    if (typeof cti !== 'string' || !UUID.test(cti))
      throw new WiseError(422, 'NOT_VALID', 'customerTransactionId must be a UUID.', 'customerTransactionId');
    const existing = this.byCustomerTransactionId.get(cti.toLowerCase());
    if (existing !== undefined) return { transfer: this.transfer(existing), replayed: true };
    const group = groupId === null ? null : this.group(String(profile.id), groupId);
    if (group && group.status !== 'NEW')
      throw new WiseError(
        409,
        'batch-group.status.invalid',
        `Batch group ${group.id} is ${group.status}: transfers can be added to a NEW group only.`,
      );
    if (group && group.transferIds.length >= 1000)
      throw new WiseError(422, 'batch-group.full', 'A batch group holds at most 1000 transfers.');
    const recipient = this.recipients.get(Number(body.targetAccount));
    if (!recipient) throw new WiseError(422, 'NOT_VALID', 'Please specify a valid targetAccount.', 'targetAccount');
    if (typeof body.quoteUuid !== 'string') throw new WiseError(422, 'NOT_VALID', 'Please specify quoteUuid.', 'quoteUuid');
    const quote = this.quote(String(profile.id), body.quoteUuid);
    if (quote.status === 'EXPIRED') throw new WiseError(422, 'quote.expired', 'The quote has expired: create a new quote.', 'quoteUuid');
    if (quote.status === 'ACCEPTED')
      throw new WiseError(422, 'quote.already.used', 'The quote was already used for a transfer.', 'quoteUuid');
    if (quote.targetCurrency !== recipient.currency)
      throw new WiseError(
        422,
        'NOT_VALID',
        `The recipient takes ${recipient.currency}, the quote pays ${quote.targetCurrency}.`,
        'targetAccount',
      );
    if (group && quote.sourceCurrency !== group.sourceCurrency)
      throw new WiseError(422, 'NOT_VALID', `The batch group is funded in ${group.sourceCurrency}.`, 'quoteUuid');
    const details = (body.details ?? {}) as Record<string, unknown>;
    const reference = typeof details.reference === 'string' ? details.reference : '';
    quote.status = 'ACCEPTED';
    const transfer: Transfer = {
      id: this.nextId++,
      user: this.userId,
      targetAccount: recipient.id,
      sourceAccount: null,
      quote: null,
      quoteUuid: quote.id,
      status: 'incoming_payment_waiting',
      reference,
      rate: quote.rate,
      created: iso(this.now()).replace('T', ' ').replace('Z', ''),
      business: profile.type === 'business' ? profile.id : null,
      transferRequest: null,
      details: { reference },
      hasActiveIssues: false,
      sourceCurrency: quote.sourceCurrency,
      sourceValue: quote.sourceAmount,
      targetCurrency: quote.targetCurrency,
      targetValue: quote.targetAmount,
      customerTransactionId: cti,
    };
    this.transfers.set(transfer.id, transfer);
    this.byCustomerTransactionId.set(cti.toLowerCase(), transfer.id);
    if (group) {
      group.transferIds.push(transfer.id);
      group.version += 1;
    }
    return { transfer, replayed: false };
  }

  createGroup(profileId: string, body: Record<string, unknown>): BatchGroup {
    const profile = this.profile(profileId);
    if (typeof body.name !== 'string' || body.name === '' || body.name.length > 100)
      throw new WiseError(422, 'NOT_VALID', 'name is required (at most 100 characters).', 'name');
    if (typeof body.sourceCurrency !== 'string' || !CURRENCY.test(body.sourceCurrency))
      throw new WiseError(422, 'NOT_VALID', 'Please specify a source currency.', 'sourceCurrency');
    const group = {
      id: randomUUID(),
      version: 1,
      name: body.name,
      sourceCurrency: body.sourceCurrency,
      status: 'NEW' as BatchGroupStatus,
      transferIds: [] as number[],
      payInDetails: [],
      profile: profile.id,
      funded: false,
    };
    this.groups.set(group.id, group);
    return group;
  }

  group(profileId: string, id: string): BatchGroup & { profile: number; funded: boolean } {
    this.profile(profileId);
    const g = this.groups.get(id);
    if (!g || String(g.profile) !== String(profileId)) throw new WiseError(404, 'batch-group.not.found', `Batch group ${id} not found.`);
    return g;
  }

  listGroups(profileId: string): BatchGroup[] {
    this.profile(profileId);
    return [...this.groups.values()].filter((g) => String(g.profile) === String(profileId));
  }

  /** PATCH {status, version}: COMPLETED closes a NEW group; CANCELLED cancels an unfunded one and its transfers. */
  updateGroup(profileId: string, id: string, body: Record<string, unknown>): { group: BatchGroup; changes: StateChange[] } {
    const group = this.group(profileId, id);
    if (body.version !== group.version)
      throw new WiseError(
        409,
        'batch-group.version.mismatch',
        `The batch group's version is ${group.version}, not ${String(body.version)}.`,
        'version',
      );
    const changes: StateChange[] = [];
    if (body.status === 'COMPLETED') {
      if (group.status !== 'NEW') throw new WiseError(409, 'batch-group.status.invalid', `Batch group ${id} is ${group.status}, not NEW.`);
      if (group.transferIds.length === 0) throw new WiseError(422, 'batch-group.empty', 'A batch group needs at least one transfer.');
      group.status = 'COMPLETED';
      const amount = round(group.transferIds.reduce((sum, t) => sum + this.transfer(t).sourceValue, 0));
      group.payInDetails = [{ type: 'BALANCE', reference: group.name, amount, currency: group.sourceCurrency }];
    } else if (body.status === 'CANCELLED') {
      if (group.funded || group.status === 'CANCELLED')
        throw new WiseError(409, 'batch-group.status.invalid', `Batch group ${id} is funded or cancelled already: it cannot be cancelled.`);
      group.status = 'CANCELLED';
      for (const t of group.transferIds) {
        const c = this.move(this.transfer(t), 'cancelled');
        if (c) changes.push(c);
      }
    } else throw new WiseError(422, 'NOT_VALID', 'status must be COMPLETED or CANCELLED.', 'status');
    group.version += 1;
    return { group, changes };
  }

  /**
   * Funds a COMPLETED group from the profile's balance: its unfunded transfers go to `processing`.
   * Short of money: Wise's REJECTED payment with `errorCode` (nothing moves).
   */
  fundGroup(profileId: string, id: string, body: Record<string, unknown>): { payment: Record<string, unknown>; changes: StateChange[] } {
    const group = this.group(profileId, id);
    if (body.type !== 'BALANCE')
      throw new WiseError(422, 'NOT_VALID', 'The emulator funds from the balance only (type "BALANCE").', 'type');
    if (group.status !== 'COMPLETED')
      throw new WiseError(409, 'batch-group.status.invalid', `Batch group ${id} is ${group.status}: complete it first.`);
    if (group.funded) throw new WiseError(409, 'batch-group.already.funded', `Batch group ${id} is funded already.`);
    const waiting = group.transferIds.map((t) => this.transfer(t)).filter((t) => t.status === 'incoming_payment_waiting');
    const total = round(waiting.reduce((sum, t) => sum + t.sourceValue, 0));
    const available = this.balance(group.sourceCurrency, group.profile);
    if (total > available)
      return {
        payment: { type: 'BALANCE', status: 'REJECTED', errorCode: 'transfer.insufficient_funds', balanceTransactionId: null },
        changes: [],
      };
    this.setBalance(group.sourceCurrency, available - total, group.profile);
    group.funded = true;
    const changes = waiting.map((t) => this.move(t, 'processing')).filter((c): c is StateChange => c !== null);
    return { payment: { type: 'BALANCE', status: 'COMPLETED', errorCode: null, balanceTransactionId: this.nextId++ }, changes };
  }

  /** PUT /v1/transfers/{id}/cancel: an unfunded transfer only. */
  cancelTransfer(id: string): { transfer: Transfer; changes: StateChange[] } {
    const t = this.transfer(id);
    if (t.status !== 'incoming_payment_waiting' && t.status !== 'waiting_recipient_input_to_proceed')
      throw new WiseError(409, 'transfer.cancellation.not.allowed', `Transfer ${id} is ${t.status}: it can no longer be cancelled.`);
    const c = this.move(t, 'cancelled');
    return { transfer: t, changes: c ? [c] : [] };
  }

  /** The sandbox's simulation: moves a transfer to `state` through the states in between. */
  simulate(id: string | number, state: SimulatedState): { transfer: Transfer; changes: StateChange[] } {
    const t = this.transfer(id);
    const changes: StateChange[] = [];
    const step = (to: TransferStatus) => {
      const c = this.move(t, to);
      if (c) changes.push(c);
    };
    if (state === 'bounced_back' || state === 'funds_refunded') {
      if (t.status !== 'bounced_back' && t.status !== 'funds_refunded') {
        if (!PATH.includes(t.status) || t.status === 'incoming_payment_waiting')
          throw new WiseError(409, 'simulation.not.allowed', `Transfer ${id} is ${t.status}: fund it before it can bounce.`);
        step('bounced_back');
      }
      if (state === 'funds_refunded' && t.status === 'bounced_back') {
        step('funds_refunded');
        this.setBalance(t.sourceCurrency, this.balance(t.sourceCurrency) + t.sourceValue);
      }
      return { transfer: t, changes };
    }
    const from = PATH.indexOf(t.status);
    const to = PATH.indexOf(state);
    if (from < 0 || to < from)
      throw new WiseError(409, 'simulation.not.allowed', `Transfer ${id} is ${t.status}: it cannot move to ${state}.`);
    for (let i = from + 1; i <= to; i++) step(PATH[i] as TransferStatus);
    return { transfer: t, changes };
  }

  private move(t: Transfer, to: TransferStatus): StateChange | null {
    if (t.status === to) return null;
    const previous = t.status;
    t.status = to;
    return {
      transferId: t.id,
      profileId: t.business ?? this.personal.id,
      accountId: t.targetAccount,
      currentState: to,
      previousState: previous,
      occurredAt: iso(this.now()),
    };
  }
}
