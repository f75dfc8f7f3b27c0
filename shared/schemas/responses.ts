// The API's response objects as valibot schemas: the OpenAPI document's component schemas are generated
// from these (shared/openapi), live responses are validated against that document in the tests, and
// test/unit/view-types.test.ts checks with the TypeScript compiler that every view (shared/domain/views.ts,
// shared/webhooks/views.ts) returns what its schema declares. Strict objects: an undocumented field
// in a response fails the live validation.
import * as v from 'valibot';
import { BATCH_RAILS, RAIL_KINDS as PAYOUT_METHOD_KINDS } from '../rails/kinds';
import { EVENT_TYPES } from '../domain/events';
import { SUBSCRIPTION_STATUSES } from './query';
import { PAYOUT_STATUSES, REWARD_STATUSES, VOID_REASONS } from '../domain/lifecycle';
import { FRAUD_ACTIONS, FRAUD_FLAG_STATUSES, FRAUD_RULES } from '../domain/fraud';
import { PROVIDER_KINDS } from '../billing/registry';
import { RAIL_DEFINITIONS } from '../rails/registry';

const amount = v.pipe(v.string(), v.regex(/^\d+\.\d{2}$/), v.description('Decimal amount with two decimals.'), v.examples(['15.00']));
const unixSeconds = v.pipe(v.number(), v.integer(), v.description('Unix timestamp (seconds).'));
const entityId = v.pipe(v.string(), v.regex(/^[0-9a-f]{32}$/));
const campaignId = v.pipe(v.string(), v.regex(/^[0-9a-f]{8}$/));
const signedAmountPre = v.pipe(v.string(), v.regex(/^-?\d+\.\d{2}$/));
const date = v.nullable(v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/), v.description('YYYY-MM-DD')));

/** A provider id as the provider names it: an integer for Paddle Classic, a string for Paddle Billing and Stripe. */
const providerId = (description: string) => v.pipe(v.union([v.pipe(v.number(), v.integer()), v.string()]), v.description(description));

export const planResponse = v.strictObject({
  id: providerId("The provider's plan or price id (an integer for Paddle Classic, `pri_…`/`price_…` otherwise)."),
  name: v.string(),
  amount: v.string(),
  currency: v.string(),
  interval: v.nullable(v.string()),
  frequency: v.nullable(v.pipe(v.number(), v.integer())),
  descriptor: v.nullable(v.string()),
});

export const subscriptionResponse = v.strictObject({
  id: providerId(
    "The payment provider's subscription id: an integer for Paddle Classic, a string (`sub_…`) for Paddle Billing and Stripe.",
  ),
  unit_price: v.nullable(v.string()),
  currency: v.string(),
  status: v.pipe(v.string(), v.description(`One of ${SUBSCRIPTION_STATUSES.join(', ')}.`)),
  email: v.string(),
  next_bill_date: date,
  last_bill_date: date,
  plan: planResponse,
});

const signupQuestionResponse = v.strictObject({
  id: v.string(),
  label: v.string(),
  type: v.picklist(['text', 'url', 'choice']),
  required: v.boolean(),
  options: v.nullable(v.array(v.string())),
});

export const campaignResponse = v.strictObject({
  id: campaignId,
  name: v.string(),
  slug: v.nullable(
    v.pipe(
      v.string(),
      v.description("Unique within the account: the campaign's part of its sign-up page's address (`/join/<account slug>/<slug>/`)."),
    ),
  ),
  signup: v.pipe(
    v.strictObject({
      enabled: v.boolean(),
      approval: v.picklist(['auto', 'manual']),
      terms_url: v.nullable(v.string()),
      questions: v.array(signupQuestionResponse),
    }),
    v.description('The public sign-up page: open or not, auto or manual approval of applications, the terms and up to 10 questions.'),
  ),
  allows_credit: v.boolean(),
  credit_amount: amount,
  credit_currency: v.string(),
  allows_commission: v.boolean(),
  commission_amount: amount,
  commission_currency: v.string(),
  commission_months: v.nullable(v.pipe(v.number(), v.integer())),
  reward_threshold: amount,
  referred_discount_type: v.nullable(
    v.pipe(
      v.picklist(['percentage', 'flat']),
      v.description('Double-sided campaigns: the discount the referred user gets (a single-use coupon per referral).'),
    ),
  ),
  referred_discount_amount: v.pipe(amount, v.description('The percent (percentage) or the amount (flat) of the referred discount.')),
  referred_discount_recurring: v.boolean(),
  commission_type: v.pipe(
    v.picklist(['fixed', 'percentage']),
    v.description('`fixed`: commission_amount per qualifying payment; `percentage`: commission_percent of its amount excluding tax.'),
  ),
  commission_percent: v.pipe(amount, v.description('Percent of each qualifying payment (0.01..100) for a percentage commission.')),
  hold_days: v.pipe(v.number(), v.integer(), v.description('Days a commission stays pending before it is approved (default 30).')),
  approval: v.pipe(
    v.picklist(['auto', 'manual']),
    v.description('`manual`: commissions wait for POST /v1/rewards/{id}/approve/ after their hold.'),
  ),
  min_payout: v.pipe(amount, v.description("A member's payout is due once it reaches this amount.")),
  created_at: unixSeconds,
});

