// Round trips per endpoint (issue 4, item 1). Every route of functions/routes.ts is driven through its
// happy path by the real handlers, with the DynamoDB calls recorded (shared/store/instrumentation.ts),
// the Paddle emulator's API calls counted and the SQS messages it queued drained and counted. A route
// fails when it needs more sequential DynamoDB round trips than docs/design/architecture.md "Round-trip budgets"
// allows, more calls in all than docs/data-model.md "Round trips per request" lists, or more provider calls / SQS sends.
//
// Budgets are for a WARM container: the API key is resolved from the container's cache (the
// architecture's "API key -> account: 1 (cached)"), so this file turns the auth cache on (the suite runs
// with AUTH_CACHE_TTL_SECONDS=0) and warms it before measuring; the webhook's provider settings are
// warm the same way (PROVIDER_CACHE_TTL_SECONDS, 60 s by default).
//
// Conversions find the subscription already in the table, stored with saveSubscription (the state once
// its webhook was applied): no pollers run here, since they would take the messages being counted off
// the queues and make DynamoDB calls of their own during a measurement.
//
// Writes sent with an Idempotency-Key may spend IDEMPOTENCY_EXTRA more (the key's claim before, its
// stored response after); requests without the header keep the budgets below.
//
// A route added to the table without a budget and a scenario here fails its test.
// Set ROUND_TRIPS_REPORT=1 to print the measured figures.
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { routes, type Route } from '../../functions/routes';
import { startPaddleEmulator, type PaddleEmulator } from '../../infra/local/emulators/paddle-classic';
import { resetConfig } from '../../shared/config';
import { QUEUE_NAMES, type ProviderWebhookMessage, type QueueName } from '../../shared/queue/queues';
import { createApiKey } from '../../shared/store/accounts';
import { db, tableName } from '../../shared/store/client';
import { applicationKeys, keys, providerRegistryKeys } from '../../shared/store/table';
import { clearProviderCache, saveProviderConnection, saveProviderSettings } from '../../shared/store/provider';
import { signatureHeader as billingSignature } from '../../shared/providers/paddle-billing/signature';
import { signatureHeader as stripeSignature } from '../../shared/providers/stripe/signature';
import { basicAuthHeader as chargebeeAuth } from '../../shared/providers/chargebee/signature';
import { saveSubscription, type SubscriptionData } from '../../shared/store/subscriptions';
import { approveReward } from '../../shared/flows/lifecycle';
import { evaluateReferral } from '../../shared/flows/settlement';
import { convertToSubscription } from '../../shared/flows/conversion';
import { applyProviderUpdate, getSubscription } from '../../shared/store/subscriptions';
import { createBatch } from '../../shared/flows/payouts';
import { getItem } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { recordUnattributed } from '../../shared/store/unattributed';
import { DEFAULT_FRAUD_SETTINGS, FRAUD_RULES, type FraudAction, type FraudFinding, type FraudSettings } from '../../shared/domain/fraud';
import { recordFinding } from '../../shared/flows/fraud-flags';
import { api, type ApiOptions, type ApiResponse } from '../support/api';
import { describeCalls, itemsRead, recordDynamoCalls, type DynamoCall } from '../support/dynamo-calls';
import { newAccount } from '../support/fixtures';
import { issueUnsubscribeToken } from '../../shared/store/unsubscribe';
import { freshEmail, loginAs, type DashboardLogin } from '../support/dashboard';
import { addTeamMember, issueLoginToken, teamKeys } from '../../shared/store/team';
import { nowSeconds } from '../../shared/store/ops';
import { startTestQueues, type TestQueues } from '../support/queues';
import { affiliateLoginUrl } from '../../shared/flows/affiliate-login';
import { newApplicationId } from '../../shared/domain/applications';
import { tokenHash } from '../../shared/domain/team';
import { issueJoinConfirmation } from '../../shared/flows/applications';
import { joinRequestExpiry, putJoinRequest } from '../../shared/store/applications';
import { startPaypalEmulator, type PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { type chargebee, deliver as deliverTo, PROVIDER_HARNESSES } from '../support/provider-harness';
import { processProviderWebhook } from '../../shared/flows/subscription-sync';
import { saveRailConnection } from '../../shared/store/rail-connections';
import { startWiseEmulator, type WiseEmulator } from '../../infra/local/emulators/wise';
import { clearRailConnectionCache } from '../../shared/rails/intake';
import {
  paypalConnection,
  paypalDelivery,
  putProcessingRailBatch,
  putUnclaimedPaypalPayout,
  stripeConnection,
  stripeDelivery,
  wiseConnection,
  wiseDelivery,
  type RailDelivery,
} from '../support/rail-deliveries';

let paypalRail: PaypalEmulator | undefined;
let stripeRail: StripeEmulator | undefined;
let wiseRail: WiseEmulator | undefined;
const allowLoopback = process.env.WEBHOOK_ALLOW_LOOPBACK;

interface Budget {
  /** Sequential DynamoDB round trips (docs/design/architecture.md "Round-trip budgets"). */
  depth: number;
  /** DynamoDB calls in all, parallel ones included (docs/data-model.md "Round trips per request"). */
  calls: number;
  /** Calls to the payment provider's API. */
  provider: number;
  /** SQS messages sent, per queue; a queue not listed must receive none. */
  sends: Partial<Record<QueueName, number>>;
}

const budget = (depth: number, calls: number, extra: Partial<Pick<Budget, 'provider' | 'sends'>> = {}): Budget => ({
  depth,
  calls,
  provider: extra.provider ?? 0,
  sends: extra.sends ?? {},
});

/** `?search=` on members: claims BatchGet -> members BatchGet -> their campaigns and subscriptions BatchGet, the rate limit beside. */
const SEARCH_MEMBERS = budget(3, 4);
/** A rail batch: a file batch's calls, the connection's public item GetItem, and its send-rail-batch message. */
const RAIL_BATCH = budget(6, 6, { sends: { 'payout-rails': 1 } });
/** The one message a rail route queues (the payout-rails worker does the rest). */
const RAIL_SEND = { 'payout-rails': 1 };
/** `?batch_id=` on payouts: the batch GetItem (its payout ids) -> one BatchGet of them, the rate limit beside. */
const PAYOUTS_OF_BATCH = budget(2, 3);
/** `?search=` on referrals: the referred-user claim GetItem -> the referral GetItem, the rate limit beside. */
const SEARCH_REFERRALS = budget(2, 3);

/** What an Idempotency-Key adds to a write: one conditional PutItem (claim) + one UpdateItem (stored response). */
const IDEMPOTENCY_EXTRA = { depth: 2, calls: 2 };

/**
 * What a dashboard session costs instead of a warm API key: one GetItem of the session, never cached (a
 * logout, a removal or a role change takes effect on the next request). The session-only routes' budgets
 * below include it; an API-key route measured with a session gets it on top.
 */
const SESSION_EXTRA = { depth: 1, calls: 1 };
/** A session last slid 300 s ago or more: its expiry is moved once, one UpdateItem after the GetItem. */
const SLIDE_EXTRA = { depth: 1, calls: 1 };

// route name -> budget for its happy path (every variant a scenario drives must fit it).
//
// Every /v1/ request (and the conversion) also counts against its API key's rate limit (issue 7, README
// "Rate limits"): at most one UpdateItem (a container writes its count once per 5% of the limit, and every
// request near the limit). A GET runs it beside its own first call (+1 call, same depth); a write waits for
// it before writing (+1 call, +1 depth). The figures below allow for it.
const BUDGETS: Record<string, Budget> = {
  // get campaign / referral / subscription: 1 GetItem.
  GetCampaign: budget(1, 2),
  GetReferral: budget(1, 2),
  GetSubscription: budget(1, 2),
  // get member: 1 GetItem + 1 BatchGet (nested campaign + subscription).
  GetMember: budget(2, 3),
  // referral by user identifier: <= 2 (claim -> referral).
  GetReferralByUser: budget(2, 3),
  // why a referral did not convert (docs/referrals-diagnosis.md): GetItem referral ‖ Query GSI1 [‖ Query by
  // ?email], then [Query by the user_identifier's email], then BatchGet of the sightings' subscriptions <= 3.
  DiagnoseReferral: budget(3, 5),
  // list with filter, page of N, exact count: 1 Query || the counter's BatchGet (its 8 shards, shared/store/shards.ts;
  // a limit's counter is one item) or the parent's GetItem.
  ListCampaigns: budget(1, 3),
  ListReferrals: budget(1, 3),
  ListSubscriptions: budget(1, 3),
  // ... + 1 BatchGet to nest (members: campaigns + subscriptions).
  ListMembers: budget(2, 4),
  // create referral (idempotent): <= 3 (claims BatchGet -> member + campaign BatchGet -> transaction).
  // ... + 1 SQS send (the coupon job) when the campaign is double-sided and the coupon is still missing,
  // and the webhook event it commits is handed to webhook-events after the commit (one SQS send).
  // The account rides along in the member BatchGet: an account that sends the new-referral email queues
  // it too (docs/affiliate-emails.md).
  CreateReferral: budget(4, 4, { sends: { rewards: 1, 'webhook-events': 1, 'member-emails': 1 } }),
  // create / update member, campaign: <= 3 (+ the rate limit).
  CreateCampaign: budget(4, 4),
  UpdateCampaign: budget(4, 4),
  CreateMember: budget(4, 4, { sends: { 'webhook-events': 1 } }),
  UpdateMember: budget(4, 4),
  // deletes, per the README: campaign GetItem + transaction; member GetItem (+ GetItem campaign) +
  // transaction; referral GetItem + GetItem member + transaction.
  DeleteCampaign: budget(3, 3),
  DeleteMember: budget(4, 4),
  DeleteReferral: budget(4, 4),
  // conversion: <= 3 DynamoDB + 1 provider call + 1 SQS send.
  ConvertReferral: budget(4, 4, { provider: 1, sends: { rewards: 1, 'webhook-events': 1 } }),
  ConvertReferralV1: budget(4, 4, { provider: 1, sends: { rewards: 1, 'webhook-events': 1 } }),
  // webhook intake: 0 DynamoDB (settings cached) + 1 SQS send.
  ProviderWebhook: budget(0, 0, { sends: { 'provider-events': 1 } }),
  // Public /js/v1/ endpoints (docs/data-model.md "Round trips per request"): at most the per-key and per-IP rate-limit windows,
  // written in parallel (1, once per batch), then the domain's own calls. The script and the CORS
  // preflights touch nothing.
  BrowserScript: budget(0, 0),
  RecordClickPreflight: budget(0, 0),
  CreateJsReferralPreflight: budget(0, 0),
  // click: limits || limits, code claim GetItem, TransactWriteItems (marker + member).
  RecordClick: budget(3, 4),
  // js referral: limits || limits, then the API create's 3 (and its coupon job and webhook event).
  CreateJsReferral: budget(4, 5, { sends: { rewards: 1, 'webhook-events': 1, 'member-emails': 1 } }),
  // webhook endpoints (+ the rate limit: beside a read, before a write): list = Query || counter; create =
  // 1 transaction (endpoint + secret + counter); update and delete = GetItem + transaction (its event types
  // leave the counts with it); deliveries = GetItem endpoint (its count) then Query.
  ListWebhookEndpoints: budget(1, 3),
  CreateWebhookEndpoint: budget(2, 2),
  GetWebhookEndpoint: budget(1, 2),
  UpdateWebhookEndpoint: budget(3, 3),
  DeleteWebhookEndpoint: budget(3, 3),
  ListWebhookDeliveries: budget(2, 3),
  // ---- money (docs/design/money.md) ----
  // lists (+ the rate limit beside): 1 Query || the filter's counter BatchGet (its shards). A filter the partition does
  // not key on (member + status, campaign, type, currency) is a FilterExpression on the same Query.
  ListRewards: budget(1, 3),
  ListPayouts: budget(1, 3),
  ListPayoutBatches: budget(1, 3),
  // reports: one Query of the scope's daily buckets (the overview's covers both periods), per shard for the
  // account's and a campaign's (8 in parallel, shared/store/shards.ts; a member's are one partition); the
  // ranking one Query per month of the range (at most 14, in parallel), then one BatchGet of the members it shows.
  ReportTimeseries: budget(1, 9),
  // export page: Queries of 1,000 items following LastEvaluatedKey (1 for a small list).
  ExportCsv: budget(1, 2),
  ReportOverview: budget(1, 9),
  ReportMembers: budget(2, 16),
  // summary: 1 Query of the account's payout_sum# counters.
  PayoutSummary: budget(1, 2),
  GetReward: budget(1, 2),
  GetPayout: budget(1, 2),
  GetPayoutBatch: budget(1, 2),
  // file: the batch GetItem, then one BatchGet of its payouts (100 per call, in parallel).
  PayoutBatchFile: budget(2, 3),
  // approve: (rate limit) -> reward GetItem -> referral GetItem || (pointer + member BatchGet -> payout ||
  // campaign GetItem) -> one transaction (reward, referral copy, member, counters, payout, event).
  ApproveReward: budget(5, 7, { sends: { 'webhook-events': 2 } }),
  // void: (rate limit) -> reward GetItem -> payout || referral || (pointer + member -> payout || campaign) -> transaction.
  VoidReward: budget(5, 8, { sends: { 'webhook-events': 1 } }),
  // mark paid: (rate limit) -> payout -> member || rewards BatchGet -> referrals BatchGet -> transaction(s).
  // ... and the payout-sent email queued after the commit (docs/affiliate-emails.md).
  MarkPayoutPaid: budget(5, 6, { sends: { 'webhook-events': 2, 'member-emails': 1 } }),
  // mark failed: as mark paid, with the member's collecting payout read beside the referrals.
  MarkPayoutFailed: budget(6, 8, { sends: { 'webhook-events': 2 } }),
  CancelPayout: budget(6, 8, { sends: { 'webhook-events': 1 } }),
  // batch of given payouts: (rate limit) -> payouts BatchGet -> members BatchGet -> batch Put -> one
  // transaction per payout (8 in parallel).
  CreatePayoutBatch: budget(5, 5),
  // Payout rails (docs/payouts.md). Re-send of an unclaimed PayPal payout: (limit) -> payout GetItem ->
  // conditional UpdateItem (the attempt counted) -> one send-to-rail message.
  ResendPayout: budget(3, 3, { sends: { 'payout-rails': 1 } }),
  // Reconcile: (limit) -> batch GetItem -> one reconcile message (the worker reads the rail).
  ReconcilePayoutBatch: budget(2, 2, { sends: { 'payout-rails': 1 } }),
  // The rails' webhook intakes: 0 DynamoDB while the connection is cached (cold: one BatchGet, measured
  // below) + one SQS send.
  PaypalRailWebhook: budget(0, 0, { sends: { 'payout-rails': 1 } }),
  StripeConnectRailWebhook: budget(0, 0, { sends: { 'payout-rails': 1 } }),
  WiseRailWebhook: budget(0, 0, { sends: { 'payout-rails': 1 } }),
  // batch mark-paid: batch GetItem, then each payout as MarkPayoutPaid (4 in parallel).
  MarkPayoutBatchPaid: budget(7, 8, { sends: { 'webhook-events': 2, 'member-emails': 1 } }),
  // The OpenAPI document and its rendering: no table at all.
  GetOpenApi: budget(0, 0),
  ApiDocs: budget(0, 0),
  // The root's pointer to the reference and the liveness check: no table either.
  ApiRoot: budget(0, 0),
  Health: budget(0, 0),

  // ---- the dashboard (docs/dashboard.md) ----
  // Login routes: no credential. A login link: the per-IP window (a limit of 30: every request counted in
  // the item, one conditional UpdateItem), then one SQS send; the worker looks the address up and paces its
  // emails, never the request path (same cost for any address).
  CreateLoginLink: budget(1, 1, { sends: { 'member-emails': 1 } }),
  // session: per-IP window -> link GetItem -> member || account GetItem -> one transaction (link delete,
  // last login, session, its ref).
  CreateSession: budget(4, 5),
  // current session: the session GetItem.
  GetCurrentSession: budget(1, 1),
  // logout: session GetItem -> delete session -> delete its ref.
  EndCurrentSession: budget(3, 3),
  // Session-only routes: the session GetItem first, then as an API-key route (the rate limit beside a read,
  // before a write). Team list: Query of the team partition.
  ListTeam: budget(2, 3),
  // invite: (limit) -> team Query (the size bound) -> transaction (lookup + member [+ owners]) -> the link's SQS send.
  InviteTeamMember: budget(4, 4, { sends: { 'member-emails': 1 } }),
  // role change: (limit) -> member GetItem -> transaction (member [+ owners]) -> the member's session refs
  // Query -> one UpdateItem per open session (one here).
  UpdateTeamMember: budget(6, 6),
  // removal: (limit) -> member GetItem -> transaction -> refs Query -> per open session: delete it, delete its ref.
  RemoveTeamMember: budget(7, 7),
  // API keys: list = Query of the records; create = one transaction (lookup item + record); revoke = record
  // GetItem -> transaction (record + lookup item).
  ListApiKeys: budget(2, 3),
  CreateApiKey: budget(3, 3),
  RevokeApiKey: budget(4, 4),
  // Account settings (an API-key route): one BatchGet (account + provider's public settings) beside the limit.
  GetAccount: budget(1, 2),
  // email previews (docs/affiliate-emails.md): the account GetItem (its sender and name), the rate limit beside.
  ListEmailTemplates: budget(1, 2),
  // update: (limit) -> account UpdateItem [-> publishable key GetItem -> transaction (account + key item), for
  // js_referrals] -> the settings' BatchGet.
  UpdateAccount: budget(5, 5),
  // provider connection: session -> (limit) -> settings + subscriptions counter BatchGet -> one transaction -> the settings' BatchGet.
  SetProviderConnection: budget(5, 5),
  // Payout rails (docs/payouts.md "Connecting a rail"): the session, then one Query; a connection is checked
  // at the rail (an HTTP call, not DynamoDB) and written in one transaction.
  ListPayoutRails: budget(2, 2),
  SetPayoutRail: budget(2, 2),
  DeletePayoutRail: budget(2, 2),

  // ---- the member portal (docs/portal.md) ----
  // portal link: (limit) -> one transaction (member check, link, its ref).
  CreatePortalSession: budget(2, 2),
  // revoke: (limit) -> member GetItem || refs Query -> one transaction per link or session (in parallel; two here).
  RevokePortalSessions: budget(3, 5),
  // widget script: a file; the page: the account GetItem (its embed origins).
  EmbedScript: budget(0, 0),
  PortalPage: budget(1, 1),
  // A member email's unsubscribe link: the page reads the token's item; the one-click POST reads it, then
  // the member (already opted out: nothing more), then the member update (its own read, the campaign and
  // subscription BatchGet, the transaction).
  UnsubscribePage: budget(1, 1),
  Unsubscribe: budget(5, 5),
  // opening: per-IP window -> link GetItem -> account GetItem -> one transaction (link, member check, session, refs).
  OpenPortalSession: budget(4, 4),
  // Portal routes: the session GetItem (never cached), then the session's rate limit beside a read, before a write.
  // me: member GetItem -> campaign + subscription BatchGet, beside the account GetItem and the connected rails' Query.
  PortalMe: budget(3, 5),
  // settings: (limit) -> member GetItem (beside the connected rails' Query) -> campaign + subscription BatchGet
  // -> transaction -> the account GetItem beside (for a payout email or method) the member's collecting
  // payouts: Query -> BatchGet -> GetItem -> GetItem.
  UpdatePortalMe: budget(8, 11),
  // Stripe's "Set up payouts": the Stripe connection's BatchGet beside the member and account GetItems ->
  // (the first time: Stripe's account, then one transaction storing it) -> the member's collecting payouts'
  // Query -> (Stripe's Account Link).
  PortalStripeAccountLink: budget(4, 6),
  // stats: one Query of the member's daily buckets.
  PortalStats: budget(2, 3),
  // lists: the page's Query beside its count (the member item, or the filter's counter).
  PortalReferrals: budget(2, 4),
  PortalRewards: budget(2, 5),
  PortalPayouts: budget(2, 4),
  // The affiliate's login page by slug: the slug's pointer -> the account.
  PortalLoginPage: budget(2, 2),
  // login link: the per-IP and per-email windows (parallel) -> slug pointer -> account -> the member's email
  // claim, then one SQS send for a member (the same path for any address).
  CreatePortalLoginLink: budget(4, 5, { sends: { 'member-emails': 1 } }),
  // login session: per-IP window -> link GetItem -> account GetItem -> one transaction (link, member check, session, refs).
  OpenPortalLoginSession: budget(4, 4),
  // log out: the session GetItem -> one transaction (session, its ref).
  EndPortalSession: budget(2, 2),
  // tax details: the session GetItem, then the account and the tax item beside the session's limit.
  GetPortalTaxDetails: budget(2, 3),
  // giving them: session -> (limit) -> transaction (tax item, member marker) -> the account beside the
  // member's collecting payouts (Query -> BatchGet -> GetItem -> transaction when one becomes due).
  PutPortalTaxDetails: budget(6, 8),
  // the owner's session GetItem -> one Query of the tax partition (decrypting needs no table read).
  ExportTaxDetails: budget(2, 2),
  // Named links (store/links.ts): a list is the Query beside the member and account GetItems (count, code,
  // referral_url); a create is the transaction (link + the member's named_links) beside the same two reads;
  // a delete one transaction. Behind a portal session, its GetItem first.
  ListMemberLinks: budget(1, 4),
  CreateMemberLink: budget(2, 4),
  DeleteMemberLink: budget(2, 2),
  PortalLinks: budget(2, 5),
  CreatePortalLink: budget(3, 5),
  DeletePortalLink: budget(3, 3),
  // ---- applications (docs/affiliates.md "Applications") ----
  // the page: account by slug (pointer, account) -> campaign by slug (claim, campaign): 4 GetItems.
  JoinPage: budget(4, 4),
  // the form: the 4 slug reads -> the email's and the address's limits || the member and pending-application
  // claims (BatchGet) -> the join request's PutItem (not for a known address) -> one SQS send.
  SubmitApplication: budget(6, 8, { sends: { 'member-emails': 1 } }),
  // the link's page: token GetItem -> account + campaign BatchGet [-> the application, once used].
  ConfirmApplicationPage: budget(3, 3),
  // the button: token GetItem -> account + campaign + join request BatchGet -> one transaction (application,
  // its claim or its member, counters, events); then the events' hand-off and, approved at once, the email.
  ConfirmApplication: budget(3, 3, { sends: { 'webhook-events': 3, 'member-emails': 1 } }),
  ListApplications: budget(1, 3),
  GetApplication: budget(1, 2),
  // approve: (limit) -> application GetItem -> campaign GetItem -> one transaction (application, claim, counters,
  // member and its claims, events) -> the approval email; reject the same without the campaign.
  ApproveApplication: budget(4, 4, { sends: { 'member-emails': 1, 'webhook-events': 2 } }),
  RejectApplication: budget(3, 3, { sends: { 'member-emails': 1, 'webhook-events': 1 } }),
  // ---- fraud rules, held rewards and the review queue (docs/fraud.md) ----
  // settings: one GetItem (absent: the defaults), the rate limit beside; a PATCH one UpdateItem after it.
  GetFraudRules: budget(1, 2),
  UpdateFraudRules: budget(2, 2),
  // preview (a POST: the rate limit first) of a referral rule: the settings GetItem -> the 90 days' referrals
  // Query beside the applications' or members' Query (one page each at these sizes). A member rule reads each
  // member's daily buckets on top (PREVIEW_MEMBERS below).
  PreviewFraudRule: budget(3, 4),
  // the queue: one Query (the flag collection, GSI2 by status or GSI1 by member) || the filter's counter BatchGet.
  ListFraudFlags: budget(1, 3),
  GetFraudFlag: budget(1, 2),
  // a flag's release or void: (limit) -> flag GetItem -> the held rewards' BatchGet -> their referrals and
  // members' BatchGet [-> the collecting payout and campaign, when approved at once] -> the flag GetItem
  // -> the rewards' transaction -> the flag GetItem -> the flag's transaction (status, fraud_hold).
  // reward.released (+ reward.approved and payout.due when approved at once) after the commit.
  ReleaseFraudFlag: budget(9, 9, { sends: { 'webhook-events': 3 } }),
  VoidFraudFlag: budget(7, 7, { sends: { 'webhook-events': 1 } }),
  // review (holding nothing): (limit) -> flag GetItem -> the flag's transaction.
  ReviewFraudFlag: budget(3, 3),
  // a held reward's release: (limit) -> reward GetItem -> the same reads and one transaction as a flag's.
  ReleaseReward: budget(7, 7, { sends: { 'webhook-events': 3 } }),
};

/**
 * A member rule's preview in an account of two members: the referral rule's reads, then one Query of each
 * member's daily buckets (8 at a time; the preview reads at most 1,000 members, shared/flows/fraud-preview.ts).
 */
const PREVIEW_MEMBERS = budget(4, 6);

/** One request to measure, prepared by a scenario (the preparation itself is not measured). */
interface Variant {
  label: string;
  /** Values for the route path's `{name}` segments. */
  params?: Record<string, string>;
  query?: string;
  options?: Omit<ApiOptions, 'key'>;
  /** Without the API key (provider-signed and public routes). */
  anonymous?: boolean;
  /** Sent as Idempotency-Key: the budget grows by IDEMPOTENCY_EXTRA. */
  idempotencyKey?: string;
  /** Exactly this many DynamoDB calls (an Idempotency-Key replay: the one PutItem that finds the stored response). */
  exactCalls?: number;
  /** A variant with its own budget instead of the route's (a search: claims first, docs/data-model.md). */
  budget?: Budget;
  /** The exact figures this variant must show when they are known to be below the route's budget. */
  exact?: Partial<{ provider: number; sends: Partial<Record<QueueName, number>> }>;
  /**
   * With a dashboard session (its cookie and this site's Origin) instead of the API key: the owner's, or the
   * given one. On an API-key route the budget grows by SESSION_EXTRA (session-only routes include it).
   */
  session?: true | DashboardLogin;
  /** The session is due a slide (last slid 300 s ago or more): the budget grows by SLIDE_EXTRA. */
  slide?: boolean;
}

interface Measured {
  route: string;
  variant: string;
  status: number;
  depth: number;
  calls: DynamoCall[];
  provider: number;
  sends: Record<string, number>;
}

let queues: TestQueues;
let paddle: PaddleEmulator;
/** A second account, connected to Paddle Billing (its intake reads the connection, not Classic's settings). */
let billingAccountId: string;
const BILLING_SECRET = 'pdl_ntfset_roundtrips0000001';
/** A third, connected to Stripe. */
let stripeAccountId: string;
const STRIPE_SECRET = 'whsec_roundtrips000000000001';
/** A fourth, connected to Chargebee (its webhooks carry this Basic-auth pair). */
let chargebeeAccountId: string;
const CHARGEBEE_PAIR = 'refloop:roundtrips-chargebee-password-01';
let accountId: string;
let key: string;
let publishableKey: string;
/** The account's owner, logged in to the dashboard. */
let owner: DashboardLogin;
/** Accounts a scenario connects to a provider: taken off the background-sync registry after the file. */
const connected: string[] = [];
// The login routes are rate limited per IP: this file's own address (127.0.0.1 is every other file's).
const LOGIN_IP = '198.51.100.31';
const results: Measured[] = [];
let serial = 0;
const unique = (prefix: string) => `${prefix}-${++serial}-${Date.now().toString(36)}`;

beforeAll(async () => {
  // A warm container: resolved API keys stay cached (config is read once, so reset it).
  process.env.AUTH_CACHE_TTL_SECONDS = '3600';
  // Webhook endpoints of the scenarios are on loopback (never a public address from a test).
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  delete process.env.PROVIDER_CACHE_TTL_SECONDS;
  resetConfig();
  queues = await startTestQueues();
  paddle = await startPaddleEmulator({ webhookUrl: null });
  // Unlimited: the scenarios create more campaigns than the Regular plan's 10.
  ({ accountId, apiKey: key, publishableKey } = await newAccount('unlimited'));
  await saveProviderSettings(accountId, {
    vendorId: paddle.vendorId,
    authCode: paddle.authCode,
    publicKey: paddle.publicKeyPem,
    vendorsApiUrl: paddle.vendorsApiUrl,
    checkoutApiUrl: paddle.checkoutApiUrl,
  });
  // Off the background-sync registry: another file's backfill (paddle-pipeline.test.ts runs the real job,
  // which syncs every registered account of the shared test table) must not call this file's emulator
  // while a conversion's provider calls are being counted.
  await db().send(new DeleteCommand({ TableName: tableName(), Key: providerRegistryKeys.providerAccount(accountId) }));
  ({ accountId: billingAccountId } = await newAccount());
  await saveProviderConnection(billingAccountId, {
    kind: 'paddle-billing',
    apiKey: 'pdl_sdbx_apikey_unused00',
    apiUrl: 'http://127.0.0.1:9',
    webhookSecret: BILLING_SECRET,
  });
  await db().send(new DeleteCommand({ TableName: tableName(), Key: providerRegistryKeys.providerAccount(billingAccountId) }));
  ({ accountId: stripeAccountId } = await newAccount());
  await saveProviderConnection(stripeAccountId, {
    kind: 'stripe',
    secretKey: 'rk_test_roundtripsunused',
    apiUrl: 'http://127.0.0.1:9',
    webhookSecret: STRIPE_SECRET,
  });
  await db().send(new DeleteCommand({ TableName: tableName(), Key: providerRegistryKeys.providerAccount(stripeAccountId) }));
  ({ accountId: chargebeeAccountId } = await newAccount());
  await saveProviderConnection(chargebeeAccountId, {
    kind: 'chargebee',
    site: 'roundtrips-test',
    apiKey: 'test_roundtripsunused0',
    apiUrl: 'http://127.0.0.1:9',
    webhookUsername: 'refloop',
    webhookPassword: CHARGEBEE_PAIR.slice('refloop:'.length),
  });
  await db().send(new DeleteCommand({ TableName: tableName(), Key: providerRegistryKeys.providerAccount(chargebeeAccountId) }));
  // Warm the auth cache.
  expect((await call('GET', '/v1/campaigns/')).status).toBe(200);
  owner = await loginAs(accountId, 'owner');
});

/** A signed Stripe event (a type the worker acknowledges without effect). */
function stripeEvent(): Omit<ApiOptions, 'key'> {
  const rawBody = JSON.stringify({
    id: `evt_${unique('rt').replace(/[^A-Za-z0-9]/g, '')}`,
    object: 'event',
    type: 'customer.updated',
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: 'cus_01' } },
  });
  return {
    rawBody,
    headers: {
      'content-type': 'application/json',
      'stripe-signature': stripeSignature(STRIPE_SECRET, rawBody, Math.floor(Date.now() / 1000)),
    },
  };
}

