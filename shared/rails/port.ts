// The payout-rail port: what the payout flows need from a rail that sends money (PayPal Payouts, Stripe
// Connect, Wise), whatever its API. Each rail is one folder, shared/rails/<kind>/, whose index.ts exports a
// PayoutRailDefinition (./definition.ts) and whose adapter.ts implements this port against the rail's
// HTTP API (an emulator under npm start, infra/local/emulators/<kind>/).
//
// Ids make every retry safe: a batch `pb_…` and a payout `po_…` are the rail's
// own idempotency keys (PayPal sender_batch_id / sender_item_id, Stripe transfer_group and the transfer's
// Idempotency-Key, Wise batch group name and customerTransactionId = UUIDv5 of `po_…`), so sending the same
// batch again after any failure never pays a payout twice: the rail answers with what it already has.
//
// The port never touches the table: it takes what to send and answers what the rail says, in Refloop's
// words (RailItemOutcome). Recording an outcome is the ledger's job.

/** A rail's credentials and address, decrypted (the store keeps the secrets encrypted). */
export interface RailConnection {
  /** The rail's API base URL (its sandbox, production, or an emulator). */
  apiUrl: string;
  /** The rail's own fields (PayPal client_id/client_secret, Stripe secret_key, Wise api_token/profile_id, ...). */
  credentials: Record<string, string>;
}

/** One payout to send. */
export interface RailPayout {
  /** `po_…`: the rail's item idempotency key. */
  id: string;
  memberId: string;
  /** Integer minor units (cents), in `currency`. */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  /** Where it goes: an email (PayPal, Wise) or a connected account id `acct_…` (Stripe). */
  destination: string;
  /** A note the recipient sees. */
  note?: string;
}

/** What a rail says about one payout, in Refloop's words. */
export type RailItemState =
  /** Accepted, not final (PayPal PENDING/ONHOLD, Wise processing). */
  | 'processing'
  /** Waiting for the recipient (PayPal UNCLAIMED): still processing, flagged; can be canceled and re-sent. */
  | 'unclaimed'
  /** Money delivered (PayPal SUCCESS, a Stripe transfer created, Wise outgoing_payment_sent). */
  | 'paid'
  /** Not delivered, or taken back after delivery: the payout's rewards return to the pool. */
  | 'failed';

export interface RailItemOutcome {
  /** `po_…`. */
  payoutId: string;
  state: RailItemState;
  /** The rail's own status word (e.g. `UNCLAIMED`, `outgoing_payment_sent`), shown as `rail_status`. */
  railStatus: string;
  /** The rail's id of the item (PayPal payout_item_id, Stripe `tr_…`, Wise transfer id). */
  railItemId: string | null;
  /** Why, in words, when `failed` (or `unclaimed`). */
  reason: string | null;
}

export interface RailBatchResult {
  /** The rail's id of the batch (PayPal payout_batch_id, Stripe transfer_group, Wise batch group id). */
  railBatchId: string;
  items: RailItemOutcome[];
}

/** A failure of the whole batch (no item was sent), in words: insufficient balance, bad credentials, SCA. */
export class RailBatchError extends Error {
  override readonly name = 'RailBatchError';
  constructor(
    readonly code: 'insufficient_funds' | 'unauthorized' | 'sca_required' | 'invalid' | 'unavailable',
    message: string,
    /** Whether sending the same batch again later can succeed (the rail was down, rate limited). */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** Whether a member's method can receive money now (Stripe: `payouts_enabled` and transfers `active`). */
export interface RailReadiness {
  ready: boolean;
  /** What the member still has to do, in words, when not ready. */
  reason: string | null;
}

export interface PayoutRail {
  /** Checks the credentials (one cheap authenticated call); a RailBatchError `unauthorized` when refused. */
  verifyConnection(): Promise<void>;
  /** Whether `destination` can receive money now. */
  readiness(destination: string): Promise<RailReadiness>;
  /**
   * Sends the batch `batchId` (`pb_…`, or `pb_…-r<n>` for a re-send) of payouts in one currency. Sending the
   * same ids again answers what the rail already has and pays nothing twice.
   */
  sendBatch(batchId: string, payouts: readonly RailPayout[]): Promise<RailBatchResult>;
  /**
   * Reads the batch back from the rail (reconciliation when a webhook is late). `payoutIds`, the batch's
   * `po_…` ids, lets a rail whose items carry only a key derived from them (Wise: customerTransactionId =
   * UUIDv5 of `po_…`) name each item's payout; rails that echo `po_…` ignore it.
   */
  readBatch(batchId: string, railBatchId: string, payoutIds?: readonly string[]): Promise<RailBatchResult>;
  /** Cancels one item where the rail allows it (PayPal: an UNCLAIMED item); false when it cannot. */
  cancelItem(railItemId: string): Promise<boolean>;
}