/** A member's payout method and its readiness (docs/payouts.md "Members' methods"): the API's member and the portal's me. */
const payoutMethodFields = {
  payout_method: v.pipe(
    v.nullable(v.picklist(PAYOUT_METHOD_KINDS)),
    v.description(
      "Where the member's payouts go: `paypal` or `wise` (to the payout email), `stripe` (the member's Stripe Express account, set up from the portal), or null (the payout file, to the payout email).",
    ),
  ),
  payout_method_ready: v.pipe(
    v.boolean(),
    v.description("Read-only: the member's payouts can go by their method now (a payout is due only then)."),
  ),
  payout_method_reason: v.pipe(v.nullable(v.string()), v.description('Read-only: what is missing, in words, when not ready.')),
};

/** A fraud rule's finding as recorded on what it is about: `{rule, at, detail}`. */
const fraudFlagEntry = v.strictObject({ rule: v.string(), at: unixSeconds, detail: v.string() });

export const memberResponse = v.strictObject({
  id: entityId,
  identifier: v.string(),
  email: v.string(),
  first_name: v.nullable(v.string()),
  last_name: v.nullable(v.string()),
  code: v.string(),
  stats: v.strictObject({
    link_clicks: v.pipe(v.number(), v.integer()),
    referrals: v.pipe(v.number(), v.integer()),
    conversions: v.pipe(v.number(), v.integer()),
    credit_earned: amount,
    commission_earned: amount,
    commission_pending: v.pipe(
      signedAmountPre,
      v.description('Commission earned and still in its hold (or waiting for a manual approval).'),
    ),
    commission_approved: v.pipe(signedAmountPre, v.description('Approved commission not paid yet (in an open, due or processing payout).')),
    commission_held: v.pipe(signedAmountPre, v.description('Commission held by a fraud rule until an operator releases or voids it.')),
    commission_paid: v.pipe(signedAmountPre, v.description('Commission paid out.')),
    currency: v.string(),
  }),
  link_clicks: v.pipe(v.number(), v.integer()),
  campaign: v.nullable(campaignResponse),
  subscription: v.nullable(subscriptionResponse),
  email_opt_out: v.pipe(v.boolean(), v.description('The member asked for no emails from the programme.')),
  payout_email: v.nullable(
    v.pipe(v.string(), v.description('Where payouts are sent (PayPal or Wise by email); a payout is due only once the member has one.')),
  ),
  ...payoutMethodFields,
  source: v.pipe(
    v.picklist(['app', 'signup']),
    v.description('`signup`: created by approving an application on the public sign-up page; `app`: by the API or the dashboard.'),
  ),
  fraud_flags: v.pipe(v.array(fraudFlagEntry), v.description('What the fraud rules found about the member, in words (docs/fraud.md).')),
  created_at: unixSeconds,
});

const rewardType = v.picklist(['credit', 'commission']);

const signedAmount = v.pipe(
  v.string(),
  v.regex(/^-?\d+\.\d{2}$/),
  v.description('Decimal amount with two decimals; negative for a clawback.'),
);

export const rewardResponse = v.strictObject({
  id: entityId,
  type: rewardType,
  amount: signedAmount,
  currency: v.string(),
  created_at: unixSeconds,
  payment_id: providerId(
    'The provider payment that triggered it: an integer for Paddle Classic, `txn_…` (Paddle Billing) or `in_…` (Stripe).',
  ),
  reverses: v.nullable(v.pipe(entityId, v.description('A clawback: the reward it takes back.'))),
  refund_id: v.nullable(v.pipe(v.string(), v.description('The refund alert behind a clawback, a reversal or a note.'))),
  reversed_at: v.nullable(v.pipe(unixSeconds, v.description('When a credit was reversed.'))),
  note: v.nullable(
    v.pipe(
      v.string(),
      v.description(
        'What a clawback takes back, why a refunded credit stays, or why a reward is held for review (its payment is above the sanity limit: it waits for an operator to approve or void it).',
      ),
    ),
  ),
  status: v.pipe(
    v.picklist(REWARD_STATUSES),
    v.description(
      'Commission: pending -> approved -> paid; credit: pending -> applied; any unpaid reward can be voided. `held`: a commission a fraud rule holds (in no payout, never approved) until an operator releases or voids it. A clawback follows the reward it reverses.',
    ),
  ),
  approves_at: v.nullable(
    v.pipe(unixSeconds, v.description('When a pending commission is approved by itself (its hold ends); null when approval is manual.')),
  ),
  approved_at: v.nullable(unixSeconds),
  paid_at: v.nullable(unixSeconds),
  voided_at: v.nullable(unixSeconds),
  void_reason: v.nullable(v.picklist(VOID_REASONS)),
  payout_id: v.nullable(v.pipe(v.string(), v.description('The payout an approved commission is in.'))),
});

