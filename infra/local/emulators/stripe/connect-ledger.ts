// The Stripe emulator's Connect side (payouts): Express connected accounts, Account Links and their
// onboarding, the platform's available balance per currency, transfers to connected accounts and their
// reversals, in the wire shapes of shared/rails/stripe/wire.ts. No I/O; the clock is injected. The server
// (./connect-routes.ts) maps the API onto it and signs and delivers the events it returns.
//
// Rules, as Stripe answers them:
// - A new Express account has nothing enabled: `details_submitted`, `payouts_enabled` and `charges_enabled`
//   false, `capabilities.transfers` `inactive` (when requested), requirements currently due. Finishing the
//   onboarding page enables it (`transfers: active`, payouts enabled) and emits `account.updated` with the
//   top-level `account`; the "incomplete" button submits details without a bank account (`pending`).
// - An Account Link lives 300 s and is single-use: its first visit consumes it; a later visit (or a visit
//   after it expired) is sent to its `refresh_url`.
// - A transfer needs the destination's `transfers` capability `active` (else 400
//   `insufficient_capabilities_for_transfer`) and the platform's available balance in its currency (else 400
//   `balance_insufficient`); both are answers of an executed request, so an Idempotency-Key replays them. A
//   created transfer takes the amount from the balance at once and emits `transfer.created`.
// - A reversal (all of what is left by default, or part) returns the amount to the balance and emits
//   `transfer.reversed`; a transfer reversed in full has `reversed: true`.
import { randomBytes } from 'node:crypto';
import {
  STRIPE_API_VERSION,
  type AccountLink,
  type ConnectEvent,
  type ConnectedAccount,
  type Metadata,
  type Transfer,
  type TransferReversal,
} from '../../../../shared/rails/stripe/wire';
import { LedgerError } from './ledger';

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LINK_SECONDS = 300;
const REQUIREMENTS = [
  'business_type',
  'external_account',
  'individual.first_name',
  'individual.last_name',
  'tos_acceptance.date',
  'tos_acceptance.ip',
];

/** An answer of an executed request that is an error (replayed by an Idempotency-Key like a success). */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

export interface OnboardingLink {
  token: string;
  account: string;
  created: number;
  expiresAt: number;
  refreshUrl: string;
  returnUrl: string;
  state: 'new' | 'visited' | 'completed';
}

const str = (params: Record<string, unknown>, name: string, required: boolean): string | undefined => {
  const v = params[name];
  if (v === undefined || v === '') {
    if (required) throw new LedgerError(400, 'parameter_missing', `Missing required param: ${name}.`, name);
    return undefined;
  }
  if (typeof v !== 'string') throw new LedgerError(400, 'parameter_invalid_string', `Invalid string: ${name}`, name);
  return v;
};

const metadataOf = (params: Record<string, unknown>): Metadata => {
  const v = params.metadata;
  if (v === undefined || v === '') return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.values(v).every((x) => typeof x === 'string'))
    throw new LedgerError(400, 'parameter_invalid_string', 'Invalid hash: metadata', 'metadata');
  return { ...(v as Metadata) };
};

export class ConnectLedger {
  readonly accounts = new Map<string, ConnectedAccount>();
  readonly links = new Map<string, OnboardingLink>();
  readonly transfers = new Map<string, Transfer>();
  /** The platform's available balance per lower-case currency, in Stripe's units. */
  readonly balance = new Map<string, number>();
  private readonly now: () => number;

  constructor(options: { now?: () => number; balance?: Record<string, number> } = {}) {
    this.now = options.now ?? Date.now;
    for (const [currency, amount] of Object.entries(options.balance ?? { usd: 1_000_000_00, eur: 1_000_000_00 }))
      this.balance.set(currency.toLowerCase(), amount);
  }

  seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  id(prefix: string): string {
    let s = '';
    for (const b of randomBytes(24)) s += ALNUM[b % 62];
    return `${prefix}_${s}`;
  }

  event<T>(type: string, object: T, account?: string, previous?: Record<string, unknown>): ConnectEvent<T> {
    return {
      id: this.id('evt'),
      object: 'event',
      ...(account ? { account } : {}),
      api_version: STRIPE_API_VERSION,
      created: this.seconds(),
      data: { object: structuredClone(object), ...(previous ? { previous_attributes: previous } : {}) },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    };
  }

  account(id: string, param = 'id'): ConnectedAccount {
    const a = this.accounts.get(id);
    if (!a) throw new LedgerError(404, 'resource_missing', `No such account: '${id}'`, param);
    return a;
  }

