// THE table: schema and every key builder, in one module. The CDK stack, the local runtime and the
// tests all create the table from `tableSchema`; repositories build keys only through `keys`.
//
// Every key of tenant data starts with `A#<account id>`, so a query can never reach another
// tenant's items by construction. Entity sort keys are the entity ids (time-ordered UUIDv7 hex for
// members and referrals), so a descending Query lists newest first without extra attributes.

import { isMemberCode } from '../domain/ids';
import type { ProviderId } from '../domain/models';

export const TTL_ATTRIBUTE = 'expires_at';

export const GSI1 = 'gsi1';
export const GSI2 = 'gsi2';

/** Plain description of the table, convertible to a CreateTable input or a CDK TableV2. */
export const tableSchema = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: TTL_ATTRIBUTE,
  globalSecondaryIndexes: [
    // gsi1: referrals by member, members by campaign, campaigns by creation, subscriptions by creation.
    { indexName: GSI1, partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    // gsi2: subscriptions by status (the `status=` filter).
    { indexName: GSI2, partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
} as const;

/** Entity-type attribute written on every item. */
export type EntityType =
  | 'Account'
  | 'ApiKey'
  | 'Counter'
  | 'Campaign'
  | 'Member'
  | 'Referral'
  | 'Subscription'
  | 'Claim'
  | 'ProviderSettings'
  | 'ProviderSecret'
  | 'ProviderAccount'
  | 'Alert'
  | 'Payment'
  | 'PlanCache'
  | 'PublishableKey'
  | 'RateWindow'
  | 'Click'
  | 'Refund'
  | 'EmailMarker'
  | 'Idempotency'
  | 'Event'
  | 'WebhookEndpoint'
  | 'WebhookSecret'
  | 'WebhookDelivery'
  | 'WebhookPurge'
  | 'Reward'
  | 'ApprovalDue'
  | 'Payout'
  | 'PayoutPointer'
  | 'PayoutBatch'
  | 'ReportDay'
  | 'ReportMemberMonth'
  // A member's named links (store/links.ts).
  | 'MemberLink'
  // The dashboard's people and sessions (store/team.ts).
  | 'Operator'
  | 'OperatorEmail'
  | 'LoginLink'
  | 'Session'
  | 'SessionRef'
  | 'ApiKeyRecord'
  // The member portal's links, sessions and their refs (store/portal.ts).
  | 'PortalLink'
  | 'PortalSession'
  | 'PortalRef'
  // Affiliate applications (store/applications.ts): the form's join requests, their confirmation links, the applications.
  | 'JoinRequest'
  | 'JoinConfirm'
  | 'Application';

/**
 * Counter names; each is a numeric attribute `n` on 8 items, its shards (store/shards.ts: `counterKey`):
 * `pk=A#<acct>`, `sk=COUNT#<name>` and `pk=A#<acct>#COUNT#<name>#<1..7>`; a few stay the first item alone.
 */
export type CounterName =
  | 'campaigns'
  | 'members'
  | 'referrals'
  // A member's referrals made through one sub-id (`referrals#m#<member>#s#<sub>`, store/referrals.ts).
  | `referrals#${string}`
  | 'subscriptions'
  | `subscriptions#${string}`
  | 'webhook_endpoints'
  // Owners of the account's team (store/team.ts): the last one can be neither removed nor demoted.
  | 'owners'
  // The reward ledger and payouts (store/ledger.ts, store/payouts.ts): one count per list filter, and
  // payout amounts per status and currency (`payout_sum#<status>#<currency>`, the summary's totals).
  | 'rewards'
  | `rewards#${string}`
  | 'payouts'
  | `payouts#${string}`
  // Payout batches (flows/payouts.ts): all, and per status (`payout_batches#s#<status>`).
  | 'payout_batches'
  | `payout_batches#${string}`
  | `payout_sum#${string}`
  // Applications (store/applications.ts): all, per status (`#s#<status>`), per campaign (`#c#<id>`) and both.
  | 'applications'
  | `applications#${string}`
  // The fraud review queue (store/fraud-flags.ts): all, per status, rule and member, and combinations.
  | 'fraud_flags'
  | `fraud_flags#${string}`;

export interface Key {
  pk: string;
  sk: string;
}

const CLAIM = 'CLAIM';

/** Paddle Classic's integer ids, zero-padded so string order equals numeric order. */
export function padSubscriptionId(id: number): string {
  return String(id).padStart(16, '0');
}

/**
 * A provider id as a key part: Classic's integers zero-padded (as they always were, so stored keys do not
 * change), other providers' string ids (`sub_…`, `txn_…`) as they are. String ids always start with a
 * letter prefix (isProviderStringId), so the two forms never meet.
 */
export function providerIdKey(id: ProviderId): string {
  return typeof id === 'number' ? padSubscriptionId(id) : id;
}

/** Creation time as a fixed-width sort key prefix (milliseconds). */
export function timeKey(ms: number): string {
  return String(ms).padStart(15, '0');
}

/**
 * Items of the request edges (rate-limit windows, link clicks, stored Idempotency-Key responses), apart
 * from `keys` like linkKeys: only their modules build them, and in `keys` they weighed on every bundle.
 */
/**
 * The provider's secret half of its settings (see `keys.providerSettings`), and its plans (interval, name,
 * prices), cached because alerts do not carry them. Outside `keys` so the bundles that never read them
 * leave them out (an object's properties are never tree-shaken).
 */
export const providerSecretKey = (acct: string): Key => ({ pk: `A#${acct}#PROVIDER_SECRET`, sk: 'PADDLE' });
export const planKey = (acct: string, planId: ProviderId): Key => ({ pk: `A#${acct}#PLAN`, sk: providerIdKey(planId) });

export const edgeKeys = {
  /**
   * One fixed rate-limit window of one scope (e.g. `js-ip#<ip>`, `js-key`, `api-key#<key hash>`), expiring
   * by TTL. The window start is in the partition key, so consecutive windows spread over partitions.
   */
  rateWindow: (acct: string, scope: string, windowStart: number): Key => ({ pk: `A#${acct}#RATE#${scope}#${windowStart}`, sk: 'RATE' }),
  /** A counted link click of one visitor on one member's link (expires after the dedupe period). */
  click: (acct: string, memberId: string, visitorHash: string): Key => ({ pk: `A#${acct}#CLICK#${memberId}#${visitorHash}`, sk: 'CLICK' }),
  /** Distinct visitors counted from one IP (by digest) on one member's link in one UTC day. */
  clickSource: (acct: string, memberId: string, ipHash: string, day: number): Key => ({
    pk: `A#${acct}#CLICKIP#${memberId}#${ipHash}#${day}`,
    sk: 'CLICKIP',
  }),
  /** The stored first response of an Idempotency-Key (expires after IDEMPOTENCY_HOURS); keyed by the key's SHA-256. */
  idempotency: (acct: string, keyHash: string): Key => ({ pk: `A#${acct}#IDEMPOTENCY#${keyHash}`, sk: 'IDEMPOTENCY' }),
};

/**
 * The rewards' and payouts' index partitions, approval schedule and collecting-payout pointer (store/ledger.ts,
 * store/payouts.ts, store/money-lists.ts, flows/payouts.ts, flows/lifecycle.ts), the credit lease and the
 * coupon claims (store/credit-leases.ts, store/coupons.ts), apart from `keys` like listKeys: the reward worker
 * builds them, the conversion and most API functions never do.
 */
export const moneyKeys = {
  payout: (acct: string, id: string): Key => ({ pk: `A#${acct}#PAYOUT`, sk: id }),
  /** GSI1: rewards of a member, newest first. */
  rewardsByMember: (acct: string, memberId: string) => `A#${acct}#MEMBER#${memberId}#REWARDS`,
  /** GSI2: rewards in one status, newest first. */
  rewardsByStatus: (acct: string, status: string) => `A#${acct}#REWARDS#${status}`,
  /** A pending commission's approval time: the approval job reads what is due with one Query per account. */
  approvalDueCollection: (acct: string) => `A#${acct}#APPROVAL_DUE`,
  approvalDue: (acct: string, approvesAt: number, rewardId: string): Key => ({
    pk: `A#${acct}#APPROVAL_DUE`,
    sk: `${timeKey(approvesAt)}#${rewardId}`,
  }),
  payoutsByMember: (acct: string, memberId: string) => `A#${acct}#MEMBER#${memberId}#PAYOUTS`,
  payoutsByStatus: (acct: string, status: string) => `A#${acct}#PAYOUTS#${status}`,
  /** The payout collecting a member's approved rewards in one currency (at most one at a time). */
  payoutPointer: (acct: string, memberId: string, currency: string): Key => ({ pk: `A#${acct}#PAYOUT_CURRENT#${memberId}`, sk: currency }),
  /** One credit change at a time on a subscription whose credits combine (store/credit-leases.ts). */
  creditLease: (acct: string, subscriptionId: ProviderId): Key => ({
    pk: `A#${acct}#CREDIT_LEASE#${providerIdKey(subscriptionId)}`,
    sk: 'LEASE',
  }),
  /** A referral's coupon code (upper case) -> the referral: coupon attribution without a Scan. */
  couponClaim: (acct: string, code: string): Key => ({ pk: `A#${acct}#COUPON#${code.toUpperCase()}`, sk: CLAIM }),
};

/**
 * The money lists' partitions and the payout batches (shared/store/money-lists.ts, shared/flows/payouts.ts),
 * apart from `keys` like edgeKeys: the reward worker's bundle never builds them.
 */
export const moneyListKeys = {
  rewardCollection: (acct: string) => `A#${acct}#REWARD`,
  payoutCollection: (acct: string) => `A#${acct}#PAYOUT`,
  payoutPointers: (acct: string, memberId: string) => `A#${acct}#PAYOUT_CURRENT#${memberId}`,
  payoutBatch: (acct: string, id: string): Key => ({ pk: `A#${acct}#PAYOUT_BATCH`, sk: id }),
  payoutBatchCollection: (acct: string) => `A#${acct}#PAYOUT_BATCH`,
};

/** The campaigns' list partition and name claims (store/campaigns.ts's writes and list), apart from `keys` like edgeKeys. */
export const campaignListKeys = {
  campaignsByCreation: (acct: string) => `A#${acct}#CAMPAIGNS`,
  campaignNameClaim: (acct: string, normalizedName: string): Key => ({
    pk: `A#${acct}#CAMPAIGN_NAME#${normalizedName}`,
    sk: CLAIM,
  }),
};

/**
 * The member and referral collections and list partitions, apart from `keys` like campaignListKeys: only the
 * lists, exports and the writes that create them name them (every byte of `keys` is in every bundle).
 */
export const listKeys = {
  memberCollection: (acct: string) => `A#${acct}#MEMBER`,
  membersByCampaign: (acct: string, campaignId: string) => `A#${acct}#CAMPAIGN#${campaignId}#MEMBERS`,
  referralCollection: (acct: string) => `A#${acct}#REFERRAL`,
  /** GSI2: a member's referrals made through one sub-id, newest first (the referral list's `sub` filter). */
  referralsBySub: (acct: string, memberId: string, sub: string) => `A#${acct}#MEMBER#${memberId}#SUB#${sub}#REFERRALS`,
};

/**
 * Keys one module names each (store/refunds.ts, store/emails.ts), apart from `keys` like listKeys: the
 * reward worker's bundle, at its budget, calls neither.
 */
export const recordKeys = {
  /**
   * One refund alert of a payment (partial refunds come one alert each), in the payment's partition just
   * after the payment, so a referral's evaluation reads payments and refunds in one Query.
   */
  refund: (acct: string, subscriptionId: ProviderId, paymentId: ProviderId, alertId: string): Key => ({
    pk: `A#${acct}#PAYMENTS#${providerIdKey(subscriptionId)}`,
    sk: `${providerIdKey(paymentId)}#REFUND#${alertId}`,
  }),
  /** Exactly-once marker of one member email (`conversion-<referral id>`, `reward-<reward id>`). */
  emailMarker: (acct: string, messageKey: string): Key => ({ pk: `A#${acct}#EMAIL#${messageKey}`, sk: 'EMAIL' }),
};

/** The operator registry of accounts with provider settings, read by the background sync (store/provider-accounts.ts). */
export const providerRegistryKeys = {
  providerAccounts: () => 'PROVIDER_ACCOUNTS#paddle',
  /** One account with provider settings (like APIKEY#, not tenant data): the backfill's list. */
  providerAccount: (acct: string): Key => ({ pk: 'PROVIDER_ACCOUNTS#paddle', sk: acct }),
};

/** API keys' lookup items, by the key's SHA-256 (shared/store/accounts.ts), apart from `keys` like edgeKeys. */
export const accessKeys = {
  apiKey: (hash: string): Key => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' }),
  /** A publishable (browser) key's lookup item, by the key's SHA-256 like a secret key. */
  publishableKey: (hash: string): Key => ({ pk: `PUBKEY#${hash}`, sk: 'PUBKEY' }),
};

/**
 * The uniqueness claims of members' codes, emails and identifiers and of referred users (store/members.ts,
 * store/referrals.ts), apart from `keys` like edgeKeys: only the writes that create or change those build them.
 */
export const uniqueKeys = {
  /** Codes compare without case; only an ASCII code may be lower-cased into a key (see isMemberCode). */
  memberCodeClaim: (acct: string, code: string): Key => {
    if (!isMemberCode(code)) throw new Error('memberCodeClaim: not a member code (check isMemberCode first)');
    return { pk: `A#${acct}#MEMBER_CODE#${code.toLowerCase()}`, sk: CLAIM };
  },
  memberEmailClaim: (acct: string, email: string): Key => ({
    pk: `A#${acct}#MEMBER_EMAIL#${email.trim().toLowerCase()}`,
    sk: CLAIM,
  }),
  memberIdentifierClaim: (acct: string, identifier: string): Key => ({
    pk: `A#${acct}#MEMBER_IDENTIFIER#${identifier}`,
    sk: CLAIM,
  }),
  referredUserClaim: (acct: string, userIdentifier: string): Key => ({
    pk: `A#${acct}#REFERRED_USER#${userIdentifier}`,
    sk: CLAIM,
  }),
};

export const keys = {
  account: (acct: string): Key => ({ pk: `A#${acct}`, sk: 'ACCOUNT' }),

  campaign: (acct: string, id: string): Key => ({ pk: `A#${acct}#CAMPAIGN`, sk: id }),

  member: (acct: string, id: string): Key => ({ pk: `A#${acct}#MEMBER`, sk: id }),

  referral: (acct: string, id: string): Key => ({ pk: `A#${acct}#REFERRAL`, sk: id }),
  referralsByMember: (acct: string, memberId: string) => `A#${acct}#MEMBER#${memberId}#REFERRALS`,

  subscription: (acct: string, id: ProviderId): Key => ({ pk: `A#${acct}#SUBSCRIPTION`, sk: providerIdKey(id) }),
  subscriptionsByCreation: (acct: string) => `A#${acct}#SUBSCRIPTIONS`,
  subscriptionsByStatus: (acct: string, status: string) => `A#${acct}#SUBSCRIPTIONS#${status}`,

  // Provider settings. The auth code lives under its own partition key so IAM can deny it (by
  // dynamodb:LeadingKeys) to every function that does not call the provider's vendor API.
  providerSettings: (acct: string): Key => ({ pk: `A#${acct}#PROVIDER`, sk: 'PADDLE' }),
  // (its secret half: providerSecretKey below)
  /** Idempotency marker of a processed provider alert (expires after ALERT_MARKER_DAYS). */
  alert: (acct: string, alertId: string): Key => ({ pk: `A#${acct}#ALERT#${alertId}`, sk: 'ALERT' }),
  /** Payments of one subscription, in payment-id order. */
  paymentsOf: (acct: string, subscriptionId: ProviderId) => `A#${acct}#PAYMENTS#${providerIdKey(subscriptionId)}`,
  payment: (acct: string, subscriptionId: ProviderId, paymentId: ProviderId): Key => ({
    pk: `A#${acct}#PAYMENTS#${providerIdKey(subscriptionId)}`,
    sk: providerIdKey(paymentId),
  }),

  // ---- money (docs/design/money.md) ----
  /** The reward ledger: one item per reward (its lifecycle), beside the copy inside its referral. */
  reward: (acct: string, id: string): Key => ({ pk: `A#${acct}#REWARD`, sk: id }),
  /**
   * Report buckets (store/reports.ts): one per scope (`T`, `C#<campaign>`, `M#<member>`) and UTC day; this is
   * shard 0 of the sharded scopes `T` and `C#` (store/shards.ts).
   */
  reportDay: (acct: string, scope: string, day: string): Key => ({ pk: `A#${acct}#REPORT#${scope}`, sk: day }),
  /** One per member and UTC month: the top-members ranking. */
  reportMemberMonth: (acct: string, month: string, memberId: string): Key => ({ pk: `A#${acct}#REPORT_MEMBERS#${month}`, sk: memberId }),

  /** Outgoing webhook events (the transactional outbox): id is deterministic per effect. */
  event: (acct: string, eventId: string): Key => ({ pk: `A#${acct}#EVENT`, sk: eventId }),
  /**
   * Operator-level sparse index partitions on GSI2 (like PROVIDER_ACCOUNTS#, not tenant data: the items
   * they point at are the tenants' own): events not yet dispatched (here), and deliveries waiting for a
   * retry (webhookKeys). Sharded so no single index partition takes every write.
   */
  outboxShard: (shard: number) => `OUTBOX#${shard}`,
};

/**
 * Outgoing webhooks' endpoints, secrets and deliveries (shared/store/webhooks.ts), apart from `keys` like
 * linkKeys: only the webhook modules build them, and an object's properties are never tree-shaken, so in
 * `keys` they weighed on every function's bundle (the reward worker's is at its budget).
 */
export const webhookKeys = {
  webhookEndpointCollection: (acct: string) => `A#${acct}#WEBHOOK_ENDPOINT`,
  webhookEndpoint: (acct: string, id: string): Key => ({ pk: `A#${acct}#WEBHOOK_ENDPOINT`, sk: id }),
  /** The signing secret of an endpoint, apart from the endpoint so reads of endpoints never carry it. */
  webhookSecret: (acct: string, endpointId: string): Key => ({ pk: `A#${acct}#WEBHOOK_SECRET`, sk: endpointId }),
  /** Deliveries of one endpoint, newest event first: sk = `<event ms>#<event id>` (one per event and endpoint). */
  webhookDeliveriesOf: (acct: string, endpointId: string) => `A#${acct}#WEBHOOK_DELIVERY#${endpointId}`,
  webhookDelivery: (acct: string, endpointId: string, deliverySk: string): Key => ({
    pk: `A#${acct}#WEBHOOK_DELIVERY#${endpointId}`,
    sk: deliverySk,
  }),
  deliveryDueShard: (shard: number) => `WEBHOOK_DUE#${shard}`,
  purgeShard: (shard: number) => `WEBHOOK_PURGE#${shard}`,
  /** A deleted endpoint whose deliveries are still to be removed (written by the delete, in its transaction). */
  webhookPurge: (acct: string, endpointId: string): Key => ({ pk: `A#${acct}#WEBHOOK_PURGE`, sk: endpointId }),
};

/**
 * Keys only a few modules name, apart from `keys`: a bundle carries an object literal whole, but drops a
 * top-level const it never uses (test/unit/bundle-budget.test.ts counts every byte of the busiest workers).
 */
export const linkKeys = {
  /** A member's named link (store/links.ts), by its slug; deleting the member leaves them unreachable. */
  memberLink: (acct: string, memberId: string, slug: string): Key => ({ pk: `A#${acct}#LINKS#${memberId}`, sk: slug }),
  /** GSI1: a member's named links, newest first (gsi1sk `<created ms>#<slug>`). */
  memberLinks: (acct: string, memberId: string) => `A#${acct}#MEMBER#${memberId}#LINKS`,
};

/** Affiliate programmes: slugs (store/slugs.ts) and the monthly summary's registry of accounts. */
export const programmeKeys = {
  /**
   * An account's slug -> the account (store/slugs.ts). Keyed by the slug alone, like API keys by their
   * digest: a public page's request knows only the slug. It names the account and holds nothing else.
   */
  accountSlug: (slug: string): Key => ({ pk: `SLUG#${slug}`, sk: 'SLUG' }),
  /** Operator registry (like PROVIDER_ACCOUNTS#) of accounts that send the affiliates' monthly summary. */
  summaryAccounts: () => 'SUMMARY_ACCOUNTS',
  summaryAccount: (acct: string): Key => ({ pk: 'SUMMARY_ACCOUNTS', sk: acct }),
  /** A campaign's slug, unique within its account -> the campaign. */
  campaignSlugClaim: (acct: string, slug: string): Key => ({ pk: `A#${acct}#CAMPAIGN_SLUG#${slug}`, sk: CLAIM }),
};

/** Affiliate applications (store/applications.ts): the form's join requests, their confirmation links, the applications. */
export const applicationKeys = {
  /** A public form's request, waiting (24 h, by TTL) for its email to be confirmed; its id becomes the application's. */
  joinRequest: (acct: string, id: string): Key => ({ pk: `A#${acct}#JOIN_REQUEST`, sk: id }),
  /** A confirmation link's token (by SHA-256) -> its account and join request; keyed by the digest alone, like API keys. */
  joinConfirm: (tokenHash: string): Key => ({ pk: `JOIN_CONFIRM#${tokenHash}`, sk: 'JOIN_CONFIRM' }),
  application: (acct: string, id: string): Key => ({ pk: `A#${acct}#APPLICATION`, sk: id }),
  applicationCollection: (acct: string) => `A#${acct}#APPLICATION`,
  /** GSI1: a campaign's applications, newest first. */
  applicationsByCampaign: (acct: string, campaignId: string) => `A#${acct}#CAMPAIGN#${campaignId}#APPLICATIONS`,
  /** GSI2: applications in one status, newest first. */
  applicationsByStatus: (acct: string, status: string) => `A#${acct}#APPLICATIONS#${status}`,
  /** While an application is pending, its (lower-cased) email names it: one pending application per address. */
  applicationEmailClaim: (acct: string, email: string): Key => ({
    pk: `A#${acct}#APPLICATION_EMAIL#${email.trim().toLowerCase()}`,
    sk: CLAIM,
  }),
};

/** The report buckets' partitions as the reports read them (the writers need only `keys.reportDay` / `reportMemberMonth`). */
export const reportReadKeys = {
  reportDays: (acct: string, scope: string) => `A#${acct}#REPORT#${scope}`,
  reportMembers: (acct: string, month: string) => `A#${acct}#REPORT_MEMBERS#${month}`,
};

/**
 * Paddle Billing's / Stripe's / Chargebee's webhook secret: its own partition, readable by their intake routes
 * only (IAM by dynamodb:LeadingKeys, infra/cloud/api-stack.ts). A top-level const, apart from `keys`: a bundle
 * drops it unless it reads or writes the secret.
 */
export const providerWebhookSecretKey = (acct: string): Key => ({ pk: `A#${acct}#PROVIDER_WEBHOOK_SECRET`, sk: 'PADDLE' });

/** A review-queue item, by its time-ordered id (`ff_…`), newest first (apart: the ledger writes held rewards' counts on it). */
export const flagKey = (acct: string, id: string): Key => ({ pk: `A#${acct}#FRAUD_FLAG`, sk: id });

/** Fraud rules (docs/fraud.md): the account's rule settings, the review queue's flags and their dedupe claims. */
export const fraudKeys = {
  /** The account's rule settings (GET/PATCH /v1/fraud-rules/); absent: the defaults. */
  settings: (acct: string): Key => ({ pk: `A#${acct}`, sk: 'FRAUD_RULES' }),
  flagCollection: (acct: string) => `A#${acct}#FRAUD_FLAG`,
  /** A review-queue item, by its time-ordered id (`ff_…`), newest first. */
  flag: flagKey,
  /** GSI2: flags in one status, newest first. */
  flagsByStatus: (acct: string, status: string) => `A#${acct}#FRAUD_FLAGS#${status}`,
  /** GSI1: a member's flags, newest first. */
  flagsByMember: (acct: string, memberId: string) => `A#${acct}#MEMBER#${memberId}#FRAUD_FLAGS`,
  /** One finding is recorded once: its dedupe key (domain/fraud.ts FraudFinding) -> the flag. */
  flagClaim: (acct: string, dedupeKey: string): Key => ({ pk: `A#${acct}#FRAUD_CLAIM#${dedupeKey}`, sk: CLAIM }),
};

/** Shards of the operator-level sparse index partitions (outbox, due deliveries). */
export const SWEEP_SHARDS = 4;

/** How long an Idempotency-Key's first response is kept and replayed. */
export const IDEMPOTENCY_HOURS = 24;

/** Paddle retries an alert for 3 days; markers are kept well beyond that. */
export const ALERT_MARKER_DAYS = 30;