export const referralResponse = v.strictObject({
  id: entityId,
  member_id: entityId,
  user_identifier: v.string(),
  created_at: unixSeconds,
  converted_at: v.nullable(unixSeconds),
  is_converted: v.boolean(),
  coupon_code: v.nullable(v.string()),
  subscription: v.nullable(subscriptionResponse),
  source: v.picklist(['app', 'api', 'js']),
  sub: v.nullable(v.pipe(v.string(), v.description("The sub-id (a named link's slug) the referral came through; null without one."))),
  campaign_id: v.nullable(campaignId),
  reward_type: v.nullable(rewardType),
  reward_amount: amount,
  reward_percent: v.nullable(
    v.pipe(
      amount,
      v.description('A percentage commission: the percent of each qualifying payment excluding tax (reward_amount is then 0.00).'),
    ),
  ),
  reward_threshold: amount,
  currency: v.nullable(v.string()),
  stats: v.strictObject({
    rewards: v.pipe(v.number(), v.integer()),
    credit_earned: amount,
    commission_earned: amount,
    currency: v.string(),
  }),
  rewards_completed: v.boolean(),
  fraud_flags: v.pipe(v.array(fraudFlagEntry), v.description('What the fraud rules found about it, in words (docs/fraud.md).')),
  rewards: v.array(rewardResponse),
});

const eventType = v.picklist(EVENT_TYPES);

export const webhookEndpointResponse = v.strictObject({
  id: entityId,
  url: v.string(),
  description: v.nullable(v.string()),
  events: v.array(eventType),
  enabled: v.boolean(),
  disabled_reason: v.nullable(
    v.pipe(v.string(), v.description('`failing` when the service disabled it after 3 days of failed deliveries.')),
  ),
  failing_since: v.nullable(unixSeconds),
  created_at: unixSeconds,
});

export const createdWebhookEndpointResponse = v.strictObject({
  ...webhookEndpointResponse.entries,
  secret: v.nullable(
    v.pipe(
      v.string(),
      v.regex(/^whsec_/),
      v.description(
        'The signing secret: shown only in this response (null when an Idempotency-Key replays it: the secret is not stored with the replay).',
      ),
    ),
  ),
});

export const webhookDeliveryResponse = v.strictObject({
  id: v.string(),
  event_id: v.string(),
  event_type: eventType,
  status: v.picklist(['pending', 'retrying', 'succeeded', 'failed', 'cancelled']),
  created_at: unixSeconds,
  attempt_count: v.pipe(v.number(), v.integer()),
  next_retry_at: v.nullable(unixSeconds),
  attempts: v.array(
    v.strictObject({
      attempt: v.pipe(v.number(), v.integer()),
      attempted_at: unixSeconds,
      status_code: v.nullable(v.pipe(v.number(), v.integer())),
      duration_ms: v.pipe(v.number(), v.integer()),
      error: v.nullable(v.string()),
    }),
  ),
});

/** `{id, type, created_at, data}`: what an endpoint receives. */
export function eventEnvelope<S extends v.GenericSchema>(type: string, data: S) {
  return v.strictObject({ id: v.pipe(v.string(), v.regex(/^evt_[0-9a-f]{32}$/)), type: v.literal(type), created_at: unixSeconds, data });
}

export const rewardEventData = v.strictObject({ ...rewardResponse.entries, referral_id: entityId, member_id: entityId });

/** A reward in GET /v1/rewards/ and in reward.approved|voided|paid events. */
export const ledgerRewardResponse = v.strictObject({
  ...rewardResponse.entries,
  referral_id: entityId,
  member_id: entityId,
  campaign_id: v.nullable(campaignId),
  held_by: v.pipe(
    v.nullable(v.pipe(v.string(), v.regex(/^ff_[0-9a-f]{32}$/))),
    v.description(
      'The fraud flag that holds this reward (status `held`), or that held it before it was released or voided; null when no flag ever held it.',
    ),
  ),
});

const payoutId = v.pipe(v.string(), v.regex(/^po_[0-9a-f]{32}$/));
const signed = v.pipe(v.string(), v.regex(/^-?\d+\.\d{2}$/), v.description('Decimal amount with two decimals.'));