/** A Chargebee event with its Basic-auth pair (an event type the worker acknowledges without a call). */
function chargebeeEvent(): Omit<ApiOptions, 'key'> {
  const rawBody = JSON.stringify({
    id: `ev_${unique('rt').replace(/[^A-Za-z0-9]/g, '')}`,
    occurred_at: Math.floor(Date.now() / 1000),
    source: 'api',
    object: 'event',
    api_version: 'v2',
    event_type: 'customer_changed',
    webhook_status: 'scheduled',
    content: { customer: { id: 'AzZTZgVlCqZ2k1Aa', object: 'customer' } },
  });
  return { rawBody, headers: { 'content-type': 'application/json', authorization: chargebeeAuth(CHARGEBEE_PAIR) } };
}

/** A signed Paddle Billing notification (an event type the worker acknowledges without effect). */
function billingNotification(): Omit<ApiOptions, 'key'> {
  const rawBody = JSON.stringify({
    event_id: `evt_${unique('rt').replace(/[^A-Za-z0-9]/g, '')}`,
    event_type: 'customer.updated',
    occurred_at: new Date().toISOString(),
    notification_id: 'ntf_01',
    data: { id: 'ctm_01' },
  });
  return {
    rawBody,
    headers: {
      'content-type': 'application/json',
      'paddle-signature': billingSignature(BILLING_SECRET, rawBody, Math.floor(Date.now() / 1000)),
    },
  };
}