  transfer(id: string): Transfer {
    const t = this.transfers.get(id);
    if (!t) throw new LedgerError(404, 'resource_missing', `No such transfer: '${id}'`, 'id');
    return t;
  }

  /** `POST /v1/accounts`. */
  createAccount(params: Record<string, unknown>): ConnectedAccount {
    const type = str(params, 'type', true) as string;
    if (!['custom', 'express', 'standard'].includes(type))
      throw new LedgerError(400, 'parameter_invalid_string', 'Invalid type: must be one of custom, express, or standard', 'type');
    const caps = (params.capabilities ?? {}) as Record<string, { requested?: string } | undefined>;
    const country = (str(params, 'country', false) ?? 'US').toUpperCase();
    const account: ConnectedAccount = {
      id: this.id('acct'),
      object: 'account',
      type: type as ConnectedAccount['type'],
      country,
      email: str(params, 'email', false) ?? null,
      created: this.seconds(),
      default_currency: country === 'US' ? 'usd' : 'eur',
      charges_enabled: false,
      payouts_enabled: false,
      details_submitted: false,
      capabilities: caps.transfers?.requested === 'true' ? { transfers: 'inactive' } : {},
      requirements: {
        currently_due: [...REQUIREMENTS],
        eventually_due: [...REQUIREMENTS],
        past_due: [...REQUIREMENTS],
        pending_verification: [],
        current_deadline: null,
        disabled_reason: 'requirements.past_due',
      },
      metadata: metadataOf(params),
    };
    this.accounts.set(account.id, account);
    return structuredClone(account);
  }

  /** `POST /v1/account_links`: the URL is `<base>/_emulator/connect/onboard/<token>`. */
  createAccountLink(params: Record<string, unknown>, base: string): AccountLink {
    const accountId = str(params, 'account', true) as string;
    const type = str(params, 'type', true) as string;
    if (!['account_onboarding', 'account_update'].includes(type))
      throw new LedgerError(400, 'parameter_invalid_string', 'Invalid type: must be one of account_onboarding or account_update', 'type');
    const refreshUrl = str(params, 'refresh_url', true) as string;
    const returnUrl = str(params, 'return_url', true) as string;
    const account = this.accounts.get(accountId);
    if (!account) throw new LedgerError(400, 'resource_missing', `No such account: '${accountId}'`, 'account');
    if (account.type === 'standard' && type === 'account_update')
      throw new LedgerError(400, '', 'You cannot create `account_update` type Account Links for Standard accounts.', 'type');
    const token = randomBytes(18).toString('base64url');
    const created = this.seconds();
    this.links.set(token, { token, account: accountId, created, expiresAt: created + LINK_SECONDS, refreshUrl, returnUrl, state: 'new' });
    return { object: 'account_link', created, expires_at: created + LINK_SECONDS, url: `${base}/_emulator/connect/onboard/${token}` };
  }

  /** A visit of the link: the link if it can still be used (consumed now), or its refresh URL. */
  visit(token: string): { link: OnboardingLink } | { redirect: string } | null {
    const link = this.links.get(token);
    if (!link) return null;
    if (link.state !== 'new' || this.seconds() > link.expiresAt) return { redirect: link.refreshUrl };
    link.state = 'visited';
    return { link };
  }

  /**
   * The onboarding page's button: `complete` enables transfers and payouts; `incomplete` submits the details
   * without a bank account (transfers `pending`). The link must have been opened, not used nor expired.
   */
  submit(token: string, outcome: 'complete' | 'incomplete'): { returnUrl: string; events: ConnectEvent[] } | { redirect: string } | null {
    const link = this.links.get(token);
    if (!link) return null;
    if (link.state === 'completed' || this.seconds() > link.expiresAt) return { redirect: link.refreshUrl };
    link.state = 'completed';
    return { returnUrl: link.returnUrl, events: this.onboard(link.account, outcome) };
  }

  /** Finishes an account's onboarding (the page's button, or a test's shortcut): `account.updated`. */
  onboard(accountId: string, outcome: 'complete' | 'incomplete' = 'complete'): ConnectEvent[] {
    const a = this.account(accountId);
    const previous = {
      details_submitted: a.details_submitted,
      payouts_enabled: a.payouts_enabled,
      capabilities: { ...a.capabilities },
      requirements: structuredClone(a.requirements),
    };
    a.details_submitted = true;
    const done = outcome === 'complete';
    a.payouts_enabled = done;
    a.charges_enabled = false;
    if (a.capabilities.transfers !== undefined || done) a.capabilities.transfers = done ? 'active' : 'pending';
    const left = done ? [] : ['external_account'];
    a.requirements = {
      currently_due: left,
      eventually_due: left,
      past_due: left,
      pending_verification: [],
      current_deadline: null,
      disabled_reason: done ? null : 'requirements.past_due',
    };
    return [this.event('account.updated', a, a.id, previous)];
  }