export const payoutResponse = v.strictObject({
  id: payoutId,
  member_id: entityId,
  amount: v.pipe(signed, v.description('The sum of its rewards (a clawback of a paid reward can take it below zero: it then stays open).')),
  currency: v.string(),
  status: v.pipe(
    v.picklist(PAYOUT_STATUSES),
    v.description(
      'open (collecting) -> due (at least min_payout, payout email known) -> processing (in a batch) -> paid, or failed / canceled.',
    ),
  ),
  reward_count: v.pipe(v.number(), v.integer()),
  period_start: v.nullable(unixSeconds),
  period_end: v.nullable(unixSeconds),
  paid_at: v.nullable(unixSeconds),
  reference: v.nullable(v.string()),
  failure_reason: v.nullable(v.string()),
  batch_id: v.nullable(v.string()),
  payout_email: v.nullable(
    v.pipe(v.string(), v.description('Where the money was sent (copied from the member when a batch took the payout).')),
  ),
  rail: v.pipe(
    v.nullable(v.picklist(BATCH_RAILS)),
    v.description('How its batch pays it: a file, or a connected payout rail; null until a batch takes it.'),
  ),
  rail_status: v.pipe(
    v.nullable(v.string()),
    v.description(
      "The rail's own status word for the payout (e.g. `UNCLAIMED`, `SUCCESS`, `outgoing_payment_sent`); null until the rail reports one.",
    ),
  ),
  created_at: unixSeconds,
});

export const payoutDetailResponse = v.strictObject({ ...payoutResponse.entries, reward_ids: v.array(entityId) });

const currencyTotals = v.record(v.string(), signed);
export const payoutSummaryResponse = v.strictObject({
  due: v.pipe(currencyTotals, v.description('Per currency: payouts ready to pay.')),
  open: v.pipe(
    currencyTotals,
    v.description('Per currency: approved commissions still below the minimum payout or without a payout email.'),
  ),
  processing: v.pipe(currencyTotals, v.description('Per currency: payouts in a batch not marked paid yet.')),
  paid: v.pipe(currencyTotals, v.description('Per currency: paid so far.')),
});

export const payoutBatchResponse = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^pb_[0-9a-f]{32}$/)),
  rail: v.pipe(
    v.picklist(BATCH_RAILS),
    v.description('`file`: a file the operator uploads to the provider; else the connected payout rail the batch is sent through.'),
  ),
  format: v.pipe(v.nullable(v.picklist(['paypal', 'wise', 'csv'])), v.description("The file's format; null for a rail batch.")),
  currency: v.string(),
  status: v.pipe(
    v.picklist(['processing', 'paid', 'failed']),
    v.description(
      'processing until every payout in it is marked paid or failed; failed when the rail refused the whole batch (`failure_reason`) or none of its payouts was paid.',
    ),
  ),
  payout_ids: v.array(payoutId),
  payout_count: v.pipe(v.number(), v.integer()),
  amount: signed,
  file_url: v.pipe(v.nullable(v.string()), v.description('The batch file (text/csv); null for a rail batch.')),
  created_at: unixSeconds,
  paid_at: v.pipe(
    v.nullable(v.pipe(v.number(), v.integer())),
    v.description('When the batch was marked paid (the `paid_at` given, else the time of the call); null while processing.'),
  ),
  reference: v.pipe(
    v.nullable(v.string()),
    v.description('The payment reference given when the batch was marked paid (else the batch id); null while processing.'),
  ),
  failure_reason: v.pipe(
    v.nullable(v.string()),
    v.description('Why the rail refused the whole batch (e.g. an insufficient balance), in words; null otherwise.'),
  ),
  rail_batch_id: v.pipe(v.nullable(v.string()), v.description("The rail's id of the batch once sent; null for a file batch.")),
});

export const paddleWebhookAccepted = v.strictObject({ received: v.literal(true) });

/** `GET /`: where the documentation is (absolute URLs). */
export const serviceLinks = v.strictObject({
  docs: v.pipe(v.string(), v.url(), v.description('The rendered API reference.')),
  openapi: v.pipe(v.string(), v.url(), v.description('This OpenAPI document.')),
  health: v.pipe(v.string(), v.url(), v.description('The liveness check.')),
});

/** `GET /health`. */
export const healthResponse = v.strictObject({ status: v.literal('ok') });

// ---- reports ----
const metricTotals = v.record(v.string(), v.union([v.pipe(v.number(), v.integer()), v.record(v.string(), signed)]));

export const timeseriesResponse = v.strictObject({
  metric: v.string(),
  interval: v.picklist(['day', 'week', 'month']),
  from: unixSeconds,
  to: unixSeconds,
  buckets: v.array(
    v.strictObject({
      start: unixSeconds,
      end: v.pipe(unixSeconds, v.description('Exclusive.')),
      value: v.nullable(v.pipe(v.number(), v.integer(), v.description('Counts (link_clicks, referrals, conversions); null for money.'))),
      amounts: v.nullable(v.pipe(v.record(v.string(), signed), v.description('Money per currency; null for counts.'))),
    }),
  ),
});