afterAll(async () => {
  await paypalRail?.stop();
  await stripeRail?.stop();
  await wiseRail?.stop();
  if (allowLoopback === undefined) delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  else process.env.WEBHOOK_ALLOW_LOOPBACK = allowLoopback;
  for (const id of connected) await db().send(new DeleteCommand({ TableName: tableName(), Key: providerRegistryKeys.providerAccount(id) }));
  await queues?.stop();
  await paddle?.stop();
  if (process.env.ROUND_TRIPS_REPORT === '1' && results.length > 0) {
    const lines = results.map(
      (r) =>
        `${r.route.padEnd(18)} ${r.variant.padEnd(34)} depth=${r.depth} calls=${r.calls.length} items=${itemsRead(r.calls)} ` +
        `provider=${r.provider} sends=${JSON.stringify(r.sends)} | ${describeCalls(r.calls)}`,
    );
    process.stdout.write(`\nround trips per request (warm caches):\n${lines.join('\n')}\n`);
  }
});

// ---- fixtures (not measured) ----------------------------------------------------------------------

async function call(method: string, path: string, options: Omit<ApiOptions, 'key'> = {}): Promise<ApiResponse> {
  return api(method, path, { key, ...options });
}

async function expectStatus(res: Promise<ApiResponse>, status: number): Promise<any> {
  const r = await res;
  if (r.status !== status) throw new Error(`fixture request answered ${r.status}, expected ${status}: ${r.text}`);
  return r.body;
}

const createCampaign = () =>
  expectStatus(call('POST', '/v1/campaigns/', { body: { name: unique('Campaign'), allows_credit: true, credit_amount: '5.00' } }), 201);

let subscriptionIds = 70_000_000;
function subscriptionData(id: number, status = 'active'): SubscriptionData {
  return {
    id,
    unit_price: '10.00',
    currency: 'USD',
    status,
    email: `billing-${id}@example.com`,
    next_bill_date: '2031-07-01',
    last_bill_date: '2031-06-01',
    plan: {
      id: 9001,
      name: 'Pro monthly',
      amount: '10.00',
      currency: 'USD',
      interval: 'month',
      frequency: 1,
      descriptor: '$10.00 / month',
    },
  };
}
const newSubscription = () => saveSubscription(accountId, subscriptionData(++subscriptionIds));

/** A member in a fresh campaign with a subscription attached: the full shape every read nests. */
async function fullMember(): Promise<{ id: string; code: string; campaignId: string; subscriptionId: number | string }> {
  const campaign = await createCampaign();
  const subscription = await newSubscription();
  const name = unique('member');
  const body = await expectStatus(
    call('POST', '/v1/members/', {
      body: { identifier: name, email: `${name}@example.com`, campaign: { id: campaign.id }, subscription: { id: subscription.id } },
    }),
    201,
  );
  return { id: body.id, code: body.code, campaignId: campaign.id, subscriptionId: subscription.id };
}

async function referral(code: string, user = unique('user')): Promise<{ id: string; user: string }> {
  const body = await expectStatus(call('POST', '/v1/referrals/', { body: { user_identifier: user, member_code: code } }), 200);
  return { id: body.id, user };
}

/** A subscription at the provider whose webhook has already been applied (our copy exists, unassigned). */
async function checkedOut(): Promise<{ checkoutId: string; subscriptionId: number }> {
  const out = await paddle.checkout({ plan_id: 9001, email: `${unique('buyer')}@example.com`, deliver: false });
  await saveSubscription(accountId, subscriptionData(out.subscription.subscription_id));
  return { checkoutId: out.checkout_id, subscriptionId: out.subscription.subscription_id };
}

/**
 * A commission of 4.00 (hold 0) as the reward worker records it, for a member with a payout email; then
 * approved into their payout (due), and that payout taken into a batch, when asked.
 */
async function moneyFixture(o: {
  approve?: boolean;
  batch?: boolean;
  memberId?: string;
  /** The new campaign's hold period (0 unless told). */
  holdDays?: number;
}): Promise<{ rewardId: string; referralId: string; memberId: string; campaignId: string; payoutId?: string; batchId?: string }> {
  let memberId = o.memberId;
  let campaignId = '';
  let code: string;
  if (!memberId) {
    const campaign = await expectStatus(
      call('POST', '/v1/campaigns/', {
        body: { name: unique('Money'), allows_commission: true, commission_amount: '4.00', hold_days: o.holdDays ?? 0 },
      }),
      201,
    );
    const name = unique('payee');
    const member = await expectStatus(
      call('POST', '/v1/members/', {
        body: { identifier: name, email: `${name}@example.com`, campaign: { id: campaign.id }, payout_email: `${name}@pay.example.com` },
      }),
      201,
    );
    memberId = member.id as string;
    campaignId = campaign.id as string;
    code = member.code as string;
  } else {
    const member = await expectStatus(call('GET', `/v1/members/${memberId}/`), 200);
    code = member.code as string;
    campaignId = member.campaign.id as string;
  }
  const r = await referral(code);
  const stored = toReferral(await getItem(keys.referral(accountId, r.id)));
  if (!stored) throw new Error('fixture referral missing');
  const recorded = await recordRewards(
    accountId,
    stored,
    [{ payment_id: ++subscriptionIds, type: 'commission', amount: 400, currency: 'USD' }],
    false,
    true,
  );
  const rewardId = recorded.rewards[0]!.id;
  const referralId = r.id;
  if (!o.approve) return { rewardId, referralId, memberId, campaignId };
  const approved = await approveReward(accountId, rewardId);
  const payoutId = approved.payout_id!;
  if (!o.batch) return { rewardId, referralId, memberId, campaignId, payoutId };
  const batch = await createBatch(accountId, { format: 'csv', currency: 'USD', payout_ids: [payoutId] });
  return { rewardId, referralId, memberId, campaignId, payoutId, batchId: batch.id };
}

// ---- scenarios: route name -> the happy-path requests to measure ----------------------------------

type Scenario = () => Promise<Variant[]>;