  /** `POST /v1/transfers`: the transfer and `transfer.created`, or an executed request's error answer. */
  createTransfer(params: Record<string, unknown>): { transfer: Transfer; events: ConnectEvent[] } | { error: ApiAnswer } {
    const currency = (str(params, 'currency', true) as string).toLowerCase();
    const destination = str(params, 'destination', true) as string;
    const rawAmount = str(params, 'amount', true) as string;
    if (!/^\d{1,12}$/.test(rawAmount) || Number(rawAmount) < 1)
      throw new LedgerError(400, 'parameter_invalid_integer', 'Invalid positive integer', 'amount');
    const amount = Number(rawAmount);
    const metadata = metadataOf(params);
    const account = this.accounts.get(destination);
    if (!account) throw new LedgerError(400, 'resource_missing', `No such destination: '${destination}'`, 'destination');
    if (account.capabilities.transfers !== 'active')
      return {
        error: errorAnswer(
          'insufficient_capabilities_for_transfer',
          'Your destination account needs to have at least one of the following capabilities enabled: transfers, crypto_transfers, legacy_payments',
          'destination',
        ),
      };
    const available = this.balance.get(currency) ?? 0;
    if (available < amount)
      return {
        error: errorAnswer(
          'balance_insufficient',
          'You have insufficient available funds in your Stripe account. Try adding funds directly to your available balance by creating Charges using the 4000000000000077 test card.',
        ),
      };
    this.balance.set(currency, available - amount);
    const id = this.id('tr');
    const transfer: Transfer = {
      id,
      object: 'transfer',
      amount,
      amount_reversed: 0,
      balance_transaction: this.id('txn'),
      created: this.seconds(),
      currency,
      description: str(params, 'description', false) ?? null,
      destination,
      destination_payment: this.id('py'),
      livemode: false,
      metadata,
      reversals: { object: 'list', data: [], has_more: false, url: `/v1/transfers/${id}/reversals` },
      reversed: false,
      source_transaction: null,
      source_type: 'card',
      transfer_group: str(params, 'transfer_group', false) ?? null,
    };
    this.transfers.set(id, transfer);
    return { transfer: structuredClone(transfer), events: [this.event('transfer.created', transfer)] };
  }

  /** `POST /v1/transfers/{id}/reversals`: returns the amount (default all that is left) to the balance. */
  reverse(transferId: string, params: Record<string, unknown> = {}): { reversal: TransferReversal; events: ConnectEvent[] } {
    const t = this.transfer(transferId);
    const left = t.amount - t.amount_reversed;
    if (left <= 0) throw new LedgerError(400, '', `Transfer ${t.id} is already fully reversed.`);
    const raw = str(params, 'amount', false);
    if (raw !== undefined && (!/^\d{1,12}$/.test(raw) || Number(raw) < 1))
      throw new LedgerError(400, 'parameter_invalid_integer', 'Invalid positive integer', 'amount');
    const amount = raw === undefined ? left : Number(raw);
    if (amount > left)
      throw new LedgerError(400, '', `Attempted to reverse ${amount} but only ${left} remains on transfer ${t.id}.`, 'amount');
    const reversal: TransferReversal = {
      id: this.id('trr'),
      object: 'transfer_reversal',
      amount,
      balance_transaction: this.id('txn'),
      created: this.seconds(),
      currency: t.currency,
      destination_payment_refund: this.id('pyr'),
      metadata: metadataOf(params),
      source_refund: null,
      transfer: t.id,
    };
    t.amount_reversed += amount;
    t.reversed = t.amount_reversed >= t.amount;
    t.reversals.data.unshift(reversal);
    this.balance.set(t.currency, (this.balance.get(t.currency) ?? 0) + amount);
    return {
      reversal: structuredClone(reversal),
      events: [this.event('transfer.reversed', t, undefined, { amount_reversed: t.amount_reversed - amount, reversed: false })],
    };
  }
}

function errorAnswer(code: string, message: string, param?: string): ApiAnswer {
  return {
    status: 400,
    body: {
      error: {
        type: 'invalid_request_error',
        code,
        doc_url: `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`,
        message,
        ...(param ? { param } : {}),
      },
    },
  };
}