export const overviewResponse = v.strictObject({
  from: unixSeconds,
  to: unixSeconds,
  previous_from: unixSeconds,
  previous_to: unixSeconds,
  current: v.pipe(metricTotals, v.description('Every metric: a count, or money per currency.')),
  previous: metricTotals,
});

export const topMembersResponse = v.strictObject({
  sort: v.picklist(['conversions', 'revenue', 'commission']),
  from: unixSeconds,
  to: unixSeconds,
  currency: v.nullable(v.string()),
  results: v.array(
    v.strictObject({
      member_id: entityId,
      identifier: v.nullable(v.string()),
      email: v.nullable(v.string()),
      conversions: v.pipe(v.number(), v.integer()),
      revenue: v.record(v.string(), signed),
      commission: v.record(v.string(), signed),
    }),
  ),
});

// ---- the dashboard: sessions, team, API keys, account settings ----
const role = v.picklist(['owner', 'admin', 'finance', 'viewer']);

export const sessionResponse = v.strictObject({
  account_id: v.string(),
  account_name: v.string(),
  email: v.string(),
  role,
  expires_at: v.pipe(
    v.number(),
    v.integer(),
    v.description('Unix seconds; each use moves it to 12 hours later, never past 7 days after the login.'),
  ),
});

export const teamMemberResponse = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^tm_[0-9a-f]{24}$/)),
  email: v.string(),
  role,
  created_at: unixSeconds,
  last_login_at: v.nullable(unixSeconds),
});

export const apiKeyResponse = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^key_[0-9a-f]{24}$/)),
  name: v.string(),
  prefix: v.pipe(v.string(), v.description('The first characters of the key, to recognise it.')),
  created_at: unixSeconds,
  revoked_at: v.nullable(unixSeconds),
});

export const createdApiKeyResponse = v.strictObject({
  ...apiKeyResponse.entries,
  key: v.nullable(
    v.pipe(
      v.string(),
      v.regex(/^rfl_live_/),
      v.description('The secret key: shown only in this response (null when an Idempotency-Key replays it).'),
    ),
  ),
});

export const providerConnectionResponse = v.strictObject({
  kind: v.nullable(v.picklist(PROVIDER_KINDS)),
  connected: v.boolean(),
  webhook_url: v.nullable(v.pipe(v.string(), v.description('Where the provider sends its webhooks: give it this URL.'))),
  vendor_id: v.nullable(v.pipe(v.number(), v.integer())),
  api_url: v.nullable(v.string()),
});

/** A connectable provider and its connection form (POST /v1/account/provider/ takes these fields). */
export const providerOptionResponse = v.strictObject({
  kind: v.picklist(PROVIDER_KINDS),
  name: v.pipe(v.string(), v.description("The provider's name as people call it.")),
  docs_url: v.pipe(v.string(), v.description("The provider's own documentation on connecting it.")),
  fields: v.array(
    v.strictObject({
      name: v.pipe(v.string(), v.description('The property of the POST /v1/account/provider/ body.')),
      label: v.string(),
      type: v.pipe(
        v.picklist(['text', 'password', 'textarea', 'integer']),
        v.description('`password`: a secret, write-only (never shown again); `textarea`: several lines (a PEM key).'),
      ),
      required: v.boolean(),
      placeholder: v.optional(v.string()),
      hint: v.optional(v.string()),
    }),
  ),
});

export const accountResponse = v.strictObject({
  id: v.string(),
  name: v.string(),
  plan: v.picklist(['starter', 'small', 'regular', 'unlimited']),
  campaign_limit: v.nullable(v.pipe(v.number(), v.integer(), v.description('Campaigns the plan allows; null: no limit.'))),
  publishable_key: v.nullable(v.string()),
  script_tag: v.nullable(v.string()),
  js_referrals: v.picklist(['open', 'confirm', 'off']),
  email_sender: v.nullable(v.strictObject({ address: v.string(), name: v.string() })),
  embed_origins: v.array(v.string()),
  referral_url: v.nullable(v.pipe(v.string(), v.description("Where members' links point; a member's link is it with `?via=<code>`."))),
  provider: providerConnectionResponse,
  slug: v.nullable(
    v.pipe(v.string(), v.description("Unique across the service: the account's part of its sign-up pages' and hosted portal's addresses.")),
  ),
  attribution_model: v.pipe(
    v.picklist(['first_click', 'last_click']),
    v.description('`first_click` (default): the first link a visitor followed keeps them; `last_click`: the latest one does.'),
  ),
  attribution_days: v.pipe(v.number(), v.integer(), v.description("How long a visitor's click is remembered (1 to 365 days, default 60).")),
  tax_details_required: v.pipe(v.boolean(), v.description('Affiliates give tax details in the portal before a payout is sent.')),
  affiliate_emails: v.pipe(
    v.strictObject({ new_referral: v.boolean(), monthly_summary: v.boolean() }),
    v.description('The optional affiliate emails (off by default).'),
  ),
  theme: v.pipe(
    v.strictObject({
      accent: v.optional(v.string()),
      background: v.optional(v.string()),
      text: v.optional(v.string()),
      radius: v.optional(v.string()),
      font: v.optional(v.string()),
    }),
    v.description('The look of the sign-up page and the hosted portal.'),
  ),
  provider_options: v.pipe(
    v.array(providerOptionResponse),
    v.description(
      'The providers an account can connect (shared/billing/registry.ts), with the fields of their connection form besides the common `api_url`: the dashboard renders its form from them.',
    ),
  ),
});