const SCENARIOS: Record<string, Scenario> = {
  GetCampaign: async () => [{ label: 'campaign', params: { id: (await createCampaign()).id } }],
  GetSubscription: async () => [{ label: 'subscription', params: { id: String((await newSubscription()).id) } }],
  GetReferral: async () => {
    const m = await fullMember();
    return [{ label: 'referral', params: { id: (await referral(m.code)).id } }];
  },
  GetMember: async () => [{ label: 'member with campaign + subscription', params: { id: (await fullMember()).id } }],
  DiagnoseReferral: async () => {
    const m = await fullMember();
    const user = `${unique('diag')}@example.com`;
    const r = await referral(m.code, user);
    // One sighting of a subscription under that email, as the worker records it.
    const sub = await newSubscription();
    await recordUnattributed(accountId, {
      subscriptionId: sub.id,
      email: user.toUpperCase(),
      reason: 'no_referral_hint',
      detail: 'no referral',
      eventId: 'evt_rt',
    });
    return [
      { label: 'email from user_identifier', params: { id: r.id } },
      { label: '?email=', params: { id: r.id }, query: `email=${encodeURIComponent(user)}` },
    ];
  },
  GetReferralByUser: async () => {
    const m = await fullMember();
    return [{ label: 'by user identifier', params: { user_identifier: (await referral(m.code)).user } }];
  },

  ListCampaigns: async () => {
    await createCampaign();
    return [{ label: 'first page' }, { label: 'page_size=100', query: 'page_size=100' }];
  },
  ListReferrals: async () => {
    const m = await fullMember();
    const r = await referral(m.code);
    await referral(m.code);
    return [
      { label: 'first page' },
      { label: 'page_size=100', query: 'page_size=100' },
      { label: '?member=', query: `member=${m.id}` },
      // search: referred-user claim GetItem -> referral GetItem (+ the rate limit beside).
      { label: '?search= (user identifier)', query: `search=${encodeURIComponent(r.user)}`, budget: SEARCH_REFERRALS },
    ];
  },
  ListSubscriptions: async () => {
    await newSubscription();
    return [
      { label: 'first page' },
      { label: 'page_size=100', query: 'page_size=100' },
      { label: '?status=active', query: 'status=active' },
    ];
  },
  ListMembers: async () => {
    const m = await fullMember();
    return [
      { label: 'first page (nested campaign + subscription)' },
      { label: 'page_size=100', query: 'page_size=100' },
      { label: '?campaign=', query: `campaign=${m.campaignId}` },
      // search: claims BatchGet -> members BatchGet -> campaigns + subscriptions BatchGet (+ the rate limit beside).
      { label: '?search= (code, lower case)', query: `search=${m.code.toLowerCase()}`, budget: SEARCH_MEMBERS },
      { label: '?search=&campaign=', query: `search=${m.code}&campaign=${m.campaignId}`, budget: SEARCH_MEMBERS },
    ];
  },

  CreateCampaign: async () => {
    const idem = { body: { name: unique('Campaign') } };
    const key = unique('idem');
    return [
      { label: 'create', options: { body: { name: unique('Campaign'), allows_commission: true, commission_amount: '2.50' } } },
      { label: 'with Idempotency-Key', options: idem, idempotencyKey: key },
      { label: 'replay of that key (1 PutItem)', options: idem, idempotencyKey: key, exactCalls: 1 },
    ];
  },
  UpdateCampaign: async () => {
    const c = await createCampaign();
    return [
      { label: 'rename', params: { id: c.id }, options: { body: { name: unique('Renamed') } } },
      { label: 'change terms', params: { id: c.id }, options: { body: { credit_amount: '7.50' } } },
    ];
  },
  DeleteCampaign: async () => [{ label: 'delete', params: { id: (await createCampaign()).id } }],

  CreateMember: async () => {
    const campaign = await createCampaign();
    const subscription = await newSubscription();
    const name = unique('member');
    return [
      {
        label: 'with campaign + subscription',
        options: {
          body: { identifier: name, email: `${name}@example.com`, campaign: { id: campaign.id }, subscription: { id: subscription.id } },
        },
      },
    ];
  },
  UpdateMember: async () => {
    const m = await fullMember();
    const other = await createCampaign();
    const subscription = await newSubscription();
    return [
      { label: 'change name', params: { id: m.id }, options: { body: { first_name: 'Ada' } } },
      {
        label: 'new email + campaign + subscription',
        params: { id: m.id },
        options: { body: { email: `${unique('moved')}@example.com`, campaign: { id: other.id }, subscription: { id: subscription.id } } },
      },
    ];
  },
  DeleteMember: async () => [{ label: 'member with campaign + subscription', params: { id: (await fullMember()).id } }],

  CreateReferral: async () => {
    const m = await fullMember();
    const user = unique('user');
    const body = { user_identifier: user, member_code: m.code };
    // The same pair twice: a create, then an idempotent replay.
    // A double-sided campaign: the create queues the coupon job (one SQS send); so does a replay while
    // the coupon is missing (no worker runs here to create it).
    const double = await expectStatus(
      call('POST', '/v1/campaigns/', {
        body: {
          name: unique('Campaign'),
          allows_credit: true,
          credit_amount: '5.00',
          referred_discount_type: 'percentage',
          referred_discount_amount: '10',
        },
      }),
      201,
    );
    const name = unique('member');
    const dm = await expectStatus(
      call('POST', '/v1/members/', { body: { identifier: name, email: `${name}@example.com`, campaign: { id: double.id } } }),
      201,
    );
    const doubleBody = { user_identifier: unique('user'), member_code: dm.code };
    return [
      { label: 'create', options: { body }, exact: { sends: { rewards: 0, 'webhook-events': 1 } } },
      { label: 'replay of the same pair', options: { body }, exact: { sends: { rewards: 0, 'webhook-events': 0 } } },
      { label: 'create, double-sided campaign', options: { body: doubleBody }, exact: { sends: { rewards: 1, 'webhook-events': 1 } } },
      {
        label: 'replay, double-sided, coupon still missing',
        options: { body: doubleBody },
        exact: { sends: { rewards: 1, 'webhook-events': 0 } },
      },
      {
        label: 'with Idempotency-Key',
        options: { body: { user_identifier: unique('user'), member_code: m.code } },
        idempotencyKey: unique('idem'),
        exact: { sends: { 'webhook-events': 1 } },
      },
    ];
  },
  DeleteReferral: async () => {
    const m = await fullMember();
    return [
      { label: 'delete', params: { id: (await referral(m.code)).id } },
      { label: 'with Idempotency-Key', params: { id: (await referral(m.code)).id }, idempotencyKey: unique('idem') },
    ];
  },

  ConvertReferral: async () => conversions(),
  ConvertReferralV1: async () => conversions(),

  BrowserScript: async () => [{ label: 'script', anonymous: true }],
  RecordClickPreflight: async () => [{ label: 'preflight', anonymous: true }],
  CreateJsReferralPreflight: async () => [{ label: 'preflight', anonymous: true }],
  RecordClick: async () => {
    const m = await fullMember();
    const body = { code: m.code, visitor_id: unique('visitor') };
    // Warm the publishable key's cache entry (1 GetItem when cold, like a secret key).
    await expectStatus(api('POST', '/js/v1/clicks/', { key: publishableKey, body: { code: 'NOBODY' } }), 200);
    return [
      { label: 'counted click', anonymous: true, options: { body, headers: { authorization: `Bearer ${publishableKey}` } } },
      {
        label: 'same visitor again (not counted)',
        anonymous: true,
        options: { body, headers: { authorization: `Bearer ${publishableKey}` } },
      },
    ];
  },
  CreateJsReferral: async () => {
    const m = await fullMember();
    const body = { user_identifier: unique('user'), member_code: m.code };
    // Warm the publishable key's cache entry (1 GetItem when cold, like a secret key).
    await expectStatus(api('POST', '/js/v1/clicks/', { key: publishableKey, body: { code: m.code } }), 200);
    return [
      { label: 'create', anonymous: true, options: { body, headers: { authorization: `Bearer ${publishableKey}` } } },
      { label: 'replay of the same pair', anonymous: true, options: { body, headers: { authorization: `Bearer ${publishableKey}` } } },
    ];
  },
  ListWebhookEndpoints: async () => {
    await webhookEndpoint();
    return [{ label: 'first page' }];
  },
  CreateWebhookEndpoint: async () => [
    { label: 'create', options: { body: { url: 'http://127.0.0.1:9/hooks', events: ['referral.created'] } } },
  ],
  GetWebhookEndpoint: async () => [{ label: 'endpoint', params: { id: (await webhookEndpoint()).id } }],
  UpdateWebhookEndpoint: async () => [
    { label: 'events', params: { id: (await webhookEndpoint()).id }, options: { body: { events: ['member.created'] } } },
  ],
  DeleteWebhookEndpoint: async () => [{ label: 'delete', params: { id: (await webhookEndpoint()).id } }],
  ListWebhookDeliveries: async () => [{ label: 'first page', params: { id: (await webhookEndpoint()).id } }],
  GetOpenApi: async () => [{ label: 'document', anonymous: true }],
  ApiDocs: async () => [{ label: 'rendered', anonymous: true }],
  ApiRoot: async () => [{ label: 'redirect', anonymous: true }],
  Health: async () => [{ label: 'alive', anonymous: true }],

  // One intake for every provider: each provider's signed request, its key cached (the container's cache
  // emptied once, first, so no entry expires between the warm-up and the measured request).
  ProviderWebhook: async () => {
    clearProviderCache();
    return [...(await classicScenario()), ...(await billingScenario()), ...(await stripeScenario()), ...(await chargebeeScenario())];
  },

  ReportTimeseries: async () => {
    const a = await moneyFixture({ approve: true });
    const now = Math.floor(Date.now() / 1000);
    return [
      { label: '90 days by day', query: `metric=conversions&from=${now - 90 * 86_400}&to=${now}` },
      { label: '400 days by month, money', query: `metric=commission_earned&interval=month&from=${now - 400 * 86_400}&to=${now}` },
      { label: 'one member by week', query: `metric=referrals&interval=week&member=${a.memberId}` },
      { label: "one member's sub-id", query: `metric=link_clicks&member=${a.memberId}&sub=video` },
    ];
  },
  ExportCsv: async () => {
    await moneyFixture({ approve: true });
    return [
      { label: 'rewards.csv', params: { file: 'rewards.csv' } },
      { label: 'payouts.csv?status=due', params: { file: 'payouts.csv' }, query: 'status=due' },
      { label: 'members.csv', params: { file: 'members.csv' }, query: 'page_size=100' },
    ];
  },
  ReportOverview: async () => [{ label: 'last 30 days vs the 30 before' }],
  ReportMembers: async () => {
    const now = Math.floor(Date.now() / 1000);
    return [
      { label: 'by commission, 30 days (2 months)', query: 'sort=commission' },
      { label: 'by conversions, 90 days (4 months)', query: `sort=conversions&from=${now - 90 * 86_400}&to=${now}` },
    ];
  },
  ListRewards: async () => {
    const a = await moneyFixture({ approve: true });
    return [
      { label: 'first page' },
      { label: 'page_size=100', query: 'page_size=100' },
      { label: '?status=approved', query: 'status=approved' },
      { label: '?member=', query: `member=${a.memberId}` },
      { label: '?member=&status= (filtered)', query: `member=${a.memberId}&status=approved` },
      { label: '?campaign= (filtered)', query: `campaign=${a.campaignId}` },
      { label: '?type=commission (filtered)', query: 'type=commission' },
      { label: '?member=&type= (combined, filtered)', query: `member=${a.memberId}&type=commission` },
      { label: '?campaign=&type=&status= (combined, filtered)', query: `campaign=${a.campaignId}&type=commission&status=approved` },
      { label: '?member=&type=&status= (combined, filtered)', query: `member=${a.memberId}&type=commission&status=approved` },
    ];
  },
  GetReward: async () => [{ label: 'reward', params: { id: (await moneyFixture({ approve: true })).rewardId } }],
  ApproveReward: async () => {
    const a = await moneyFixture({});
    const b = await moneyFixture({ memberId: a.memberId });
    return [
      // reward.approved, and payout.due (the member has a payout email and the minimum is 0).
      { label: 'first approval (new payout, due)', params: { id: a.rewardId }, exact: { sends: { 'webhook-events': 2 } } },
      { label: 'joins that payout (now due)', params: { id: b.rewardId } },
      { label: 'approved already (answered as is)', params: { id: b.rewardId }, exact: { sends: {} } },
    ];
  },
  VoidReward: async () => [
    {
      label: 'approved, leaves its payout',
      params: { id: (await moneyFixture({ approve: true })).rewardId },
      options: { body: { reason: 'fraud' } },
    },
    { label: 'pending', params: { id: (await moneyFixture({})).rewardId }, options: { body: {} } },
  ],
  ListPayouts: async () => {
    const a = await moneyFixture({ approve: true });
    return [
      { label: 'first page' },
      { label: '?status=due', query: 'status=due' },
      { label: '?member=', query: `member=${a.memberId}` },
      { label: '?currency=USD (filtered)', query: 'currency=USD' },
      { label: '?batch_id=', query: `batch_id=${(await moneyFixture({ approve: true, batch: true })).batchId}`, budget: PAYOUTS_OF_BATCH },
    ];
  },
  PayoutSummary: async () => {
    await moneyFixture({ approve: true });
    return [{ label: 'totals per status and currency' }];
  },
  GetPayout: async () => [{ label: 'payout with its reward ids', params: { id: (await moneyFixture({ approve: true })).payoutId! } }],
  MarkPayoutPaid: async () => [
    {
      label: 'due payout, 1 reward',
      params: { id: (await moneyFixture({ approve: true })).payoutId! },
      options: { body: { reference: 'rt' } },
    },
    {
      label: 'processing payout, 1 reward',
      params: { id: (await moneyFixture({ approve: true, batch: true })).payoutId! },
      options: { body: {} },
    },
  ],
  MarkPayoutFailed: async () => [
    {
      label: 'processing payout, 1 reward',
      params: { id: (await moneyFixture({ approve: true, batch: true })).payoutId! },
      options: { body: { reason: 'bounced' } },
    },
  ],
  CancelPayout: async () => [
    {
      label: 'processing payout, 1 reward',
      params: { id: (await moneyFixture({ approve: true, batch: true })).payoutId! },
      options: { body: { reason: 'not sent' } },
    },
  ],
  CreatePayoutBatch: async () => {
    const a = await moneyFixture({ approve: true });
    // A PayPal batch: the account connected, the member paid by PayPal (its payout due once approved).
    await saveRailConnection(accountId, 'paypal', paypalConnection(await paypalEmulator()));
    const b = await moneyFixture({});
    await expectStatus(call('PATCH', `/v1/members/${b.memberId}/`, { body: { payout_method: 'paypal' } }), 200);
    const railPayout = (await approveReward(accountId, b.rewardId)).payout_id!;
    return [
      { label: 'payout_ids: 1 due payout', options: { body: { format: 'wise', currency: 'USD', payout_ids: [a.payoutId] } } },
      {
        label: 'rail paypal, payout_ids: 1 due payout',
        options: { body: { rail: 'paypal', currency: 'USD', payout_ids: [railPayout] } },
        budget: RAIL_BATCH,
        exact: { sends: { 'payout-rails': 1 } },
      },
    ];
  },
  ListPayoutBatches: async () => {
    await moneyFixture({ approve: true, batch: true });
    return [{ label: 'first page' }, { label: '?status=processing (filtered)', query: 'status=processing' }];
  },
  GetPayoutBatch: async () => [{ label: 'batch', params: { id: (await moneyFixture({ approve: true, batch: true })).batchId! } }],
  PayoutBatchFile: async () => [
    { label: 'file of 1 payout', params: { id: (await moneyFixture({ approve: true, batch: true })).batchId! } },
  ],
  MarkPayoutBatchPaid: async () => [
    { label: 'batch of 1 payout', params: { id: (await moneyFixture({ approve: true, batch: true })).batchId! }, options: { body: {} } },
  ],
  ResendPayout: async () => [
    { label: 'unclaimed PayPal payout', params: { id: (await putUnclaimedPaypalPayout(accountId)).id }, exact: { sends: RAIL_SEND } },
  ],
  ReconcilePayoutBatch: async () => [
    { label: 'processing PayPal batch', params: { id: await putProcessingRailBatch(accountId) }, exact: { sends: RAIL_SEND } },
  ],
  PaypalRailWebhook: async () => {
    const e = await paypalEmulator();
    return railIntakeScenario('paypal', paypalConnection(e), () => paypalDelivery(e));
  },
  StripeConnectRailWebhook: async () => {
    const e = await stripeEmulator();
    return railIntakeScenario('stripe', stripeConnection(e), () => stripeDelivery(e));
  },
  WiseRailWebhook: async () => {
    const e = await wiseEmulator();
    return railIntakeScenario('wise', wiseConnection(e), () => wiseDelivery(e));
  },
  // ---- the member portal ----
  CreatePortalSession: async () => {
    const m = await fullMember();
    return [
      { label: 'link', params: { id: m.id }, options: { body: { return_url: 'https://app.example.com/' } } },
      { label: 'with Idempotency-Key', params: { id: m.id }, options: { body: {} }, idempotencyKey: unique('idem') },
    ];
  },
  RevokePortalSessions: async () => {
    const a = await moneyFixture({ approve: true });
    await portalBearer(a.memberId);
    await expectStatus(call('POST', `/v1/members/${a.memberId}/portal-sessions/`, { body: {} }), 201);
    return [{ label: 'one session and one unopened link', params: { id: a.memberId } }];
  },
  EmbedScript: async () => [{ label: 'script', anonymous: true }],
  PortalPage: async () => [{ label: 'page', params: { account_id: accountId }, anonymous: true }],
  UnsubscribePage: async () => {
    const m = await fullMember();
    return [
      {
        label: 'link token',
        anonymous: true,
        params: { token: await issueUnsubscribeToken({ accountId, memberId: m.id, programme: 'Acme' }) },
      },
    ];
  },
  Unsubscribe: async () => {
    const m = await fullMember();
    const token = await issueUnsubscribeToken({ accountId, memberId: m.id, programme: 'Acme' });
    return [
      {
        label: 'one click',
        anonymous: true,
        params: { token },
        options: { rawBody: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      },
      {
        label: 'again (already opted out)',
        anonymous: true,
        params: { token },
        options: { rawBody: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      },
    ];
  },
  OpenPortalSession: async () => {
    const m = await fullMember();
    const link = await expectStatus(call('POST', `/v1/members/${m.id}/portal-sessions/`, { body: {} }), 201);
    return [
      {
        label: 'link token',
        anonymous: true,
        options: { body: { token: new URL(link.url).hash.slice('#token='.length) }, sourceIp: LOGIN_IP },
      },
    ];
  },
  PortalMe: async () => {
    const full = await fullMember();
    const money = await moneyFixture({ approve: true });
    return [
      { label: 'member with campaign + subscription', anonymous: true, options: { headers: await portalBearer(full.id) } },
      { label: 'member with payouts', anonymous: true, options: { headers: await portalBearer(money.memberId) } },
    ];
  },
  UpdatePortalMe: async () => {
    const a = await moneyFixture({ approve: true });
    const headers = await portalBearer(a.memberId);
    return [
      { label: 'email opt-out', anonymous: true, options: { headers, body: { email_opt_out: true } } },
      { label: 'payout email (payouts refreshed)', anonymous: true, options: { headers, body: { payout_email: 'new@pay.example.com' } } },
    ];
  },
  PortalStats: async () => {
    const a = await moneyFixture({ approve: true });
    const headers = await portalBearer(a.memberId);
    return [
      { label: '12 months', anonymous: true, options: { headers } },
      { label: '30 days', anonymous: true, query: 'interval=day', options: { headers } },
    ];
  },
  ListMemberLinks: async () => {
    const m = await fullMember();
    await expectStatus(call('POST', `/v1/members/${m.id}/links/`, { body: { slug: 'listed' } }), 201);
    return [{ label: 'first page', params: { id: m.id } }];
  },
  CreateMemberLink: async () => [
    { label: 'with a path', params: { id: (await fullMember()).id }, options: { body: { slug: 'video', destination_path: '/pricing' } } },
  ],
  DeleteMemberLink: async () => {
    const m = await fullMember();
    await expectStatus(call('POST', `/v1/members/${m.id}/links/`, { body: { slug: 'gone' } }), 201);
    return [{ label: 'delete', params: { id: m.id, slug: 'gone' } }];
  },
  PortalLinks: async () => {
    const a = await moneyFixture({ approve: true });
    await expectStatus(call('POST', `/v1/members/${a.memberId}/links/`, { body: { slug: 'listed' } }), 201);
    return [{ label: 'first page', anonymous: true, options: { headers: await portalBearer(a.memberId) } }];
  },
  CreatePortalLink: async () => {
    const headers = await portalBearer((await moneyFixture({ approve: true })).memberId);
    return [{ label: 'create', anonymous: true, options: { headers, body: { slug: 'mine' } } }];
  },
  DeletePortalLink: async () => {
    const a = await moneyFixture({ approve: true });
    await expectStatus(call('POST', `/v1/members/${a.memberId}/links/`, { body: { slug: 'gone' } }), 201);
    return [{ label: 'delete', anonymous: true, params: { slug: 'gone' }, options: { headers: await portalBearer(a.memberId) } }];
  },
  PortalReferrals: async () => [
    { label: 'first page', anonymous: true, options: { headers: await portalBearer((await moneyFixture({ approve: true })).memberId) } },
  ],
  PortalRewards: async () => [
    { label: 'first page', anonymous: true, options: { headers: await portalBearer((await moneyFixture({ approve: true })).memberId) } },
  ],
  PortalPayouts: async () => [
    { label: 'first page', anonymous: true, options: { headers: await portalBearer((await moneyFixture({ approve: true })).memberId) } },
  ],
  PortalLoginPage: async () => {
    const slug = String((await getItem(keys.account(accountId)))?.slug ?? '');
    return [{ label: 'by slug', params: { account_id: slug }, anonymous: true }];
  },
  CreatePortalLoginLink: async () => {
    const email = `${unique('aff')}@example.com`;
    await expectStatus(call('POST', '/v1/members/', { body: { identifier: unique('aff'), email } }), 201);
    const slug = String((await getItem(keys.account(accountId)))?.slug ?? '');
    return [{ label: 'a member', anonymous: true, options: { body: { account: slug, email }, sourceIp: '10.7.7.7' } }];
  },
  OpenPortalLoginSession: async () => {
    const m = await fullMember();
    const url = await affiliateLoginUrl(accountId, m.id);
    return [
      {
        label: 'login link',
        anonymous: true,
        options: { body: { token: new URL(url!).hash.slice('#token='.length) }, sourceIp: LOGIN_IP },
      },
    ];
  },
  EndPortalSession: async () => {
    const m = await fullMember();
    const url = await affiliateLoginUrl(accountId, m.id);
    const opened = await api('POST', '/portal/v1/login-sessions/', {
      body: { token: new URL(url!).hash.slice('#token='.length) },
      sourceIp: '10.9.8.6',
    });
    if (opened.status !== 201) throw new Error(`fixture login answered ${opened.status}: ${opened.text}`);
    const cookie = (opened.cookies[0] ?? '').split(';')[0] as string;
    return [{ label: 'logout', anonymous: true, options: { headers: { cookie, origin: 'https://api.test' } } }];
  },
  GetPortalTaxDetails: async () => [
    { label: 'none given', anonymous: true, options: { headers: await portalBearer((await moneyFixture({ approve: true })).memberId) } },
  ],
  PutPortalTaxDetails: async () => {
    const a = await moneyFixture({ approve: true });
    const headers = await portalBearer(a.memberId);
    const body = { legal_name: 'Ada Lovelace', country: 'US', address: '1 Main Street', us: { tin: '123456789', w9_certified: true } };
    return [{ label: 'US details (payouts refreshed)', anonymous: true, options: { headers, body } }];
  },
  ExportTaxDetails: async () => [{ label: 'owner', session: true }],
  // ---- the dashboard ----
  CreateLoginLink: async () => {
    const member = await teamMember('viewer');
    return [
      {
        label: 'team address',
        anonymous: true,
        options: { body: { email: member.email }, sourceIp: LOGIN_IP },
        exact: { sends: { 'member-emails': 1 } },
      },
      {
        label: 'unknown address (same cost)',
        anonymous: true,
        options: { body: { email: freshEmail('nobody') }, sourceIp: LOGIN_IP },
        exact: { sends: { 'member-emails': 1 } },
      },
    ];
  },
  CreateSession: async () => {
    const member = await teamMember('finance');
    const { token } = await issueLoginToken(accountId, member.id);
    return [{ label: 'login token', anonymous: true, options: { body: { token }, sourceIp: LOGIN_IP } }];
  },
  GetCurrentSession: async () => {
    const due = await loginAs(accountId, 'viewer');
    await slideDue(due);
    return [
      { label: 'session', session: true },
      { label: 'session due a slide', session: due, slide: true },
      { label: 'the same, just slid', session: due },
    ];
  },
  EndCurrentSession: async () => [{ label: 'logout', session: await loginAs(accountId, 'viewer') }],
  ListTeam: async () => {
    await teamMember('viewer');
    return [{ label: 'team', session: true }];
  },
  InviteTeamMember: async () => [
    {
      label: 'invite',
      session: true,
      options: { body: { email: freshEmail('invite'), role: 'finance' } },
      exact: { sends: { 'member-emails': 1 } },
    },
    {
      label: 'with Idempotency-Key',
      session: true,
      options: { body: { email: freshEmail('invite'), role: 'owner' } },
      idempotencyKey: unique('idem'),
    },
  ],
  UpdateTeamMember: async () => {
    const withSession = await loginAs(accountId, 'viewer');
    const without = await teamMember('viewer');
    return [
      { label: 'member with an open session', session: true, params: { id: withSession.member.id }, options: { body: { role: 'admin' } } },
      { label: 'member without a session, to owner', session: true, params: { id: without.id }, options: { body: { role: 'owner' } } },
      { label: 'same role (no change)', session: true, params: { id: without.id }, options: { body: { role: 'owner' } } },
    ];
  },
  RemoveTeamMember: async () => {
    const withSession = await loginAs(accountId, 'admin');
    return [
      { label: 'member with an open session', session: true, params: { id: withSession.member.id } },
      { label: 'member without a session', session: true, params: { id: (await teamMember('viewer')).id } },
    ];
  },
  ListApiKeys: async () => [{ label: 'keys', session: true }],
  CreateApiKey: async () => {
    const idem = unique('idem');
    return [
      { label: 'create', session: true, options: { body: { name: 'Backend' } } },
      { label: 'with Idempotency-Key', session: true, options: { body: { name: 'CI' } }, idempotencyKey: idem },
      {
        label: 'replay of that key (1 PutItem + the session)',
        session: true,
        options: { body: { name: 'CI' } },
        idempotencyKey: idem,
        exactCalls: 2,
      },
    ];
  },
  RevokeApiKey: async () => {
    const created = await expectStatus(api('POST', '/v1/api-keys/', { headers: owner.headers, body: { name: unique('revoked') } }), 201);
    return [
      { label: 'revoke', session: true, params: { id: created.id } },
      { label: 'revoked already', session: true, params: { id: created.id } },
    ];
  },
  GetAccount: async () => [{ label: 'settings (API key)' }, { label: 'settings (session)', session: true }],
  ListEmailTemplates: async () => [{ label: 'every template (API key)' }, { label: 'every template (session)', session: true }],
  UpdateAccount: async () => [
    { label: 'embed origins (API key)', options: { body: { embed_origins: ['https://app.acme.example'] } } },
    {
      label: 'email sender (session)',
      session: true,
      options: { body: { email_sender: { address: 'rewards@acme.example', name: 'Acme' } } },
    },
    { label: 'js referrals (publishable key item too)', options: { body: { js_referrals: 'confirm' } } },
    { label: 'back to open, sender cleared', options: { body: { js_referrals: 'open', email_sender: null } } },
  ],
  SetProviderConnection: async () => {
    // A fresh account (this file's own one is Paddle Classic with mirrored subscriptions: a switch is refused).
    const { accountId: fresh } = await newAccount();
    connected.push(fresh);
    const admin = await loginAs(fresh, 'admin');
    const stripe = {
      kind: 'stripe',
      secret_key: 'rk_test_roundtripsConnect01',
      webhook_secret: 'whsec_roundtripsConnect01',
      api_url: 'http://127.0.0.1:9',
    };
    return [
      { label: 'connect Stripe', session: admin, options: { body: stripe } },
      { label: 'new Stripe secrets', session: admin, options: { body: { ...stripe, secret_key: 'rk_test_roundtripsConnect02' } } },
    ];
  },

  ListPayoutRails: async () => [{ label: 'connected rails', session: true }],
  SetPayoutRail: async () => {
    // Checked at the rail before it is stored: a PayPal emulator of its own, on loopback (allowed here).
    paypalRail ??= await startPaypalEmulator({ port: 0 });
    process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
    const body = {
      api_url: paypalRail.url,
      client_id: paypalRail.clientId,
      client_secret: paypalRail.clientSecret,
      webhook_id: paypalRail.webhookId,
    };
    return [{ label: 'connect PayPal', session: true, params: { kind: 'paypal' }, options: { body } }];
  },
  DeletePayoutRail: async () => [{ label: 'disconnect PayPal', session: true, params: { kind: 'paypal' } }],
  PortalStripeAccountLink: async () => {
    // The account connects Stripe (stored as PUT /v1/account/payout-rails/stripe/ stores it) at an emulator of its own.
    stripeRail ??= await startStripeEmulator({ connect: { webhookUrl: null } });
    await saveRailConnection(accountId, 'stripe', {
      apiUrl: stripeRail.url,
      credentials: {
        secret_key: stripeRail.secretKey,
        webhook_secret: stripeRail.connect.webhookSecret,
        connect_webhook_secret: stripeRail.connect.connectWebhookSecret,
      },
    });
    const m = await fullMember();
    const headers = await portalBearer(m.id);
    return [
      { label: 'first: the Express account made and stored', anonymous: true, options: { headers } },
      { label: 'again: the stored account, a new link', anonymous: true, options: { headers } },
    ];
  },

  // ---- applications ----
  JoinPage: async () => {
    const p = await programme('manual');
    return [{ label: 'open campaign', anonymous: true, params: { account_slug: p.accountSlug, campaign_slug: p.slug } }];
  },
  SubmitApplication: async () => {
    const p = await programme('manual');
    const params = { account_slug: p.accountSlug, campaign_slug: p.slug };
    const name = unique('known');
    await expectStatus(call('POST', '/v1/members/', { body: { identifier: name, email: `${name}@example.com` } }), 201);
    const apply = (email: string) => ({
      body: { email, name: 'Casey Jones', country: 'GB', answers: {}, accepted_terms: true },
      sourceIp: `2001:db8:77::${(++serial).toString(16)}`,
    });
    return [
      {
        label: 'new address',
        anonymous: true,
        params,
        options: apply(`${unique('new')}@example.com`),
        exact: { sends: { 'member-emails': 1 } },
      },
      { label: 'a member (no join request)', anonymous: true, params, options: apply(`${name}@example.com`) },
    ];
  },
  ConfirmApplicationPage: async () => {
    const p = await programme('manual');
    const fresh = await confirmationToken(p.campaignId);
    const used = await confirmationToken(p.campaignId);
    await expectStatus(api('POST', `/join/confirm/${used}/`), 200);
    return [
      { label: 'unused link', anonymous: true, params: { token: fresh } },
      { label: 'used link (reads the application)', anonymous: true, params: { token: used } },
    ];
  },
  ConfirmApplication: async () => {
    const manual = await programme('manual');
    const auto = await programme('auto');
    const pending = await confirmationToken(manual.campaignId);
    return [
      { label: 'pending', anonymous: true, params: { token: pending }, exact: { sends: { 'webhook-events': 1, 'member-emails': 0 } } },
      { label: 'replay', anonymous: true, params: { token: pending }, exact: { sends: { 'webhook-events': 0, 'member-emails': 0 } } },
      {
        label: 'approved at once (member created)',
        anonymous: true,
        params: { token: await confirmationToken(auto.campaignId) },
        exact: { sends: { 'webhook-events': 3, 'member-emails': 1 } },
      },
    ];
  },
  ListApplications: async () => {
    const p = await programme('manual');
    await pendingApplication(p.campaignId);
    return [
      { label: 'first page' },
      { label: '?status=pending', query: 'status=pending' },
      { label: '?campaign=&status=', query: `campaign=${p.campaignId}&status=pending` },
    ];
  },
  GetApplication: async () => {
    const p = await programme('manual');
    return [{ label: 'application', params: { id: await pendingApplication(p.campaignId) } }];
  },
  ApproveApplication: async () => {
    const p = await programme('manual');
    const id = await pendingApplication(p.campaignId);
    return [
      { label: 'approve (member created)', params: { id } },
      { label: 'again (as it is, its email queued again)', params: { id }, exact: { sends: { 'webhook-events': 0 } } },
    ];
  },
  RejectApplication: async () => {
    const p = await programme('manual');
    const id = await pendingApplication(p.campaignId);
    return [{ label: 'reject', params: { id }, options: { body: { reason: 'not a fit' } } }];
  },

  GetFraudRules: async () => [{ label: 'every rule over the defaults' }],
  UpdateFraudRules: async () => [
    { label: 'one rule', options: { body: { disposable_email: { action: 'flag' } } } },
    {
      label: 'two rules with thresholds',
      options: { body: { duplicate_ip: { action: 'flag', max_referrals: 5 }, refund_rate: { max_percent: 60, window_days: 30 } } },
    },
  ],
  // In an account of its own (two members, a referral each), so the member rule's reads are known.
  PreviewFraudRule: async () => {
    const other = await newAccount();
    for (const n of [1, 2]) {
      const name = unique(`previewed-${n}`);
      const m = await expectStatus(
        api('POST', '/v1/members/', { key: other.apiKey, body: { identifier: name, email: `${name}@example.com` } }),
        201,
      );
      await expectStatus(
        api('POST', '/v1/referrals/', { key: other.apiKey, body: { user_identifier: unique('user'), member_code: m.code } }),
        200,
      );
    }
    // Warm its key's cache entry.
    await expectStatus(api('GET', '/v1/fraud-rules/', { key: other.apiKey }), 200);
    const as = (body: unknown) => ({ headers: { authorization: `Bearer ${other.apiKey}` }, body });
    return [
      {
        label: 'referral rule (duplicate_ip)',
        anonymous: true,
        options: as({ rule: 'duplicate_ip', action: 'hold', thresholds: { max_referrals: 1 } }),
      },
      { label: 'disposable_email', anonymous: true, options: as({ rule: 'disposable_email' }) },
      {
        label: 'member rule (refund_rate), 2 members',
        anonymous: true,
        options: as({ rule: 'refund_rate', action: 'hold' }),
        budget: PREVIEW_MEMBERS,
      },
    ];
  },
  ListFraudFlags: async () => {
    const f = await heldFlag();
    return [
      { label: 'first page' },
      { label: '?status=open', query: 'status=open' },
      { label: '?rule=', query: 'rule=duplicate_ip' },
      { label: '?member=', query: `member=${f.memberId}` },
      { label: '?rule=&status=&member=', query: `rule=duplicate_ip&status=open&member=${f.memberId}` },
    ];
  },
  GetFraudFlag: async () => [{ label: 'flag', params: { id: (await heldFlag()).flagId } }],
  ReleaseFraudFlag: async () => {
    const pending = await heldFlag({ holdDays: 30 });
    const due = await heldFlag();
    return [
      { label: 'holding a pending commission', params: { id: pending.flagId }, options: { body: { note: 'checked' } } },
      { label: 'holding one past its hold (approved at once)', params: { id: due.flagId }, options: { body: {} } },
      { label: 'released already (as it is)', params: { id: due.flagId }, options: { body: {} }, exact: { sends: {} } },
    ];
  },
  VoidFraudFlag: async () => [
    { label: 'holding a commission', params: { id: (await heldFlag()).flagId }, options: { body: { note: 'fraud' } } },
  ],
  ReviewFraudFlag: async () => [
    { label: 'holding nothing (action flag)', params: { id: (await heldFlag({ action: 'flag' })).flagId }, options: { body: {} } },
  ],
  ReleaseReward: async () => [
    { label: 'back to pending', params: { id: (await heldFlag({ holdDays: 30 })).rewardId } },
    { label: 'past its hold: approved at once', params: { id: (await heldFlag()).rewardId } },
  ],
};

/** Every rule's action as `action` (the settings a finding is recorded with). */
const fraudSettings = (action: FraudAction): FraudSettings =>
  Object.fromEntries(FRAUD_RULES.map((rule) => [rule, { ...DEFAULT_FRAUD_SETTINGS[rule], action }])) as unknown as FraudSettings;

/**
 * A duplicate_ip flag on a referral with a pending commission of 4.00 (recorded by the real flow, as the
 * FraudScreen worker records a finding): held by it unless `action` is `flag`.
 */
async function heldFlag(
  o: { holdDays?: number; action?: FraudAction } = {},
): Promise<{ flagId: string; rewardId: string; memberId: string; referralId: string }> {
  const m = await moneyFixture({ holdDays: o.holdDays });
  const finding: FraudFinding = {
    rule: 'duplicate_ip',
    subject: { type: 'referral', id: m.referralId },
    member_id: m.memberId,
    detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
    evidence: { referral_ids: [m.referralId], figures: { referrals: 4 } },
    dedupe_key: `duplicate_ip#referral#${m.referralId}`,
  };
  const flag = await recordFinding(accountId, finding, fraudSettings(o.action ?? 'hold'));
  if (!flag) throw new Error('fixture flag not recorded');
  if ((o.action ?? 'hold') === 'hold' && flag.held_count !== 1) throw new Error(`fixture flag holds ${flag.held_count} rewards`);
  return { flagId: flag.id, rewardId: m.rewardId, memberId: m.memberId, referralId: m.referralId };
}

/** A campaign open to applications and the account's slug. */
async function programme(approval: 'auto' | 'manual'): Promise<{ accountSlug: string; slug: string; campaignId: string }> {
  const account = await expectStatus(call('GET', '/v1/account/'), 200);
  const c = await expectStatus(
    call('POST', '/v1/campaigns/', { body: { name: unique('Programme'), signup: { enabled: true, approval, questions: [] } } }),
    201,
  );
  return { accountSlug: account.slug, slug: c.slug, campaignId: c.id };
}

/** A confirmation link's token for a fresh join request (as the email worker issues it). */
async function confirmationToken(campaignId: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const id = newApplicationId();
  await putJoinRequest({
    id,
    accountId,
    campaignId,
    email: `${unique('applicant')}@example.com`,
    name: 'Casey Jones',
    country: 'GB',
    payoutEmail: null,
    answers: {},
    ipHash: '',
    createdAt: now,
    expiresAt: joinRequestExpiry(now),
  });
  const url = await issueJoinConfirmation(accountId, id);
  if (!url) throw new Error('fixture join request missing');
  return new URL(url).pathname.split('/')[3] as string;
}

/** A confirmed (pending) application's id. */
async function pendingApplication(campaignId: string): Promise<string> {
  const token = await confirmationToken(campaignId);
  await expectStatus(api('POST', `/join/confirm/${token}/`), 200);
  const link = await getItem(applicationKeys.joinConfirm(tokenHash(token)));
  return String(link?.application_id);
}

async function classicScenario(): Promise<Variant[]> {
  const out = await paddle.checkout({ plan_id: 9001, email: `${unique('hook')}@example.com`, deliver: false });
  const [first, second] = out.alerts;
  if (!first || !second) throw new Error('the emulator produced fewer than two alerts for a checkout');
  const form = (fields: Record<string, string>): Omit<ApiOptions, 'key'> => ({
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  // The first alert warms the container's settings cache (1 GetItem); measured: the next one.
  const warm = await api('POST', `/webhooks/paddle/${accountId}/`, form(first.fields));
  if (warm.status !== 200) throw new Error(`warm-up alert answered ${warm.status}: ${warm.text}`);
  await drainQueues();
  return [
    {
      label: 'Paddle Classic: signed alert, settings cached',
      params: { provider: 'paddle', account_id: accountId },
      options: form(second.fields),
      anonymous: true,
    },
  ];
}

async function billingScenario(): Promise<Variant[]> {
  // The first notification warms the container's connection cache (1 BatchGet); measured: the next one.
  const warm = await api('POST', `/webhooks/paddle-billing/${billingAccountId}/`, billingNotification());
  if (warm.status !== 200) throw new Error(`warm-up notification answered ${warm.status}: ${warm.text}`);
  await drainQueues();
  return [
    {
      label: 'Paddle Billing: signed notification, cached',
      params: { provider: 'paddle-billing', account_id: billingAccountId },
      options: billingNotification(),
      anonymous: true,
    },
  ];
}

/** Each rail's emulator, started by the first scenario that needs it (its webhooks delivered nowhere). */
async function paypalEmulator(): Promise<PaypalEmulator> {
  paypalRail ??= await startPaypalEmulator({ port: 0 });
  return paypalRail;
}
async function stripeEmulator(): Promise<StripeEmulator> {
  stripeRail ??= await startStripeEmulator({ connect: { webhookUrl: null } });
  return stripeRail;
}
async function wiseEmulator(): Promise<WiseEmulator> {
  wiseRail ??= await startWiseEmulator({ webhookUrl: null });
  return wiseRail;
}

const RAIL_INTAKE_PATH: Record<'paypal' | 'stripe' | 'wise', string> = { paypal: 'paypal', stripe: 'stripe-connect', wise: 'wise' };

/** A rail's intake: the account connected, one signed delivery warming the connection cache; measured: the next. */
async function railIntakeScenario(kind: 'paypal' | 'stripe' | 'wise', connection: RailConnectionArg, delivery: () => RailDelivery) {
  await saveRailConnection(accountId, kind, connection);
  clearRailConnectionCache();
  const warm = await api('POST', `/webhooks/${RAIL_INTAKE_PATH[kind]}/${accountId}/`, delivery());
  if (warm.status !== 200) throw new Error(`warm-up delivery answered ${warm.status}: ${warm.text}`);
  await drainQueues();
  return [
    {
      label: `${kind}: signed delivery, connection cached`,
      params: { account_id: accountId },
      options: delivery(),
      anonymous: true,
      exact: { sends: RAIL_SEND },
    },
  ];
}
type RailConnectionArg = Parameters<typeof saveRailConnection>[2];

async function stripeScenario(): Promise<Variant[]> {
  const warm = await api('POST', `/webhooks/stripe/${stripeAccountId}/`, stripeEvent());
  if (warm.status !== 200) throw new Error(`warm-up event answered ${warm.status}: ${warm.text}`);
  await drainQueues();
  return [
    {
      label: 'Stripe: signed event, cached',
      params: { provider: 'stripe', account_id: stripeAccountId },
      options: stripeEvent(),
      anonymous: true,
    },
  ];
}

async function chargebeeScenario(): Promise<Variant[]> {
  const warm = await api('POST', `/webhooks/chargebee/${chargebeeAccountId}/`, chargebeeEvent());
  if (warm.status !== 200) throw new Error(`warm-up event answered ${warm.status}: ${warm.text}`);
  await drainQueues();
  return [
    {
      label: 'Chargebee: Basic-auth event, cached',
      params: { provider: 'chargebee', account_id: chargebeeAccountId },
      options: chargebeeEvent(),
      anonymous: true,
    },
  ];
}

/** By checkout_id (order lookup at the provider) and by subscription_id (no provider call). */
async function conversions(): Promise<Variant[]> {
  const m = await fullMember();
  const byCheckout = await referral(m.code);
  const bySubscription = await referral(m.code);
  const withKey = await referral(m.code);
  const a = await checkedOut();
  const b = await checkedOut();
  const c = await checkedOut();
  const sends = { rewards: 1, 'webhook-events': 1 };
  return [
    {
      label: 'checkout_id (order lookup)',
      params: { id: byCheckout.id },
      options: { body: { checkout_id: a.checkoutId } },
      exact: { provider: 1, sends },
    },
    {
      label: 'subscription_id',
      params: { id: bySubscription.id },
      options: { body: { subscription_id: b.subscriptionId } },
      exact: { provider: 0, sends },
    },
    {
      label: 'with Idempotency-Key',
      params: { id: withKey.id },
      options: { body: { subscription_id: c.subscriptionId } },
      idempotencyKey: unique('idem'),
      exact: { provider: 0, sends },
    },
  ];
}

/** `Authorization` of a fresh portal session of the member (a link made and opened through the API). */
async function portalBearer(memberId: string): Promise<Record<string, string>> {
  const link = await expectStatus(call('POST', `/v1/members/${memberId}/portal-sessions/`, { body: {} }), 201);
  const opened = await expectStatus(
    api('POST', '/portal/v1/sessions/', { body: { token: new URL(link.url).hash.slice('#token='.length) }, sourceIp: '10.9.8.7' }),
    201,
  );
  return { authorization: `Bearer ${opened.token}` };
}

/** A member of the account's team (through the store), without a session. */
const teamMember = (role: 'owner' | 'admin' | 'finance' | 'viewer') => addTeamMember(accountId, freshEmail(role), role);

/** Makes a session due a slide: last slid 301 s ago. */
async function slideDue(login: DashboardLogin): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: teamKeys.session(login.session.hash),
      UpdateExpression: 'SET slid_at = :s',
      ExpressionAttributeValues: { ':s': nowSeconds() - 301 },
    }),
  );
}

let endpoints = 0;
/** A webhook endpoint on a closed loopback port (local mode; no DNS). */
async function webhookEndpoint(): Promise<{ id: string }> {
  return expectStatus(call('POST', '/v1/webhook-endpoints/', { body: { url: `http://127.0.0.1:9/hooks/${++endpoints}` } }), 201);
}

// ---- measuring ------------------------------------------------------------------------------------

async function drainQueues(): Promise<Record<string, number>> {
  // Every queue at once: one after another, the drain took longer than most requests measured.
  const received = await Promise.all(QUEUE_NAMES.map((q) => queues.receiveAll(q)));
  const counts: Record<string, number> = {};
  QUEUE_NAMES.forEach((q, i) => {
    const n = (received[i] ?? []).length;
    if (n > 0) counts[q] = n;
  });
  return counts;
}

const providerCalls = () => Object.values(paddle.callCounts()).reduce((a, b) => a + b, 0);

function fillPath(route: Route, params: Record<string, string>): string {
  return route.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${route.name}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
}

async function measure(route: Route, v: Variant): Promise<Measured> {
  await drainQueues();
  const path = fillPath(route, v.params ?? {}) + (v.query ? `?${v.query}` : '');
  const providerBefore = providerCalls();
  const recording = recordDynamoCalls();
  let res: ApiResponse;
  try {
    const session = v.session === true ? owner : v.session;
    const headers = {
      ...(session?.headers ?? {}),
      ...(v.options?.headers ?? {}),
      ...(v.idempotencyKey ? { 'idempotency-key': v.idempotencyKey } : {}),
    };
    res = await api(route.method, path, { ...(v.anonymous || session ? {} : { key }), ...(v.options ?? {}), headers });
  } finally {
    recording.stop();
  }
  // Success is 2xx, or the root's 302 to the reference.
  if ((res.status < 200 || res.status > 299) && !(route.name === 'ApiRoot' && res.status === 302))
    throw new Error(`${route.name} (${v.label}): ${route.method} ${path} answered ${res.status}: ${res.text}`);
  return {
    route: route.name,
    variant: v.label,
    status: res.status,
    depth: recording.depth(),
    calls: [...recording.calls],
    provider: providerCalls() - providerBefore,
    sends: await drainQueues(),
  };
}