// ---- payout rails (docs/payouts.md "Connecting a rail") ----

const RAIL_KINDS = RAIL_DEFINITIONS.map((d) => d.kind);

/** A connected payout rail's public part (never a secret). */
export const payoutRailResponse = v.strictObject({
  kind: v.picklist(RAIL_KINDS),
  name: v.pipe(v.string(), v.description('"PayPal Payouts", "Stripe Connect" or "Wise".')),
  api_url: v.pipe(v.string(), v.description("The rail's API base URL (its production API unless another was given).")),
  settings: v.pipe(
    v.record(v.string(), v.string()),
    v.description(
      "The connection's fields that are not secrets (PayPal `client_id`, `webhook_id`; Wise `profile_id`, `webhook_public_key`).",
    ),
  ),
  connected_at: v.pipe(v.number(), v.integer(), v.description('When it was connected or last replaced (Unix seconds).')),
  webhook_path: v.pipe(
    v.string(),
    v.description(
      "Where the rail sends its webhooks, relative to the API's base URL: `/webhooks/<rail>/{account_id}/`. Register it at the rail.",
    ),
  ),
  connect_webhook_path: v.optional(
    v.pipe(
      v.string(),
      v.description('Stripe only: the endpoint for events on connected accounts (the same intake, told apart by its signing secret).'),
    ),
  ),
});

/** The account's connected rails and every rail's connection form. */
export const payoutRailsResponse = v.strictObject({
  connected: v.array(payoutRailResponse),
  rail_options: v.pipe(
    v.array(
      v.strictObject({
        kind: v.picklist(RAIL_KINDS),
        name: v.string(),
        default_api_url: v.string(),
        fields: v.array(
          v.strictObject({
            name: v.pipe(v.string(), v.description('The property of the PUT /v1/account/payout-rails/{kind}/ body.')),
            label: v.string(),
            type: v.picklist(['text', 'password', 'textarea', 'integer']),
            required: v.boolean(),
            secret: v.pipe(v.boolean(), v.description('Write-only: stored encrypted, never shown again.')),
            placeholder: v.optional(v.string()),
            hint: v.optional(v.string()),
          }),
        ),
      }),
    ),
    v.description('Every rail an account can connect, with its form fields besides the common `api_url`.'),
  ),
});

// ---- the member portal (docs/portal.md) ----

export const portalLinkResponse = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^ps_[0-9a-f]{24}$/), v.description('The portal session (its link and, once opened, its session).')),
  url: v.nullable(
    v.pipe(
      v.string(),
      v.description(
        'The portal, with its single-use token in the fragment (`#token=rpl_...`): hand it to `Refloop.mount` or open it. Null on an Idempotency-Key replay: the token is shown once.',
      ),
    ),
  ),
  expires_at: v.pipe(unixSeconds, v.description('The link opens a session until then (10 minutes).')),
});

export const portalTokenResponse = v.strictObject({
  token: v.pipe(
    v.string(),
    v.regex(/^rps_[A-Za-z0-9_-]{43}$/),
    v.description('The portal session token: `Authorization: Bearer <token>` on /portal/v1/.'),
  ),
  expires_at: v.pipe(unixSeconds, v.description('60 minutes after the opening; it does not slide.')),
});

/** POST /portal/v1/me/stripe-account-link/: Stripe's onboarding for the member (docs/payouts.md "Members' methods"). */
export const stripeAccountLinkResponse = v.strictObject({
  url: v.pipe(
    v.string(),
    v.description("Stripe's onboarding page for the member's Express account: open it at once (single use, a few minutes)."),
  ),
  expires_at: v.pipe(unixSeconds, v.description('When the link stops working: ask for a new one then.')),
});

export const portalMeResponse = v.strictObject({
  program: v.strictObject({
    name: v.string(),
    portal: v.pipe(v.string(), v.description("The account's slug, or its id without one: the portal's path is `/portal/<portal>/`.")),
    payout_methods: v.pipe(
      v.array(v.picklist(PAYOUT_METHOD_KINDS)),
      v.description('The payout rails the programme connected: the methods the member may choose (besides null).'),
    ),
  }),
  member: v.strictObject({
    first_name: v.nullable(v.string()),
    last_name: v.nullable(v.string()),
    email: v.string(),
    code: v.string(),
    link: v.nullable(v.pipe(v.string(), v.description("The member's referral link; null until the account sets its `referral_url`."))),
    email_opt_out: v.boolean(),
    payout_email: v.nullable(v.string()),
    ...payoutMethodFields,
    has_subscription: v.boolean(),
    joined_at: unixSeconds,
  }),
  campaign: v.nullable(
    v.strictObject({
      name: v.string(),
      reward_type: v.nullable(rewardType),
      reward_amount: v.nullable(amount),
      reward_percent: v.nullable(amount),
      currency: v.nullable(v.string()),
      commission_months: v.nullable(v.pipe(v.number(), v.integer())),
      reward_threshold: amount,
      hold_days: v.nullable(v.pipe(v.number(), v.integer())),
      min_payout: v.nullable(amount),
      referred_discount: v.nullable(v.pipe(v.string(), v.description("The referred user's discount in words."))),
      description: v.pipe(v.string(), v.description('The terms in words, for the member.')),
    }),
  ),
  stats: v.strictObject({
    link_clicks: v.pipe(v.number(), v.integer()),
    referrals: v.pipe(v.number(), v.integer()),
    conversions: v.pipe(v.number(), v.integer()),
    credit_earned: signed,
    commission_earned: signed,
    commission_pending: signed,
    commission_approved: signed,
    commission_held: signed,
    commission_paid: signed,
    currency: v.string(),
  }),
  session: v.strictObject({
    expires_at: unixSeconds,
    return_url: v.nullable(v.string()),
    mode: v.pipe(
      v.picklist(['bearer', 'cookie']),
      v.description(
        "`bearer`: opened by the app's portal link (embedded); `cookie`: an affiliate's login (it slides 12 hours, and the page offers to log out).",
      ),
    ),
  }),
  tax_details: v.strictObject({
    required: v.pipe(
      v.boolean(),
      v.description('The account collects tax details (`tax_details_required`): payouts wait until they are given.'),
    ),
    provided: v.boolean(),
  }),
});

/** A member's tax details as the portal shows them: masked (GET and PUT /portal/v1/tax-details/). */
export const portalTaxDetailsResponse = v.strictObject({
  required: v.boolean(),
  provided: v.boolean(),
  form: v.nullable(v.picklist(['w9', 'w8ben'])),
  legal_name: v.nullable(v.string()),
  country: v.nullable(v.string()),
  address: v.nullable(v.pipe(v.string(), v.description('Masked: its first characters.'))),
  tin: v.nullable(v.pipe(v.string(), v.description('The US TIN or the foreign TIN, masked to its last four characters (`•••••6789`).'))),
  updated_at: v.nullable(unixSeconds),
});

const count = v.pipe(v.number(), v.integer());
export const portalStatsResponse = v.strictObject({
  interval: v.picklist(['day', 'week', 'month']),
  from: unixSeconds,
  to: unixSeconds,
  buckets: v.array(v.strictObject({ start: unixSeconds, link_clicks: count, referrals: count, conversions: count })),
});

export const portalReferralResponse = v.strictObject({
  id: entityId,
  user: v.pipe(v.string(), v.description('The referred user, masked (`j***@e***.com`).')),
  created_at: unixSeconds,
  converted_at: v.nullable(unixSeconds),
  status: v.picklist(['signed_up', 'paying', 'canceled']),
  sub: v.nullable(v.pipe(v.string(), v.description('The sub-id the referral came through; null without one.'))),
  earned: signed,
  currency: v.nullable(v.string()),
});

/** A member's named link (POST /v1/members/{id}/links/, /portal/v1/links/). */
export const memberLinkResponse = v.strictObject({
  slug: v.pipe(v.string(), v.description('The sub-id: clicks, referrals and conversions through the link carry it as `sub`.')),
  destination_path: v.nullable(v.pipe(v.string(), v.description('The path of the site the link opens; null: `referral_url` itself.'))),
  url: v.nullable(
    v.pipe(v.string(), v.description('The link to share (`?via=<code>&sub=<slug>`); null while the account has no `referral_url`.')),
  ),
  created_at: unixSeconds,
});

export const portalRewardResponse = v.strictObject({
  id: entityId,
  type: rewardType,
  amount: signed,
  currency: v.string(),
  status: v.picklist(REWARD_STATUSES),
  created_at: unixSeconds,
  approves_at: v.nullable(unixSeconds),
  approved_at: v.nullable(unixSeconds),
  paid_at: v.nullable(unixSeconds),
  voided_at: v.nullable(unixSeconds),
  void_reason: v.nullable(v.picklist(VOID_REASONS)),
  is_clawback: v.boolean(),
  credit_standing: v.nullable(
    v.pipe(
      v.picklist(['applied', 'next_bill', 'needs_subscription']),
      v.description('Credits: on the subscription at the provider, waiting for the next bill, or waiting for the member to subscribe.'),
    ),
  ),
});