const ROUTES_BY_NAME = new Map(routes.map((r) => [r.name, r]));

function violations(m: Measured, base: Budget, v: Variant): string[] {
  const out: string[] = [];
  const extras = [
    v.idempotencyKey ? IDEMPOTENCY_EXTRA : null,
    v.session && (ROUTES_BY_NAME.get(m.route)?.auth ?? 'api-key') === 'api-key' ? SESSION_EXTRA : null,
    v.slide ? SLIDE_EXTRA : null,
  ].filter((e): e is { depth: number; calls: number } => e !== null);
  const b = extras.reduce<Budget>((acc, e) => ({ ...acc, depth: acc.depth + e.depth, calls: acc.calls + e.calls }), base);
  if (v.exactCalls !== undefined && m.calls.length !== v.exactCalls)
    out.push(`${m.route} (${m.variant}): ${m.calls.length} DynamoDB calls, expected ${v.exactCalls} [${describeCalls(m.calls)}]`);
  const where = `${m.route} (${m.variant})`;
  const detail = `[${describeCalls(m.calls)}]`;
  if (m.depth > b.depth) out.push(`${where}: ${m.depth} sequential DynamoDB round trips, budget ${b.depth} ${detail}`);
  if (m.calls.length > b.calls) out.push(`${where}: ${m.calls.length} DynamoDB calls, budget ${b.calls} ${detail}`);
  const unfinished = m.calls.filter((c) => c.endedAt === undefined);
  if (unfinished.length > 0) out.push(`${where}: ${unfinished.length} DynamoDB call(s) still running after the response ${detail}`);
  if (m.provider > b.provider) out.push(`${where}: ${m.provider} provider calls, budget ${b.provider}`);
  if (v.exact?.provider !== undefined && m.provider !== v.exact.provider)
    out.push(`${where}: ${m.provider} provider calls, expected ${v.exact.provider}`);
  for (const q of QUEUE_NAMES) {
    const sent = m.sends[q] ?? 0;
    const allowed = b.sends[q] ?? 0;
    if (sent > allowed) out.push(`${where}: ${sent} message(s) sent to ${q}, budget ${allowed}`);
    const exact = v.exact?.sends?.[q];
    if (exact !== undefined && sent !== exact) out.push(`${where}: ${sent} message(s) sent to ${q}, expected ${exact}`);
  }
  return out;
}