export const portalPayoutResponse = v.strictObject({
  id: payoutId,
  amount: signed,
  currency: v.string(),
  status: v.picklist(PAYOUT_STATUSES),
  reward_count: count,
  created_at: unixSeconds,
  paid_at: v.nullable(unixSeconds),
  payout_email: v.nullable(v.string()),
});

// ---- affiliate applications (docs/affiliates.md "Applications") ----
export const applicationResponse = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^app_[0-9a-f]{32}$/)),
  campaign_id: campaignId,
  email: v.string(),
  name: v.string(),
  country: v.pipe(v.string(), v.regex(/^[A-Z]{2}$/), v.description('ISO 3166-1 alpha-2.')),
  payout_email: v.nullable(v.string()),
  answers: v.pipe(v.record(v.string(), v.string()), v.description("The answers to the campaign's questions, keyed by question id.")),
  status: v.pipe(
    v.picklist(['pending', 'approved', 'rejected']),
    v.description('pending -> approved (its member created) or rejected; a decision is final.'),
  ),
  member_id: v.pipe(v.nullable(entityId), v.description('The member its approval created.')),
  created_at: unixSeconds,
  decided_at: v.nullable(unixSeconds),
  reason: v.pipe(v.nullable(v.string()), v.description("Why it was rejected (internal: never in the applicant's email).")),
  fraud_flags: v.pipe(
    v.array(v.strictObject({ rule: v.string(), at: unixSeconds, detail: v.string() })),
    v.description('What the fraud rules found (a flagged applicant waits as pending even with automatic approval).'),
  ),
});

// ---- fraud rules and the review queue (docs/fraud.md) ----
const fraudAction = v.picklist(FRAUD_ACTIONS);
export const fraudRulesResponse = v.pipe(
  v.strictObject({
    self_referral: v.strictObject({ action: fraudAction }),
    duplicate_ip: v.strictObject({ action: fraudAction, max_referrals: v.number(), window_hours: v.number() }),
    disposable_email: v.strictObject({ action: fraudAction }),
    click_spam: v.strictObject({ action: fraudAction, ratio: v.number(), min_clicks: v.number(), window_days: v.number() }),
    refund_rate: v.strictObject({ action: fraudAction, max_percent: v.number(), min_conversions: v.number(), window_days: v.number() }),
    velocity: v.strictObject({
      action: fraudAction,
      multiple: v.number(),
      min_conversions: v.number(),
      mean_days: v.number(),
      history_days: v.number(),
    }),
  }),
  v.description('Every rule with its action (`off`, `flag`, `hold`) and thresholds.'),
);

const fraudSubjectType = v.picklist(['referral', 'application', 'member']);

export const fraudFlagResponse = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^ff_[0-9a-f]{32}$/)),
  rule: v.picklist(FRAUD_RULES),
  action: v.pipe(v.picklist(['flag', 'hold']), v.description("The rule's action when it fired.")),
  status: v.pipe(
    v.picklist(FRAUD_FLAG_STATUSES),
    v.description('open -> released, voided or reviewed (by an operator; a hold never releases by itself).'),
  ),
  subject_type: fraudSubjectType,
  subject_id: v.pipe(v.string(), v.description('The referral, application or member flagged.')),
  member_id: v.pipe(v.nullable(entityId), v.description('The member concerned (null for an applicant not approved).')),
  detail: v.pipe(v.string(), v.description('What the rule found, in words.')),
  evidence: v.strictObject({
    referral_ids: v.optional(v.array(entityId)),
    application_ids: v.optional(v.array(v.string())),
    figures: v.optional(v.record(v.string(), v.number())),
  }),
  held_reward_ids: v.pipe(v.array(entityId), v.description('The rewards this flag put in `held`.')),
  held_count: v.pipe(v.number(), v.integer(), v.description('How many of them are still held.')),
  created_at: unixSeconds,
  resolved_at: v.nullable(unixSeconds),
  note: v.nullable(v.string()),
});

export const fraudPreviewResponse = v.strictObject({
  rule: v.picklist(FRAUD_RULES),
  action: fraudAction,
  window_days: v.literal(90),
  would_flag: v.pipe(v.number(), v.integer()),
  would_hold: v.pipe(v.number(), v.integer()),
  examples: v.array(
    v.strictObject({
      subject_type: fraudSubjectType,
      subject_id: v.string(),
      member_id: v.nullable(entityId),
      detail: v.string(),
      at: unixSeconds,
    }),
  ),
  partial: v.pipe(v.boolean(), v.description('True when more facts existed than the preview reads.')),
});