describe('DynamoDB round trips per endpoint, happy path, warm caches (docs/design/architecture.md "Round-trip budgets")', () => {
  it('every budget and scenario names a route of functions/routes.ts', () => {
    const names = new Set(routes.map((r) => r.name));
    expect(Object.keys(BUDGETS).filter((n) => !names.has(n))).toEqual([]);
    expect(Object.keys(SCENARIOS).filter((n) => !names.has(n))).toEqual([]);
  });

  it('a cold container adds exactly one GetItem: the API key lookup, and the webhook settings read', async () => {
    const recorded = async (method: string, path: string, options: ApiOptions) => {
      const recording = recordDynamoCalls();
      try {
        const res = await api(method, path, options);
        return { status: res.status, depth: recording.depth(), calls: recording.calls.map((c) => c.command) };
      } finally {
        recording.stop();
      }
    };
    const campaign = await createCampaign();
    const fresh = await createApiKey(accountId);
    // Cold: the key lookup, then the campaign. Warm: no lookup. (The key's rate limit is counted in memory
    // here: far below the limit a container writes its count once per 5% of it.)
    expect(await recorded('GET', `/v1/campaigns/${campaign.id}/`, { key: fresh })).toEqual({
      status: 200,
      depth: 2,
      calls: ['GetItem', 'GetItem'],
    });
    expect(await recorded('GET', `/v1/campaigns/${campaign.id}/`, { key: fresh })).toEqual({ status: 200, depth: 1, calls: ['GetItem'] });

    const out = await paddle.checkout({ plan_id: 9001, email: `${unique('cold')}@example.com`, deliver: false });
    const alert = (fields: Record<string, string> | undefined) =>
      recorded('POST', `/webhooks/paddle/${accountId}/`, {
        rawBody: new URLSearchParams(fields).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    clearProviderCache();
    expect(await alert(out.alerts[0]?.fields)).toEqual({ status: 200, depth: 1, calls: ['GetItem'] });
    expect(await alert(out.alerts[1]?.fields)).toEqual({ status: 200, depth: 0, calls: [] });
    expect(await drainQueues()).toEqual({ 'provider-events': 2 });
    // Paddle Billing: the kind and the webhook secret in one BatchGet, then nothing while cached.
    clearProviderCache();
    expect(await recorded('POST', `/webhooks/paddle-billing/${billingAccountId}/`, billingNotification())).toEqual({
      status: 200,
      depth: 1,
      calls: ['BatchGetItem'],
    });
    expect(await recorded('POST', `/webhooks/paddle-billing/${billingAccountId}/`, billingNotification())).toEqual({
      status: 200,
      depth: 0,
      calls: [],
    });
    expect(await drainQueues()).toEqual({ 'provider-events': 2 });
    // Chargebee: the same (its Basic-auth pair is the webhook secret item).
    clearProviderCache();
    expect(await recorded('POST', `/webhooks/chargebee/${chargebeeAccountId}/`, chargebeeEvent())).toEqual({
      status: 200,
      depth: 1,
      calls: ['BatchGetItem'],
    });
    expect(await recorded('POST', `/webhooks/chargebee/${chargebeeAccountId}/`, chargebeeEvent())).toEqual({
      status: 200,
      depth: 0,
      calls: [],
    });
    expect(await drainQueues()).toEqual({ 'provider-events': 2 });
  });

  it('the rail intakes: a cold connection is one BatchGet, then nothing while cached; one payout-rails message each', async () => {
    const recorded = async (path: string, d: RailDelivery) => {
      const recording = recordDynamoCalls();
      try {
        const res = await api('POST', path, d);
        return { status: res.status, depth: recording.depth(), calls: recording.calls.map((c) => c.command) };
      } finally {
        recording.stop();
      }
    };
    const [paypal, stripe, wise] = await Promise.all([paypalEmulator(), stripeEmulator(), wiseEmulator()]);
    await saveRailConnection(accountId, 'paypal', paypalConnection(paypal));
    await saveRailConnection(accountId, 'stripe', stripeConnection(stripe));
    await saveRailConnection(accountId, 'wise', wiseConnection(wise));
    const deliveries = { paypal: () => paypalDelivery(paypal), stripe: () => stripeDelivery(stripe), wise: () => wiseDelivery(wise) };
    for (const kind of ['paypal', 'stripe', 'wise'] as const) {
      clearRailConnectionCache();
      await drainQueues();
      const path = `/webhooks/${RAIL_INTAKE_PATH[kind]}/${accountId}/`;
      expect({ kind, cold: await recorded(path, deliveries[kind]()) }).toEqual({
        kind,
        cold: { status: 200, depth: 1, calls: ['BatchGetItem'] },
      });
      expect({ kind, warm: await recorded(path, deliveries[kind]()) }).toEqual({ kind, warm: { status: 200, depth: 0, calls: [] } });
      expect({ kind, sent: await drainQueues() }).toEqual({ kind, sent: { 'payout-rails': 2 } });
    }
  });

  for (const route of routes) {
    it(`${route.name}: ${route.method} ${route.path}`, async () => {
      const b = BUDGETS[route.name];
      const scenario = SCENARIOS[route.name];
      if (!b || !scenario)
        throw new Error(`Route ${route.name} has no round-trip budget and happy-path scenario in round-trips.test.ts: add both`);
      const variants = await scenario();
      expect(variants.length).toBeGreaterThan(0);
      const problems: string[] = [];
      for (const v of variants) {
        const m = await measure(route, v);
        results.push(m);
        problems.push(...violations(m, v.budget ?? b, v));
      }
      expect(problems).toEqual([]);
    });
  }
});

// A reward evaluation (the rewards worker, shared/flows/settlement.ts; docs/rewards.md "How an evaluation
// runs"): load, plan, record, then act. Before the first provider call it reads in at most 2 round trips
// (the referral; its payments and refunds beside the member) and commits 1 ledger transaction (the
// reward, its ledger item, event, counters, member stats and report buckets, and the report of the
// payment recorded before the conversion). What follows belongs to the credit itself: the notice mark,
// the member and its subscription (read again: one may have been attached since), the provider settings
// and the credit's claim.
describe('a reward evaluation: at most 2 read round trips and 1 ledger transaction before the provider calls', () => {
  const READS = ['GetItem', 'BatchGetItem', 'Query'];

  it('a credit earned by a payment recorded before the conversion, applied at the provider', async () => {
    const campaign = await createCampaign();
    const own = await checkedOut();
    const name = unique('referrer');
    const member = await expectStatus(
      call('POST', '/v1/members/', {
        body: { identifier: name, email: `${name}@example.com`, campaign: { id: campaign.id }, subscription: { id: own.subscriptionId } },
      }),
      201,
    );
    const r = await referral(member.code);
    // The referred subscription and its first payment, recorded before the conversion (its webhook came first).
    const bought = await checkedOut();
    await applyProviderUpdate(accountId, {
      subscriptionId: bought.subscriptionId,
      asOfMs: Date.now(),
      fields: {},
      payment: {
        id: ++subscriptionIds,
        subscription_id: bought.subscriptionId,
        order_id: null,
        amount: 1000,
        currency: 'USD',
        paid_at: nowSeconds() - 60,
        status: 'paid',
      },
    });
    const subscription = await getSubscription(accountId, bought.subscriptionId);
    if (!subscription) throw new Error('fixture subscription missing');
    expect(await convertToSubscription(accountId, r.id, subscription)).toBe('converted');
    await drainQueues();

    const providerBefore = providerCalls();
    const recording = recordDynamoCalls();
    let atProvider: number | undefined;
    const realFetch = globalThis.fetch;
    const spy = jest.spyOn(globalThis, 'fetch').mockImplementation((...args: Parameters<typeof fetch>) => {
      atProvider ??= recording.calls.length;
      return realFetch(...args);
    });
    try {
      await evaluateReferral(accountId, r.id);
    } finally {
      spy.mockRestore();
      recording.stop();
    }
    const detail = describeCalls(recording.calls);
    expect(providerCalls() - providerBefore).toBeGreaterThan(0);
    const before = recording.calls.slice(0, atProvider);
    const ledger = before.findIndex((c) => c.command === 'TransactWriteItems');
    const load = before.slice(0, ledger);
    expect({ ledger: ledger > 0, loadOnlyReads: load.every((c) => READS.includes(c.command)), detail }).toEqual({
      ledger: true,
      loadOnlyReads: true,
      detail,
    });
    // Two read round trips (the payments Query and the member GetItem run side by side), three calls at most.
    expect({ roundTrips: load.filter((c) => c.sequential).length <= 2, calls: load.length <= 3, detail }).toEqual({
      roundTrips: true,
      calls: true,
      detail,
    });
    // After the ledger transaction and before the provider: the credit's own claim is the one other transaction.
    const rest = before.slice(ledger + 1);
    expect({ transactions: rest.filter((c) => c.command === 'TransactWriteItems').length, detail }).toEqual({ transactions: 1, detail });

    const stored = toReferral(await getItem(keys.referral(accountId, r.id)));
    expect(stored?.rewards).toEqual([expect.objectContaining({ type: 'credit', amount: 500, status: 'applied' })]);
  });
});

// A provider's events through the subscription-sync worker (shared/flows/subscription-sync.ts), for every
// provider's harness (test/support/provider-harness.ts): a checkout's webhooks, each message processed on its
// own, then its last one again. A fact costs the connection and the subscription's items in two BatchGets,
// one transaction and the lag's UpdateItem, whatever the provider; a redelivery no transaction. Chargebee's
// worker fetches each event it applies again from Chargebee first (GET /api/v2/events/{id}, not DynamoDB),
// and an event type it ignores costs the connection's read only.
describe('provider events through the worker: the same round trips for every provider', () => {
  const FACT = ['BatchGetItem', 'BatchGetItem', 'TransactWriteItems', 'UpdateItem'];
  const REDELIVERED = ['BatchGetItem', 'BatchGetItem', 'UpdateItem'];

  it("a checkout's events and a redelivery, per provider; Chargebee's cost what Paddle Billing's and Stripe's do", async () => {
    const table: Record<string, { type: string; calls: string[]; depth: number; refetched: number }[]> = {};
    for (const harness of PROVIDER_HARNESSES) {
      await harness.start();
      try {
        const { accountId: account } = await newAccount();
        connected.push(account);
        await harness.connect(account);
        await db().send(new DeleteCommand({ TableName: tableName(), Key: providerRegistryKeys.providerAccount(account) }));
        const out = await harness.checkout(`${unique('rt')}@example.com`);
        await drainQueues();
        for (const d of out.deliveries) expect((await deliverTo(account, d)).status).toBe(200);
        const messages = (await queues.receiveAll('provider-events')).map((m) => m.json as ProviderWebhookMessage);
        expect(messages).toHaveLength(out.deliveries.length);
        const fetches = () =>
          harness.kind === 'chargebee' ? ((harness as ChargebeeHarness).emulator().callCounts()['GET /api/v2/events/{id}'] ?? 0) : 0;
        const rows: { type: string; calls: string[]; depth: number; refetched: number }[] = [];
        for (const m of [...messages, messages[messages.length - 1] as ProviderWebhookMessage]) {
          const before = fetches();
          const recording = recordDynamoCalls();
          try {
            await processProviderWebhook(m);
          } finally {
            recording.stop();
          }
          rows.push({
            type: typeOf(m),
            calls: recording.calls.map((c) => c.command),
            depth: recording.depth(),
            refetched: fetches() - before,
          });
        }
        table[harness.kind] = rows;
      } finally {
        await harness.stop();
      }
    }
    const detail = JSON.stringify(table);
    for (const [kind, rows] of Object.entries(table)) {
      // Every message: at most one transaction; the redelivery (the last row): none.
      for (const row of rows)
        expect({ kind, type: row.type, transactions: row.calls.filter((c) => c === 'TransactWriteItems').length <= 1 }).toEqual({
          kind,
          type: row.type,
          transactions: true,
        });
      expect({ kind, redelivered: (rows[rows.length - 1] as { calls: string[] }).calls.includes('TransactWriteItems') }).toEqual({
        kind,
        redelivered: false,
      });
    }
    const shapes = (kind: string) => new Set((table[kind] ?? []).map((r) => JSON.stringify(r.calls)));
    // The JSON providers' facts: the same calls, in the same order.
    const allowed = [JSON.stringify(FACT), JSON.stringify(REDELIVERED), JSON.stringify(['BatchGetItem'])];
    for (const kind of ['paddle-billing', 'stripe', 'chargebee'])
      for (const shape of shapes(kind))
        expect({ kind, shape, allowed: allowed.includes(shape), detail }).toEqual({ kind, shape, allowed: true, detail });
    const chargebeeRows = table.chargebee ?? [];
    expect(chargebeeRows.map((r) => [r.type, r.calls, r.refetched])).toEqual([
      ['customer_created', ['BatchGetItem'], 0],
      ['subscription_created', FACT, 1],
      ['payment_succeeded', FACT, 1],
      ['payment_succeeded', REDELIVERED, 1],
    ]);
    expect(chargebeeRows.every((r) => r.depth === r.calls.length)).toBe(true);
  });

  // The worker's batch path (shared/flows/provider-batch.ts, docs/data-model.md "Provider events"): a batch
  // of one account's webhooks costs, whatever N: the connection's read (the JSON providers' adapters need
  // it; Classic's reads it only to describe a plan it has not cached) + ONE BatchGet of every subscription,
  // marker and payment + ONE TransactWriteItems per wave (W = the most events of one subscription in the
  // batch), and no UpdateItem (the unattributed sighting rides in the transaction). A redelivered batch:
  // the reads, no transaction, no other write.
  it('a batch of N webhooks: 1 BatchGet + W TransactWriteItems (+ the connection read); the same batch redelivered: no transaction', async () => {
    const { handler } = await import('../../functions/workers/subscription-sync');
    const table: Record<string, { events: number; waves: number; first: string[]; again: string[] }> = {};
    const asBatch = (messages: ProviderWebhookMessage[]) => ({
      Records: messages.map((m, i) => ({
        messageId: `rt-${++serial}-${i}`,
        receiptHandle: 'r',
        body: JSON.stringify(m),
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'rt', ApproximateFirstReceiveTimestamp: '0' },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:provider-events',
        awsRegion: 'us-east-1',
      })),
    });
    for (const harness of PROVIDER_HARNESSES) {
      await harness.start();
      try {
        const { accountId: account } = await newAccount();
        connected.push(account);
        await harness.connect(account);
        await db().send(new DeleteCommand({ TableName: tableName(), Key: providerRegistryKeys.providerAccount(account) }));
        const deliveries: import('../support/provider-harness').Delivery[] = [];
        for (let i = 0; i < 3; i++) deliveries.push(...(await harness.checkout(`${unique('rtb')}@example.com`)).deliveries);
        await drainQueues();
        for (const d of deliveries) expect((await deliverTo(account, d)).status).toBe(200);
        const messages = (await queues.receiveAll('provider-events')).map((m) => m.json as ProviderWebhookMessage);
        expect(messages).toHaveLength(deliveries.length);
        const run = async () => {
          const recording = recordDynamoCalls();
          try {
            const out = await handler(asBatch(messages) as never);
            expect(out.batchItemFailures).toEqual([]);
          } finally {
            recording.stop();
          }
          return recording.calls.map((c) => c.command);
        };
        const first = await run();
        const again = await run();
        await drainQueues();
        // Events per checkout that carry facts (a provider may send one the adapter ignores, e.g. Chargebee's customer_created).
        const perCheckout = deliveries.length / 3;
        table[harness.kind] = { events: deliveries.length, waves: perCheckout, first, again };
      } finally {
        await harness.stop();
      }
    }
    const detail = JSON.stringify(table);
    for (const [kind, row] of Object.entries(table)) {
      const count = (calls: string[], c: string) => calls.filter((x) => x === c).length;
      const reads = (calls: string[]) => calls.filter((c) => c === 'BatchGetItem' || c === 'GetItem').length;
      // Writes: at most one transaction per wave, never a single-item write.
      expect({ kind, transactions: count(row.first, 'TransactWriteItems') <= row.waves, detail }).toEqual({
        kind,
        transactions: true,
        detail,
      });
      expect({ kind, transactions: count(row.first, 'TransactWriteItems') >= 1, detail }).toEqual({ kind, transactions: true, detail });
      // (Classic: a container's first sight of a plan reads the plan cache once and writes it once, for the batch.)
      const planCache = kind === 'paddle-classic' ? 1 : 0;
      for (const single of ['UpdateItem', 'PutItem', 'DeleteItem'])
        expect({
          kind,
          single,
          n: count(row.first, single) + count(row.again, single) <= (single === 'PutItem' ? planCache : 0),
          detail,
        }).toEqual({
          kind,
          single,
          n: true,
          detail,
        });
      // Reads: the connection (at most once), the batch's one BatchGet, nothing per event.
      expect({ kind, reads: reads(row.first) <= 2 + planCache, detail }).toEqual({ kind, reads: true, detail });
      // The redelivery: the same reads, no transaction.
      expect({ kind, again: count(row.again, 'TransactWriteItems'), reads: reads(row.again) <= 2, detail }).toEqual({
        kind,
        again: 0,
        reads: true,
        detail,
      });
    }
    if (process.env.ROUND_TRIPS_REPORT) console.log(detail);
  });
});

type ChargebeeHarness = ReturnType<typeof chargebee>;

const typeOf = (m: ProviderWebhookMessage): string => {
  try {
    const body = JSON.parse(m.raw_body);
    return String(body.event_type ?? body.type ?? '?');
  } catch {
    return new URLSearchParams(m.raw_body).get('alert_name') ?? '?';
  }
};
