// What the OpenAPI document says about each route of functions/routes.ts, keyed by route name. The
// document (./document.ts) is generated from the route table (methods, paths, auth) plus this metadata
// plus the valibot schemas it names; nothing here repeats a field list. A route without an entry here
// makes the generator throw and test/unit/openapi.test.ts fail, naming the route.
import type * as v from 'valibot';
import { conversionBody } from '../schemas/conversion';
import { createCampaignBody, updateCampaignBody } from '../schemas/campaign';
import { createMemberBody, updateMemberBody } from '../schemas/member';
import { joinApplicationBody, listApplicationsQuery, rejectApplicationBody } from '../schemas/applications';
import {
  listCampaignsQuery,
  listMembersQuery,
  noQuery,
  listPayoutBatchesQuery,
  listPayoutsQuery,
  listReferralsQuery,
  listRewardsQuery,
  listSubscriptionsQuery,
  overviewQuery,
  pageOnlyQuery,
  timeseriesQuery,
  topMembersQuery,
  exportQuery,
} from '../schemas/query';
import { createPayoutBatchBody, markFailedBody, markPaidBody, voidRewardBody } from '../schemas/money';
import { clickBody, jsReferralBody } from '../schemas/js';
import { createReferralBody } from '../schemas/referral';
import { createLinkBody } from '../schemas/links';
import { createWebhookEndpointBody, updateWebhookEndpointBody } from '../schemas/webhook-endpoint';
import {
  createPortalSessionBody,
  openPortalSessionBody,
  portalListQuery,
  portalLoginLinkBody,
  portalLoginSessionBody,
  portalStatsQuery,
  updatePortalMeBody,
} from '../schemas/portal';
import { taxDetailsBody, taxExportQuery } from '../schemas/tax-details';
import { PROVIDER_DEFINITIONS } from '../billing/registry';
import { apiKeyBody, inviteBody, loginLinkBody, providerBody, roleBody, sessionBody, updateAccountBody } from '../schemas/team';
import { payoutRailBody } from '../schemas/payout-rails';
import { DEFAULT_FRAUD_SETTINGS } from '../domain/fraud';
import { fraudPreviewBody, fraudRulesBody, listFraudFlagsQuery, resolveFraudFlagBody } from '../schemas/fraud';
import type { ComponentName } from './components';
import { DIAGNOSIS_EXAMPLE, DIAGNOSIS_SCHEMA } from './diagnosis';
import { diagnosisQuery } from '../schemas/diagnosis';
import {
  BATCH_ID,
  PAYOUT_ID,
  CAMPAIGN_ID,
  COMPONENT_EXAMPLES,
  CONVERTED_REFERRAL,
  NEW_REFERRAL,
  PADDLE_ALERT_EXAMPLE,
  PROVIDER_BODY_EXAMPLE,
  PAYOUT_RAIL_BODY_EXAMPLE,
  REFERRAL_ID,
  SUBSCRIPTION_ID,
  USER_IDENTIFIER,
} from './examples';

/** A response body: a component, a page (pagination envelope) of a component, or a literal JSON Schema. */
export type BodyRef = { component: ComponentName } | { page: ComponentName } | { json: Record<string, unknown>; contentType?: string };

export interface OperationDoc {
  tag: string;
  summary: string;
  /** Required: Spectral's operation-description rule, and a reader of /docs, want one on every operation. */
  description: string;
  /** Descriptions of the path's `{name}` parameters. */
  params?: Record<string, string>;
  /** A list's query (./document.ts lists its entries as parameters); lists refuse any other parameter with a 400. */
  query?:
    | v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>
    | v.StrictObjectSchema<v.ObjectEntries, v.ErrorMessage<v.StrictObjectIssue> | undefined>;
  body?: v.GenericSchema;
  /** The request's media type; JSON by default. */
  bodyType?: 'application/json' | 'application/x-www-form-urlencoded' | 'provider-event';
  success: {
    status: number;
    description: string;
    body?: BodyRef;
    headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
  };
  /** Error statuses beyond the ones every operation of its kind has (see document.ts). */
  errors?: number[];
  /**
   * Examples (the generator refuses an operation with a body and no request example, or a literal
   * response body without one): `response` overrides the component's example (./examples.ts),
   * `errors` the generic one of a status.
   */
  examples?: { request?: unknown; formRequest?: unknown; response?: unknown; errors?: Record<number, unknown> };
}

const campaignExample = COMPONENT_EXAMPLES.Campaign as Record<string, unknown>;
const memberExample = COMPONENT_EXAMPLES.Member as Record<string, unknown>;
const endpointExample = COMPONENT_EXAMPLES.WebhookEndpoint as Record<string, unknown>;
const referralRequest = { user_identifier: USER_IDENTIFIER, member_code: 'ALICE2026' };
const conversionRequest = { subscription_id: SUBSCRIPTION_ID };

/** The document's tags, in the order /docs shows them. A tag used by an operation and missing here fails the generator. */
export const TAGS: Record<string, string> = {
  Referrals: 'A referred user, who referred them, and what the referral earned.',
  Campaigns: "Reward rules: credit for the referrer, commission, thresholds, and the referred user's discount.",
  Members: 'The people who refer: their code, their campaign, their subscription and their stats.',
  Subscriptions: "The service's copies of the payment provider's subscriptions.",
  Webhooks: "Endpoints that receive Refloop's events, and their deliveries.",
  Rewards: 'Every reward across referrals, and its lifecycle: pending, approved, paid, applied, voided, and held (by a fraud rule).',
  Reports: 'What the programme did over time: clicks, referrals, conversions, revenue, rewards and payouts.',
  Payouts: 'What members are owed, batches with their PayPal / Wise / CSV files, and marking them paid.',
  Browser: 'The browser script and the public endpoints it calls with the publishable key.',
  Dashboard:
    'Login by emailed link, sessions, the team and its roles, API keys and the account settings (docs/dashboard.md). The team, API keys and the provider connection need a dashboard session: an API key cannot change them.',
  'Member portal':
    'A page where a member sees their link, terms, referrals, rewards and payouts, embeddable in your app (`/js/refloop-embed.js`). Your backend asks for a single-use portal URL with the API key; the portal then calls /portal/v1/ with a 60-minute portal session of that member only.',
  'Provider webhooks': "Alerts and events from the account's payment provider.",
  'Payout rail webhooks': "Events from the account's payout rails (PayPal Payouts, Stripe Connect, Wise): what became of each payout.",
  Documentation: 'This document and its rendering.',
  Operations: 'Checks for load balancers and monitoring.',
  Fraud:
    'Fraud rules that explain themselves (self-referral, one network, disposable email, click spam, refund rate, velocity), each `off`, `flag` or `hold`; held rewards; and the review queue of what they found (docs/fraud.md).',
  Applications:
    "Affiliate programmes: a campaign's public page, the form's endpoint and its email confirmation (no credential), and the operator's list and decisions. Approving creates the member.",
};

const PAGINATION =
  'Newest first. `count` is the exact total; follow `next` / `previous` (absolute URLs, null at either end). A query parameter the list does not take answers 400, keyed by that parameter.';

const SESSION_ONLY =
  'Dashboard session of an owner only (the `refloop_session` cookie, with an `Origin` of this site on writes); an API key is refused with 403.';
const LINK_TOKEN = 'Zk3v9QyL3rT8aB1nK7eW4hZ6uF0dX2m9cJ5pV8sW1aB';

export const OPERATIONS: Record<string, OperationDoc> = {
  CreateLoginLink: {
    tag: 'Dashboard',
    summary: 'Email a login link',
    description:
      'Always 202 with the same body, whatever the address (no account enumeration). An address in a team gets a link per team, valid once for 15 minutes (`/app/login#token=...`). Rate limited per address and per IP.',
    body: loginLinkBody,
    success: {
      status: 202,
      description: 'Accepted.',
      body: { json: { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] } },
    },
    errors: [429],
    examples: {
      request: { email: 'dana@acme.example' },
      response: { detail: 'If this address belongs to a team, a login link is on its way. It works once, for 15 minutes.' },
    },
  },
  CreateSession: {
    tag: 'Dashboard',
    summary: 'Open a dashboard session',
    description:
      "Trades a login link's token for the `refloop_session` cookie (HttpOnly, SameSite=Strict, Secure except on loopback http; 12 hours after its last use). A used, expired or unknown token answers 401. Rate limited per IP.",
    body: sessionBody,
    success: {
      status: 201,
      description: 'The session; the cookie is set.',
      body: { component: 'Session' },
      headers: {
        'Set-Cookie': { description: '`refloop_session=<token>; Path=/; HttpOnly; SameSite=Strict; Secure`', schema: { type: 'string' } },
      },
    },
    errors: [401, 429],
    examples: { request: { token: LINK_TOKEN } },
  },
  GetCurrentSession: {
    tag: 'Dashboard',
    summary: 'The current session',
    description: 'Who is logged in, to which account, with which role (401 without a session).',
    success: { status: 200, description: 'The session.', body: { component: 'Session' } },
    errors: [401],
  },
  EndCurrentSession: {
    tag: 'Dashboard',
    summary: 'Log out',
    description: 'Ends the session and clears the cookie; 204 also without one. A cross-site request is refused (403).',
    success: { status: 204, description: 'Logged out.' },
    errors: [403],
  },
  ListTeam: {
    tag: 'Dashboard',
    summary: 'List the team',
    description: `Everyone who can log in, with their role: owner (everything), admin (everything but the team and API keys), finance (read; approve and void rewards; payouts), viewer (read only). ${SESSION_ONLY}`,
    query: noQuery,
    success: { status: 200, description: 'The team (one page).', body: { page: 'TeamMember' } },
    errors: [403],
  },
  InviteTeamMember: {
    tag: 'Dashboard',
    summary: 'Invite someone',
    description: `Adds the address with a role and emails it a login link. ${SESSION_ONLY}`,
    body: inviteBody,
    success: { status: 201, description: 'The new team member.', body: { component: 'TeamMember' } },
    errors: [403],
    examples: { request: { email: 'sam@acme.example', role: 'finance' } },
  },
  UpdateTeamMember: {
    tag: 'Dashboard',
    summary: "Change someone's role",
    description: `Their open sessions get the new role at once. The last owner cannot be demoted (400). ${SESSION_ONLY}`,
    params: { id: 'Team member id.' },
    body: roleBody,
    success: { status: 200, description: 'The team member.', body: { component: 'TeamMember' } },
    errors: [403, 404],
    examples: { request: { role: 'viewer' } },
  },
  RemoveTeamMember: {
    tag: 'Dashboard',
    summary: 'Remove someone',
    description: `Removes them and ends their sessions. The last owner cannot be removed (409). ${SESSION_ONLY}`,
    params: { id: 'Team member id.' },
    success: { status: 204, description: 'Removed.' },
    errors: [403, 404],
  },
  ListApiKeys: {
    tag: 'Dashboard',
    summary: 'List API keys',
    description: `The account's secret keys: name, prefix, created and revoked times (never a key). ${SESSION_ONLY}`,
    query: noQuery,
    success: { status: 200, description: 'The keys (one page).', body: { page: 'ApiKey' } },
    errors: [403],
  },
  CreateApiKey: {
    tag: 'Dashboard',
    summary: 'Create an API key',
    description: `The answer carries the key, shown only this once. ${SESSION_ONLY}`,
    body: apiKeyBody,
    success: { status: 201, description: 'The key and its secret.', body: { component: 'CreatedApiKey' } },
    errors: [403],
    examples: { request: { name: 'Production backend' } },
  },
  RevokeApiKey: {
    tag: 'Dashboard',
    summary: 'Revoke an API key',
    description: `The key stops working at once (a warm container may accept it for up to 60 s). ${SESSION_ONLY}`,
    params: { id: 'API key id.' },
    success: { status: 204, description: 'Revoked.' },
    errors: [403, 404],
  },
  GetAccount: {
    tag: 'Dashboard',
    summary: 'Account settings',
    description:
      "Plan, publishable key and its script tag, email sender, embed origins, browser referral mode and the provider connection's public part (never a secret).",
    success: { status: 200, description: 'The settings.', body: { component: 'Account' } },
  },
  UpdateAccount: {
    tag: 'Dashboard',
    summary: 'Change account settings',
    description:
      "Name, email sender (null for the default), embed origins (who may frame the member portal), the referral URL members' links point to, and the browser referral mode. Owner or admin.",
    body: updateAccountBody,
    success: { status: 200, description: 'The settings.', body: { component: 'Account' } },
    errors: [403],
    examples: { request: { embed_origins: ['https://app.acme.example'], email_sender: { address: 'rewards@acme.example', name: 'Acme' } } },
  },
  SetProviderConnection: {
    tag: 'Dashboard',
    summary: 'Connect the payment provider',
    description:
      "`kind` picks the fields: GET /v1/account/ lists every provider's in `provider_options` (Paddle Classic `vendor_id`, `auth_code`, `public_key` (PEM); Paddle Billing `api_key`, `webhook_secret`; Stripe `secret_key` (a restricted key), `webhook_secret`). Secrets are stored in their own items and never shown again. Switching kind while subscriptions are mirrored answers 409. Dashboard session of an owner or admin only; an API key is refused with 403.",
    body: providerBody,
    success: {
      status: 200,
      description: "The connection's public part and the webhook URL to give the provider.",
      body: { component: 'ProviderConnection' },
    },
    errors: [403, 409],
    examples: { request: PROVIDER_BODY_EXAMPLE },
  },
  ListPayoutRails: {
    tag: 'Dashboard',
    summary: 'List the payout rails',
    description:
      "The account's connected payout rails (PayPal Payouts, Stripe Connect, Wise): each one's public part and the webhook path to register at the rail, never a secret; and every rail's connection form in `rail_options`. Dashboard session of an owner or admin only; an API key is refused with 403.",
    query: noQuery,
    success: { status: 200, description: 'The connected rails and the forms.', body: { component: 'PayoutRails' } },
    errors: [403],
  },
  SetPayoutRail: {
    tag: 'Dashboard',
    summary: 'Connect a payout rail',
    description:
      '`kind` is `paypal` (`client_id`, `client_secret`, `webhook_id`), `stripe` (`secret_key`, `webhook_secret`, `connect_webhook_secret`) or `wise` (`api_token`, `profile_id`, `webhook_public_key` (PEM)); every rail takes an optional `api_url` (its production API by default, or its sandbox; other URLs only where emulators are allowed). The credentials are checked at the rail first: refused or unreachable answers 400 on the field concerned (or `detail`) and stores nothing. Secrets are stored encrypted in their own items and never shown again; replacing a connection replaces it whole. Dashboard session of an owner or admin only; an API key is refused with 403. An unknown kind is a 404.',
    params: { kind: '`paypal`, `stripe` or `wise`.' },
    body: payoutRailBody,
    success: {
      status: 200,
      description: "The connection's public part and the webhook path(s) to register at the rail.",
      body: { component: 'PayoutRail' },
    },
    errors: [403, 404],
    examples: { request: PAYOUT_RAIL_BODY_EXAMPLE },
  },
  DeletePayoutRail: {
    tag: 'Dashboard',
    summary: 'Disconnect a payout rail',
    description:
      'Removes the connection and its secrets (a rail that was not connected answers the same). Dashboard session of an owner or admin only; an API key is refused with 403. An unknown kind is a 404.',
    params: { kind: '`paypal`, `stripe` or `wise`.' },
    success: { status: 204, description: 'Disconnected.' },
    errors: [403, 404],
  },

  ListReferrals: {
    tag: 'Referrals',
    summary: 'List referrals',
    description: `Filter by \`member\`, and with it by \`sub\` (the referrals made through one of the member's sub-ids, exact count); \`search\` finds the referral of one referred user by its exact \`user_identifier\` (0 or 1 result). ${PAGINATION}`,
    query: listReferralsQuery,
    success: { status: 200, description: 'A page of referrals.', body: { page: 'Referral' } },
  },
  CreateReferral: {
    tag: 'Referrals',
    summary: 'Create a referral',
    description:
      "Idempotent on the pair: the same `user_identifier` and `member_code` again returns the existing referral (200, nothing created). `sub` records the sub-id (a named link's slug) the user came through. Emits `referral.created`.",
    body: createReferralBody,
    success: { status: 200, description: 'The referral (new or existing).', body: { component: 'Referral' } },
    examples: { request: referralRequest, response: NEW_REFERRAL },
  },
  GetReferral: {
    tag: 'Referrals',
    summary: 'Retrieve a referral',
    description:
      "The referral with its subscription snapshot, its stats and every reward (clawbacks included), in one read. Another account's id answers 404.",
    params: { id: 'Referral id.' },
    success: { status: 200, description: 'The referral with its rewards.', body: { component: 'Referral' } },
    errors: [404],
  },
  ConvertReferral: {
    tag: 'Referrals',
    summary: 'Record a conversion',
    description:
      "The specification's path (also served under `/v1/`). Give `checkout_id` or `subscription_id`. Rewards are created asynchronously. Emits `referral.converted`. 409 while the checkout is still processing; 503 with `Retry-After` when the provider cannot be reached.",
    params: { id: 'Referral id.' },
    body: conversionBody,
    success: { status: 200, description: 'The converted referral.', body: { component: 'Referral' } },
    errors: [404],
    examples: { request: conversionRequest, response: CONVERTED_REFERRAL },
  },
  ConvertReferralV1: {
    tag: 'Referrals',
    summary: 'Record a conversion (/v1/ alias)',
    description: 'Same as `POST /referrals/{id}/conversion/`.',
    params: { id: 'Referral id.' },
    body: conversionBody,
    success: { status: 200, description: 'The converted referral.', body: { component: 'Referral' } },
    errors: [404],
    examples: { request: conversionRequest, response: CONVERTED_REFERRAL },
  },
  DeleteReferral: {
    tag: 'Referrals',
    summary: 'Delete a referral',
    description: 'The user can be referred again.',
    params: { id: 'Referral id.' },
    success: { status: 204, description: 'Deleted.' },
    errors: [404],
  },
  DiagnoseReferral: {
    tag: 'Referrals',
    summary: 'Why a referral did not convert',
    description:
      "The provider subscriptions and checkouts seen in the last 90 days that did not convert this referral, and why: those of the referred user's email (`email`, else the referral's `user_identifier` when it is an email address; compared without case) and those whose checkout named this referral but were refused. Convert one with `POST /v1/referrals/{id}/conversion/`. Another account's id answers 404.",
    params: { id: 'Referral id.' },
    query: diagnosisQuery,
    success: {
      status: 200,
      description: 'The referral and its unattributed sightings.',
      body: { json: DIAGNOSIS_SCHEMA as unknown as Record<string, unknown> },
    },
    errors: [404],
    examples: { response: DIAGNOSIS_EXAMPLE },
  },
  GetReferralByUser: {
    tag: 'Referrals',
    summary: "Retrieve a referred user's referral",
    description: "Looks a referral up by the application's id of the referred user (one referral per user).",
    params: { user_identifier: "The application's id of the referred user, URL-encoded." },
    success: { status: 200, description: 'The referral.', body: { component: 'Referral' } },
    errors: [404],
  },

  ListCampaigns: {
    tag: 'Campaigns',
    summary: 'List campaigns',
    description: PAGINATION,
    query: listCampaignsQuery,
    success: { status: 200, description: 'A page of campaigns.', body: { page: 'Campaign' } },
  },
  CreateCampaign: {
    tag: 'Campaigns',
    summary: 'Create a campaign',
    description: "403 when the account's plan allows no more campaigns.",
    body: createCampaignBody,
    success: { status: 201, description: 'The campaign.', body: { component: 'Campaign' } },
    errors: [403],
    examples: {
      request: { name: 'Friends', allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' },
      errors: { 403: { detail: 'The Starter plan allows 1 campaign(s); upgrade to add more.' } },
    },
  },
  GetCampaign: {
    tag: 'Campaigns',
    summary: 'Retrieve a campaign',
    description: "The campaign's reward settings.",
    params: { id: 'Campaign id.' },
    success: { status: 200, description: 'The campaign.', body: { component: 'Campaign' } },
    errors: [404],
  },
  UpdateCampaign: {
    tag: 'Campaigns',
    summary: 'Update a campaign',
    description: 'Changes any subset of the fields.',
    params: { id: 'Campaign id.' },
    body: updateCampaignBody,
    success: { status: 200, description: 'The campaign.', body: { component: 'Campaign' } },
    errors: [404],
    examples: { request: { reward_threshold: '10.00' }, response: { ...campaignExample, reward_threshold: '10.00' } },
  },
  DeleteCampaign: {
    tag: 'Campaigns',
    summary: 'Delete a campaign',
    description: 'Its members end up with `campaign: null`.',
    params: { id: 'Campaign id.' },
    success: { status: 204, description: 'Deleted.' },
    errors: [404],
  },

  ListMembers: {
    tag: 'Members',
    summary: 'List members',
    description: `Filter by \`campaign\`; \`search\` finds members by exact email or code (any case) or identifier (as typed or in lower case), never a substring. ${PAGINATION}`,
    query: listMembersQuery,
    success: { status: 200, description: 'A page of members.', body: { page: 'Member' } },
  },
  CreateMember: {
    tag: 'Members',
    summary: 'Create a member',
    description: 'The code is generated when absent. Emits `member.created`.',
    body: createMemberBody,
    success: { status: 201, description: 'The member.', body: { component: 'Member' } },
    examples: {
      request: { identifier: 'alice', email: 'alice@example.com', first_name: 'Alice', code: 'ALICE2026', campaign: { id: CAMPAIGN_ID } },
      response: {
        ...memberExample,
        stats: {
          link_clicks: 0,
          referrals: 0,
          conversions: 0,
          credit_earned: '0.00',
          commission_earned: '0.00',
          commission_pending: '0.00',
          commission_approved: '0.00',
          commission_held: '0.00',
          commission_paid: '0.00',
          currency: 'USD',
        },
        link_clicks: 0,
        subscription: null,
      },
    },
  },
  GetMember: {
    tag: 'Members',
    summary: 'Retrieve a member',
    description: 'The member with their campaign, their attached subscription and their stats.',
    params: { id: 'Member id.' },
    success: { status: 200, description: 'The member with its campaign and subscription.', body: { component: 'Member' } },
    errors: [404],
  },
  UpdateMember: {
    tag: 'Members',
    summary: 'Update a member',
    description:
      "Changes any subset of the fields. Attaching a subscription applies the member's pending credits to it. `payout_method` takes only a rail the account has connected (`GET /v1/account/payout-rails/`) or null, else 400; `payout_method_ready` and `payout_method_reason` are read-only.",
    params: { id: 'Member id.' },
    body: updateMemberBody,
    success: { status: 200, description: 'The member.', body: { component: 'Member' } },
    errors: [404],
    examples: { request: { subscription: { id: 70001 } } },
  },
  DeleteMember: {
    tag: 'Members',
    summary: 'Delete a member',
    description: 'Their referrals stay.',
    params: { id: 'Member id.' },
    success: { status: 204, description: 'Deleted.' },
    errors: [404],
  },

  ListMemberLinks: {
    tag: 'Members',
    summary: "List a member's named links",
    description: `The member's named links, newest first. The default link (\`referral_url?via=<code>\`) is not one of them. ${PAGINATION}`,
    params: { id: 'Member id.' },
    query: pageOnlyQuery,
    success: { status: 200, description: 'A page of links.', body: { page: 'MemberLink' } },
    errors: [404],
  },
  CreateMemberLink: {
    tag: 'Members',
    summary: 'Create a named link',
    description:
      "A link with a sub-id: `url` is the origin of the account's `referral_url` plus `destination_path` (or `referral_url` itself without one) with `via=<code>&sub=<slug>`; null while the account has no `referral_url`. A link without a slug gets a generated one. At most 20 per member; a slug the member already has is a 400 on `slug`. Clicks, referrals and conversions through it carry `sub`.",
    params: { id: 'Member id.' },
    body: createLinkBody,
    success: { status: 201, description: 'The link.', body: { component: 'MemberLink' } },
    errors: [404],
    examples: { request: { slug: 'youtube', destination_path: '/pricing' } },
  },
  DeleteMemberLink: {
    tag: 'Members',
    summary: 'Delete a named link',
    description: 'The clicks, referrals and conversions made through it keep their `sub`.',
    params: { id: 'Member id.', slug: "The link's slug." },
    success: { status: 204, description: 'Deleted.' },
    errors: [404],
  },

  ListSubscriptions: {
    tag: 'Subscriptions',
    summary: 'List subscriptions',
    description: PAGINATION,
    query: listSubscriptionsQuery,
    success: { status: 200, description: 'A page of subscriptions.', body: { page: 'Subscription' } },
  },
  GetSubscription: {
    tag: 'Subscriptions',
    summary: 'Retrieve a subscription',
    description: "The service's copy of a provider subscription, kept in sync by the provider's alerts and the background sync.",
    params: { id: 'Provider subscription id.' },
    success: { status: 200, description: 'The subscription.', body: { component: 'Subscription' } },
    errors: [404],
  },

  ListWebhookEndpoints: {
    tag: 'Webhooks',
    summary: 'List webhook endpoints',
    description: PAGINATION,
    query: pageOnlyQuery,
    success: { status: 200, description: 'A page of endpoints.', body: { page: 'WebhookEndpoint' } },
  },
  CreateWebhookEndpoint: {
    tag: 'Webhooks',
    summary: 'Register a webhook endpoint',
    description:
      'The answer carries the signing secret, shown only this once. `events` defaults to every event type. At most 10 endpoints per account.',
    body: createWebhookEndpointBody,
    success: { status: 201, description: 'The endpoint and its signing secret.', body: { component: 'CreatedWebhookEndpoint' } },
    examples: {
      request: {
        url: 'https://app.example.com/hooks/refloop',
        events: ['referral.converted', 'reward.created'],
        description: 'Rewards to our billing service',
      },
    },
  },
  GetWebhookEndpoint: {
    tag: 'Webhooks',
    summary: 'Retrieve a webhook endpoint',
    description: 'The endpoint and its failure state; the signing secret is never shown again after the create.',
    params: { id: 'Endpoint id.' },
    success: { status: 200, description: 'The endpoint (never its secret).', body: { component: 'WebhookEndpoint' } },
    errors: [404],
  },
  UpdateWebhookEndpoint: {
    tag: 'Webhooks',
    summary: 'Update a webhook endpoint',
    description: 'Setting `enabled: true` re-enables an endpoint the service disabled and clears its failure state.',
    params: { id: 'Endpoint id.' },
    body: updateWebhookEndpointBody,
    success: { status: 200, description: 'The endpoint.', body: { component: 'WebhookEndpoint' } },
    errors: [404],
    examples: { request: { enabled: false }, response: { ...endpointExample, enabled: false } },
  },
  DeleteWebhookEndpoint: {
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint',
    description: 'Stops deliveries at once; its pending deliveries are cancelled.',
    params: { id: 'Endpoint id.' },
    success: { status: 204, description: 'Deleted; pending deliveries are cancelled.' },
    errors: [404],
  },
  ListWebhookDeliveries: {
    tag: 'Webhooks',
    summary: "List an endpoint's deliveries",
    description: `Each delivery with its attempts (status code, duration, error) and next retry. ${PAGINATION}`,
    params: { id: 'Endpoint id.' },
    query: pageOnlyQuery,
    success: { status: 200, description: 'A page of deliveries.', body: { page: 'WebhookDelivery' } },
    errors: [404],
  },

  ListRewards: {
    tag: 'Rewards',
    summary: 'List rewards',
    description: `Every reward (credits, commissions and their clawbacks) with its lifecycle. Filter by \`member\` or \`campaign\`, each combined with \`type\` and \`status\` as you like (member and campaign together: 400); \`count\` stays exact for every combination. ${PAGINATION}`,
    query: listRewardsQuery,
    success: { status: 200, description: 'A page of rewards.', body: { page: 'LedgerReward' } },
  },
  GetReward: {
    tag: 'Rewards',
    summary: 'Retrieve a reward',
    description: 'A reward with its lifecycle (status, approves_at, payout) and the referral, member and campaign it belongs to.',
    params: { id: 'Reward id.' },
    success: { status: 200, description: 'The reward.', body: { component: 'LedgerReward' } },
    errors: [404],
  },
  ApproveReward: {
    tag: 'Rewards',
    summary: 'Approve a commission',
    description:
      'A pending commission (and its pending clawbacks) becomes approved and joins its member\'s payout: the way a campaign with `approval: "manual"` approves, or an early approval before the hold ends. An approved or paid one answers as it is; a voided one 409; a credit or a clawback 400. Emits `reward.approved`.',
    params: { id: 'Reward id.' },
    success: { status: 200, description: 'The approved reward.', body: { component: 'LedgerReward' } },
    errors: [404, 409],
  },
  VoidReward: {
    tag: 'Rewards',
    summary: 'Void a reward',
    description:
      'An unpaid reward (and its clawbacks) is voided with a reason and leaves its payout. A voided one answers as it is; a paid one, or one whose payout is being paid, answers 409 (a refund after payment creates a clawback instead). Emits `reward.voided`.',
    params: { id: 'Reward id.' },
    body: voidRewardBody,
    success: { status: 200, description: 'The voided reward.', body: { component: 'LedgerReward' } },
    errors: [404, 409],
    examples: {
      request: { reason: 'fraud' },
      response: {
        ...(COMPONENT_EXAMPLES.LedgerReward as Record<string, unknown>),
        status: 'voided',
        voided_at: 1767225600,
        void_reason: 'fraud',
        payout_id: null,
      },
    },
  },
  ReportTimeseries: {
    tag: 'Reports',
    summary: 'A metric over time',
    description:
      "Every bucket of the range (zeros included), for the account, one campaign, one member, or one member's sub-id (`member` and `sub`: counts only). Counts for `link_clicks`, `referrals`, `conversions`; money per currency for `revenue` and `refunds` (payments of referred users), `credit_earned`, `commission_earned` and `commission_paid`. Exact with no lag: the buckets change in the transactions that change what they count. A 90-day daily chart is one Query. 400 for a range over 400 days.",
    query: timeseriesQuery,
    success: { status: 200, description: 'The series.', body: { component: 'ReportTimeseries' } },
  },
  ReportOverview: {
    tag: 'Reports',
    summary: 'Totals against the previous period',
    description: 'Every metric over the range and over the period of the same length just before it (one Query).',
    query: overviewQuery,
    success: { status: 200, description: 'The totals.', body: { component: 'ReportOverview' } },
  },
  ReportMembers: {
    tag: 'Reports',
    summary: 'Top members',
    description:
      'Members ranked by conversions, by revenue of their referred users, or by commission earned (in `currency`, default the one with the largest total). The ranking counts whole UTC months: the months the range touches.',
    query: topMembersQuery,
    success: { status: 200, description: 'The ranking.', body: { component: 'ReportMembers' } },
  },
  ExportCsv: {
    tag: 'Reports',
    summary: 'Export a list as CSV',
    description:
      '`members.csv`, `referrals.csv`, `rewards.csv`, `payouts.csv`, `payout-batches.csv` or `subscriptions.csv`, newest first, with the list\'s filters. Paged so that any size exports in bounded time and memory: at most `page_size` rows (default and maximum 10,000) per response, the header row on the first page only, and `Link: <…>; rel="next"` while rows remain. Money as decimal strings beside a currency column; times ISO 8601 UTC; text that a spreadsheet would run as a formula is prefixed with `\'`.',
    params: { file: 'members.csv, referrals.csv, rewards.csv, payouts.csv, payout-batches.csv or subscriptions.csv.' },
    query: exportQuery,
    success: { status: 200, description: 'A page of the CSV.', body: { json: { type: 'string' }, contentType: 'text/csv' } },
    errors: [404],
    examples: {
      response:
        'id,type,status,amount,currency,referral_id,member_id,campaign_id,payment_id,reverses,created_at,approves_at,approved_at,paid_at,voided_at,void_reason,payout_id\r\n0190a1c3d4e57f6a8b9c0d1e2f3a4b5c,commission,approved,12.50,USD,0190a1b9f2c37d4e8a5b6c7d8e9f0a1b,0190a1b2c3d47e5f8a9b0c1d2e3f4a5b,a1b2c3d4,80002,,2026-01-03T00:01:00Z,2026-02-02T00:01:00Z,2026-02-02T00:02:00Z,,,,po_0190a1d2e3f47a8b9c0d1e2f3a4b5c6d\r\n',
    },
  },
  ExportTaxDetails: {
    tag: 'Reports',
    summary: "Export members' tax details as CSV",
    description:
      'The tax details members gave in the portal (when the account sets `tax_details_required`), decrypted: one row per member, with the W-9 or W-8BEN fields. Only an owner\'s or a finance member\'s dashboard session may download it: an admin, a viewer and an API key get 403. Paged like the other exports (at most `page_size` rows, default and maximum 1,000; the header row on the first page; `Link: <…>; rel="next"` while rows remain).',
    query: taxExportQuery,
    success: { status: 200, description: 'A page of the CSV.', body: { json: { type: 'string' }, contentType: 'text/csv' } },
    errors: [403],
    examples: {
      response:
        'member_id,form,legal_name,country,address,tin,w9_certified,w8ben_name,w8ben_country_of_citizenship,w8ben_permanent_address,w8ben_foreign_tin,w8ben_date_of_birth,w8ben_treaty_country,w8ben_certified,updated_at\r\n0190a1b2c3d47e5f8a9b0c1d2e3f4a5b,w9,Alice Smith,US,"1 Main St, Springfield",123456789,true,,,,,,,,2026-01-03T00:01:00Z\r\n',
    },
  },
  ListPayouts: {
    tag: 'Payouts',
    summary: 'List payouts',
    description: `Filter by \`status\` and by \`member\` or \`currency\`. ${PAGINATION}`,
    query: listPayoutsQuery,
    success: { status: 200, description: 'A page of payouts.', body: { page: 'Payout' } },
  },
  ListEmailTemplates: {
    tag: 'Dashboard',
    summary: 'Preview the emails to affiliates',
    description:
      "Every email the service sends to affiliates and applicants, rendered with sample data and the account's sender and programme name: its subject, plain text and HTML. `transactional` emails (login and confirmation links, answers to an application) carry no unsubscribe link; the others carry a one-click unsubscribe (RFC 8058). Read-only.",
    success: {
      status: 200,
      description: 'The templates, in the order the dashboard shows them.',
      body: {
        json: {
          type: 'object',
          properties: {
            results: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  name: { type: 'string', description: 'The template (e.g. `application-approved`).' },
                  label: { type: 'string' },
                  transactional: { type: 'boolean', description: 'No unsubscribe link; cannot be turned off.' },
                  subject: { type: 'string' },
                  text: { type: 'string' },
                  html: { type: 'string', description: 'A whole HTML document; show it in a sandboxed frame.' },
                },
                required: ['name', 'label', 'transactional', 'subject', 'text', 'html'],
              },
            },
          },
          required: ['results'],
        },
      },
    },
    examples: {
      response: {
        results: [
          {
            name: 'payout-sent',
            label: 'Payout sent',
            transactional: false,
            subject: 'Your payout of 125.50 USD is on its way',
            text: 'Hi Alex,\n\nWe have sent you 125.50 USD, to alex@example.com.\n…',
            html: '<!doctype html>\n<html>…</html>\n',
          },
        ],
      },
    },
  },
  PayoutSummary: {
    tag: 'Payouts',
    summary: 'What is owed',
    description:
      "Per currency: the total due, still open (below the campaign's minimum payout or without a payout email), in processing, and paid. Exact, from counters.",
    success: { status: 200, description: 'The totals.', body: { component: 'PayoutSummary' } },
  },
  GetPayout: {
    tag: 'Payouts',
    summary: 'Retrieve a payout',
    description: 'The payout with the ids of its rewards.',
    params: { id: 'Payout id (po_…).' },
    success: { status: 200, description: 'The payout.', body: { component: 'PayoutDetail' } },
    errors: [404],
  },
  MarkPayoutPaid: {
    tag: 'Payouts',
    summary: 'Mark a payout paid',
    description:
      'A due or processing payout was paid: it and its rewards become paid. A paid one answers as it is. Emits `payout.paid` and `reward.paid`, and emails the member (once per payout; unless they opted out).',
    params: { id: 'Payout id (po_…).' },
    body: markPaidBody,
    success: { status: 200, description: 'The paid payout.', body: { component: 'PayoutDetail' } },
    errors: [404, 409],
    examples: {
      request: { reference: 'WISE-2026-11-30' },
      response: {
        ...(COMPONENT_EXAMPLES.PayoutDetail as Record<string, unknown>),
        status: 'paid',
        paid_at: 1767225600,
        reference: 'WISE-2026-11-30',
      },
    },
  },
  MarkPayoutFailed: {
    tag: 'Payouts',
    summary: 'Mark a payout failed',
    description:
      "A processing payout could not be paid: its rewards return to approved and join the member's next payout. Emits `payout.failed`.",
    params: { id: 'Payout id (po_…).' },
    body: markFailedBody,
    success: { status: 200, description: 'The failed payout.', body: { component: 'PayoutDetail' } },
    errors: [404, 409],
    examples: {
      request: { reason: 'Recipient email bounced' },
      response: {
        ...(COMPONENT_EXAMPLES.PayoutDetail as Record<string, unknown>),
        status: 'failed',
        failure_reason: 'Recipient email bounced',
        batch_id: BATCH_ID,
      },
    },
  },
  CancelPayout: {
    tag: 'Payouts',
    summary: 'Cancel a payout',
    description:
      "A processing payout taken out of its batch before it was paid: its rewards return to approved and join the member's next payout. A canceled one answers as it is.",
    params: { id: 'Payout id (po_…).' },
    body: markFailedBody,
    success: { status: 200, description: 'The canceled payout.', body: { component: 'PayoutDetail' } },
    errors: [404, 409],
    examples: {
      request: { reason: 'Paid by bank transfer instead' },
      response: {
        ...(COMPONENT_EXAMPLES.PayoutDetail as Record<string, unknown>),
        status: 'canceled',
        failure_reason: 'Paid by bank transfer instead',
        batch_id: BATCH_ID,
      },
    },
  },
  CreatePayoutBatch: {
    tag: 'Payouts',
    summary: 'Create a payout batch',
    description:
      "Takes the due payouts in one currency (every one, up to the format's row limit: PayPal 5,000, Wise 1,000; or the `payout_ids` given) into a batch: they become processing. `rail` `file` (the default) makes a file in `format` (required then), at `file_url`. `rail` `paypal`, `stripe` or `wise` (no `format`) takes only the payouts of members whose payout method is that rail and ready, and sends the batch through the connected rail in the background: each payout emits `payout.sent`, then `payout.paid` or `payout.failed` as the rail reports (409 when the rail is not connected, or a named payout's member is paid otherwise). Honours `Idempotency-Key`; two concurrent batches never share a payout. 409 when nothing is due.",
    body: createPayoutBatchBody,
    success: { status: 201, description: 'The batch.', body: { component: 'PayoutBatch' } },
    errors: [409],
    examples: { request: { format: 'wise', currency: 'USD' } },
  },
  ListPayoutBatches: {
    tag: 'Payouts',
    summary: 'List payout batches',
    description: `Every batch with its amount, status and, once paid, its payment date and reference. Filter by \`status\`. ${PAGINATION}`,
    query: listPayoutBatchesQuery,
    success: { status: 200, description: 'A page of batches.', body: { page: 'PayoutBatch' } },
  },
  GetPayoutBatch: {
    tag: 'Payouts',
    summary: 'Retrieve a payout batch',
    description: 'The batch, its payouts and the link to its file.',
    params: { id: 'Batch id (pb_…).' },
    success: { status: 200, description: 'The batch.', body: { component: 'PayoutBatch' } },
    errors: [404],
  },
  PayoutBatchFile: {
    tag: 'Payouts',
    summary: "Download a batch's file",
    description:
      'PayPal Payouts web upload (no header; recipient, amount, currency, payout id, note, PAYPAL), Wise batch by email (its template header), or a generic CSV with a header. One currency per file.',
    params: { id: 'Batch id (pb_…).' },
    success: { status: 200, description: 'The file.', body: { json: { type: 'string' }, contentType: 'text/csv' } },
    errors: [404],
    examples: {
      response:
        'name,recipientEmail,paymentReference,receiverType,amountCurrency,amount,sourceCurrency,targetCurrency\r\nAlice,alice@example.com,Referral commissions Nov 2026,PERSON,target,62.50,USD,USD\r\n',
    },
  },
  MarkPayoutBatchPaid: {
    tag: 'Payouts',
    summary: 'Mark a batch paid',
    description:
      'Every payout of the batch not marked failed becomes paid, with its rewards. Repeating the call finishes what an interruption left.',
    params: { id: 'Batch id (pb_…).' },
    body: markPaidBody,
    success: { status: 200, description: 'The batch.', body: { component: 'PayoutBatch' } },
    errors: [404],
    examples: {
      request: { paid_at: 1767225600, reference: 'PAYPAL-BATCH-8841' },
      response: {
        ...(COMPONENT_EXAMPLES.PayoutBatch as Record<string, unknown>),
        status: 'paid',
        paid_at: 1767225600,
        reference: 'PAYPAL-BATCH-8841',
      },
    },
  },

  ReconcilePayoutBatch: {
    tag: 'Payouts',
    summary: 'Reconcile a rail batch now',
    description:
      "Queues a reading of the batch back from its rail (PayPal, Stripe or Wise): every payout's state there is recorded as a webhook would have (paid, failed, unclaimed), once. A batch whose send was lost is sent now. The service also does it hourly for every batch still processing. 409 for a file batch or a batch no longer processing. Needs money access.",
    params: { id: 'Batch id (pb_…).' },
    success: {
      status: 202,
      description: 'Queued.',
      body: {
        json: {
          type: 'object',
          properties: { batch_id: { type: 'string', pattern: '^pb_' }, queued: { type: 'boolean', const: true } },
          required: ['batch_id', 'queued'],
          additionalProperties: false,
        },
      },
    },
    errors: [404, 409],
    examples: {
      response: { batch_id: BATCH_ID, queued: true },
      errors: { 409: { detail: 'Only a rail batch still processing can be reconciled; this one is a file batch.' } },
    },
  },
  ResendPayout: {
    tag: 'Payouts',
    summary: 'Re-send an unclaimed PayPal payout',
    description:
      "For a PayPal payout still processing with `rail_status` `UNCLAIMED` (the address has no PayPal account), after the member's payout email was corrected: queues the cancel of the unclaimed item at PayPal and a new send of the same payout to the member's current email. Nothing is paid twice: the canceled item returns to the sender. 409 for any other payout. Needs money access.",
    params: { id: 'Payout id (po_…).' },
    success: { status: 202, description: 'The payout (the re-send is queued).', body: { component: 'PayoutDetail' } },
    errors: [404, 409],
    examples: {
      response: {
        ...(COMPONENT_EXAMPLES.PayoutDetail as Record<string, unknown>),
        status: 'processing',
        rail: 'paypal',
        rail_status: 'UNCLAIMED',
      },
      errors: { 409: { detail: 'Only a processing PayPal payout that is unclaimed can be re-sent.' } },
    },
  },

  PaypalRailWebhook: {
    tag: 'Payout rail webhooks',
    summary: 'PayPal Payouts webhook intake',
    description:
      "Give PayPal this URL for the app's webhook (`PAYMENT.PAYOUTS-ITEM.*` events). No API key: PayPal's signature (SHA256withRSA over the transmission id, time, the connection's webhook id and the CRC32 of the body, with a certificate from PayPal's own API hosts) is the credential. An account not connected to PayPal: 404; a bad signature or a certificate elsewhere: 403; the certificate's host out of reach (or answering 429 or 5xx): 503 with `Retry-After`, and PayPal delivers the event again; nothing is queued unless it verifies.",
    params: { account_id: 'The Refloop account id.' },
    bodyType: 'application/json',
    success: {
      status: 200,
      description: 'Verified and queued (also for event types the service ignores).',
      body: { component: 'PaddleWebhookAccepted' },
    },
    errors: [400, 403, 404, 413],
    examples: {
      request: {
        id: 'WH-7Y7254563A4550640-11V2185806837105M',
        event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
        resource: { payout_item_id: '8AELMXH8UB2P8', transaction_status: 'SUCCESS', payout_item: { sender_item_id: PAYOUT_ID } },
      },
      errors: { 403: { detail: 'The PayPal signature does not match.' } },
    },
  },
  StripeConnectRailWebhook: {
    tag: 'Payout rail webhooks',
    summary: 'Stripe Connect webhook intake',
    description:
      "Both Stripe endpoints of the rail point here: the one on your account (`transfer.created`, `transfer.reversed`, signed with the connection's `webhook_secret`) and the one for connected accounts (`account.updated`, signed with its `connect_webhook_secret`). `Stripe-Signature` is checked as Stripe documents it (at most 300 s old). An account not connected to Stripe Connect: 404; a bad signature: 403; nothing is queued unless it verifies.",
    params: { account_id: 'The Refloop account id.' },
    bodyType: 'application/json',
    success: {
      status: 200,
      description: 'Verified and queued (also for event types the service ignores).',
      body: { component: 'PaddleWebhookAccepted' },
    },
    errors: [400, 403, 404, 413],
    examples: {
      request: {
        id: 'evt_1QkR5x2eZvKYlo2C0Qp8xYzT',
        object: 'event',
        type: 'transfer.created',
        livemode: false,
        data: {
          object: {
            id: 'tr_1QkR5x2eZvKYlo2C',
            object: 'transfer',
            amount: 6250,
            currency: 'usd',
            metadata: { refloop_payout_id: PAYOUT_ID },
          },
        },
      },
      errors: { 403: { detail: 'Invalid signature.' } },
    },
  },
  WiseRailWebhook: {
    tag: 'Payout rail webhooks',
    summary: 'Wise webhook intake',
    description:
      "Subscribe this URL to `transfers#state-change` (and `transfers#active-cases`) at Wise. No API key: `X-Signature-SHA256` (RSA SHA-256 over the body with Wise's key, the public part in the connection) is the credential. An account not connected to Wise: 404; a bad signature: 403; nothing is queued unless it verifies.",
    params: { account_id: 'The Refloop account id.' },
    bodyType: 'application/json',
    success: {
      status: 200,
      description: 'Verified and queued (also for event types the service ignores).',
      body: { component: 'PaddleWebhookAccepted' },
    },
    errors: [400, 403, 404, 413],
    examples: {
      request: {
        event_type: 'transfers#state-change',
        schema_version: '2.0.0',
        sent_at: '2026-11-30T12:00:00Z',
        data: {
          resource: { id: 50123456, profile_id: 16123456, type: 'transfer' },
          current_state: 'outgoing_payment_sent',
          previous_state: 'processing',
          occurred_at: '2026-11-30T12:00:00Z',
        },
      },
      errors: { 403: { detail: 'Invalid signature.' } },
    },
  },

  BrowserScript: {
    tag: 'Browser',
    summary: 'The browser tracking script',
    description:
      'Install with one script element in your pages: `src` this URL, `data-key` the publishable key (`rfl_pub_...`), `async`. No authentication; cacheable for an hour (ETag, 304 on `If-None-Match`), gzipped when accepted. See docs/browser.md.',
    success: {
      status: 200,
      description: 'The script (ES2017, no dependencies).',
      body: { json: { type: 'string' }, contentType: 'text/javascript' },
    },
    examples: { response: '/* Refloop browser script */(function(){"use strict";var s=document.currentScript;/* ... */})();' },
  },
  RecordClick: {
    tag: 'Browser',
    summary: "Record a click on a member's link",
    description:
      "Counts once per visitor per 24 hours in the member's `stats.link_clicks`, and with `sub` in the member's sub-id reports too. Any code answers the same (a code that is no member's counts nothing), so codes cannot be probed. The answer carries the account's attribution model and cookie lifetime, which the browser script follows. Publishable key; CORS for any origin; rate limited per IP and per key.",
    body: clickBody,
    success: {
      status: 200,
      description: 'Recorded (or nothing to count).',
      body: {
        json: {
          type: 'object',
          properties: {
            recorded: { type: 'boolean', const: true },
            attribution: {
              type: 'object',
              description: "The account's `attribution_model` and `attribution_days`.",
              properties: {
                model: { type: 'string', enum: ['first_click', 'last_click'] },
                days: { type: 'integer', minimum: 1, maximum: 365 },
              },
              required: ['model', 'days'],
              additionalProperties: false,
            },
          },
          required: ['recorded', 'attribution'],
          additionalProperties: false,
        },
      },
    },
    examples: {
      request: { code: 'ALICE2026', visitor_id: 'v_3kq9XbT1wZ', sub: 'youtube' },
      response: { recorded: true, attribution: { model: 'first_click', days: 60 } },
    },
  },
  RecordClickPreflight: {
    tag: 'Browser',
    summary: 'CORS preflight of the click endpoint',
    description: "The browser's CORS preflight before `POST /js/v1/clicks/`: no authentication, any origin.",
    success: { status: 204, description: 'The CORS headers (any origin; POST; Authorization and Content-Type).' },
  },
  CreateJsReferral: {
    tag: 'Browser',
    summary: 'Create a referral from the browser (`source: "js"`)',
    description:
      "What the script's `refloop.signup()` calls: the rules of `POST /v1/referrals/` (idempotent on the pair, one referral per user, no self-referral), answering 200 `{id}` alike whatever the outcome: the id of the referral this request created, or a decoy id that names nothing (unknown code, already referred, a repeat, self-referral), so the public key reveals neither codes nor existing ids. 403 when the account turned browser referrals off (`account set-js-referrals`). Publishable key; CORS for any origin; rate limited per IP and per key. Emits `referral.created` for a created referral.",
    body: jsReferralBody,
    success: {
      status: 200,
      description: "The created referral's id, or a decoy.",
      body: {
        json: {
          type: 'object',
          properties: { id: { type: 'string', pattern: '^[0-9a-f]{32}$' } },
          required: ['id'],
          additionalProperties: false,
        },
      },
    },
    errors: [403],
    examples: {
      request: referralRequest,
      response: { id: REFERRAL_ID },
      errors: { 403: { detail: 'Referrals from the browser are turned off for this account; the app creates them with its secret key.' } },
    },
  },
  CreateJsReferralPreflight: {
    tag: 'Browser',
    summary: 'CORS preflight of the referral endpoint',
    description: "The browser's CORS preflight before `POST /js/v1/referrals/`: no authentication, any origin.",
    success: { status: 204, description: 'The CORS headers (any origin; POST; Authorization and Content-Type).' },
  },

  ProviderWebhook: {
    tag: 'Provider webhooks',
    summary: 'Payment provider webhook intake',
    description:
      "Give the provider this URL (GET /v1/account/ shows the account's, `provider.webhook_url`). `{provider}` is the connected provider's segment: `paddle` (Paddle Classic), `paddle-billing` or `stripe`. No API key: the provider's signature is the credential. Paddle Classic posts a form whose `p_signature` (RSA over the other fields) is verified with the account's Paddle public key. Paddle Billing signs the raw JSON body in `Paddle-Signature` (HMAC-SHA256 over `<ts>:<raw body>` with the notification destination's secret key, at most 300 s old). Stripe signs it in `Stripe-Signature` (`v1` HMAC-SHA256 over `<t>.<raw body>` with the endpoint's `whsec_` secret, at most 300 s old; any `v1` may match). Unknown provider, unknown account, or one not connected to that provider: 404; bad, missing or stale signature: 403 `Invalid signature.`; a Paddle Classic alert that is not a form: 415. Nothing is queued unless it verifies. Events are de-duplicated on their id (`alert_id`, `event_id`, Stripe's `id`) and ordered by their time.",
    params: {
      provider: `The provider's segment: ${PROVIDER_DEFINITIONS.map((d) => `\`${d.webhook.path}\` (${d.name})`).join(', ')}.`,
      account_id: 'The Refloop account id.',
    },
    bodyType: 'provider-event',
    success: {
      status: 200,
      description: 'Verified and queued (also for event types the service ignores).',
      body: { component: 'PaddleWebhookAccepted' },
    },
    errors: [403, 404, 413, 415],
    examples: {
      request: {
        id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
        object: 'event',
        api_version: '2026-10-28.endive',
        created: 1763892000,
        type: 'customer.subscription.created',
        data: {
          object: {
            id: 'sub_1MowQVLkdIwHu7ixeRlqHVzs',
            object: 'subscription',
            status: 'active',
            metadata: { refloop_referral_id: '0190c6f0a1b27c3d8e9f0a1b2c3d4e5f' },
          },
        },
      },
      formRequest: PADDLE_ALERT_EXAMPLE,
      errors: { 403: { detail: 'Invalid signature.' } },
    },
  },

  GetOpenApi: {
    tag: 'Documentation',
    summary: 'This OpenAPI 3.1 document',
    description: 'Generated from the route table and the validation schemas. No authentication.',
    success: { status: 200, description: 'The OpenAPI document.', body: { json: { type: 'object' } } },
    examples: {
      response: {
        openapi: '3.1.0',
        info: { title: 'Refloop API', version: '1.0.0' },
        servers: [{ url: 'https://api.example.com' }],
        paths: { '/v1/referrals/': { get: { operationId: 'ListReferrals' } } },
      },
    },
  },
  ApiDocs: {
    tag: 'Documentation',
    summary: 'The API reference, rendered',
    description: 'A static HTML rendering of this document. No authentication.',
    success: { status: 200, description: 'An HTML page.', body: { json: { type: 'string' }, contentType: 'text/html' } },
    examples: {
      response:
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Refloop API reference</title></head><body><h1>Refloop API 1.0.0</h1>...</body></html>',
    },
  },
  ApiRoot: {
    tag: 'Documentation',
    summary: 'Where the documentation is',
    description:
      'Redirects to `/docs/` (302, so a browser shows the reference); API clients read the links in the body. No authentication.',
    success: {
      status: 302,
      description: 'A redirect to `/docs/`, with absolute links to the reference, this document and the health check.',
      body: { component: 'ServiceLinks' },
      headers: { Location: { description: 'The reference, `/docs/`.', schema: { type: 'string', const: '/docs/' } } },
    },
  },
  CreatePortalSession: {
    tag: 'Member portal',
    summary: "Open the member's portal",
    description:
      "A single-use URL of the member portal for this member: the token is in the URL's fragment (never sent to a server), opens within 10 minutes, once, and starts a 60-minute portal session. Hand `url` to `Refloop.mount` in your page, or redirect the member to it. Create one per page view; an Idempotency-Key replay answers `url: null` (the token is shown once).",
    params: { id: 'Member id.' },
    body: createPortalSessionBody,
    success: { status: 201, description: 'The portal link.', body: { component: 'PortalLink' } },
    errors: [404],
    examples: { request: { return_url: 'https://app.acme.example/settings' } },
  },
  RevokePortalSessions: {
    tag: 'Member portal',
    summary: "End the member's portal sessions",
    description:
      "Ends every portal link and session of the member at once: the portal's next request answers 401, and the widget asks your page for a new URL (onTokenExpired).",
    params: { id: 'Member id.' },
    success: { status: 204, description: 'Ended (also when there was none).' },
    errors: [404],
  },
  EmbedScript: {
    tag: 'Member portal',
    summary: 'The widget script',
    description:
      "Load this file with a script element, then call `Refloop.mount(element, { url, theme: { accent, background, text, radius, font }, onTokenExpired })`: it shows the portal in an iframe that follows its content's height. Messages go to explicit origins and the sender is checked. `onTokenExpired` returns (or resolves to) a fresh portal URL from your backend, handed over without reloading. No authentication; cacheable for an hour.",
    success: {
      status: 200,
      description: 'The script (ES2017, no dependencies).',
      body: { json: { type: 'string' }, contentType: 'text/javascript' },
    },
    examples: { response: '/*! Refloop embed */(function(){"use strict";/* ... */})();' },
  },
  PortalPage: {
    tag: 'Member portal',
    summary: 'The portal page',
    description:
      "The portal's HTML, for `url`'s path. Its `Content-Security-Policy: frame-ancestors` is the account's `embed_origins` (none when empty), so only your sites can frame it. Without a token in the fragment it shows nothing of any member. An unknown account answers 404 with a short HTML page.",
    params: { account_id: 'Account id.' },
    success: { status: 200, description: 'The page.', body: { json: { type: 'string' }, contentType: 'text/html' } },
    examples: { response: '<!doctype html><html lang="en">...</html>' },
  },
  UnsubscribePage: {
    tag: 'Member portal',
    summary: 'The unsubscribe page',
    description:
      "Where a member email's unsubscribe link leads (`List-Unsubscribe: <…/unsubscribe/{token}/>`): an HTML page whose button POSTs to the same URL. It changes nothing by itself, so a link scanner unsubscribes nobody. No credential: the token names the member. An unknown or expired token answers 404 with a short HTML page.",
    params: { token: "The token of the email's unsubscribe link." },
    success: { status: 200, description: 'The page.', body: { json: { type: 'string' }, contentType: 'text/html' } },
    examples: { response: '<!doctype html><html lang="en">...</html>' },
  },
  Unsubscribe: {
    tag: 'Member portal',
    summary: 'Unsubscribe (one click)',
    description:
      "RFC 8058 one-click unsubscribe: a mail client POSTs `List-Unsubscribe=One-Click` here (the email's `List-Unsubscribe-Post` header), or the page's button does. The member's `email_opt_out` becomes true; the body is not needed. No credential: the token names one member of one account. An unknown or expired token, or a deleted member, answers 404 with a short HTML page.",
    params: { token: "The token of the email's unsubscribe link." },
    success: {
      status: 200,
      description: 'Unsubscribed (also when already so): a short HTML page.',
      body: { json: { type: 'string' }, contentType: 'text/html' },
    },
    examples: { response: '<!doctype html><html lang="en">...</html>' },
  },
  OpenPortalSession: {
    tag: 'Member portal',
    summary: 'Open a portal session',
    description:
      "Trades the link's token (the URL fragment's `token`) for a portal session token. A used, expired, revoked or unknown link answers 401. Rate limited per IP.",
    body: openPortalSessionBody,
    success: { status: 201, description: 'The portal session.', body: { component: 'PortalToken' } },
    errors: [401, 429],
    examples: { request: { token: 'rpl_Zk3v9QyL3rT8aB1nK7eW4hZ6uF0dX2m9cJ5pV8sW1aB' } },
  },
  PortalLoginPage: {
    tag: 'Member portal',
    summary: "The affiliate's login page",
    description:
      "The portal's page on its login path, `/portal/<account slug or id>/login/`: it asks for the affiliate's email (POST /portal/v1/login-links/). Opened from the emailed link (`#token=` in the fragment) it shows one button that logs in (POST /portal/v1/login-sessions/), so a mail scanner that loads the page logs nobody in. The account's `theme` applies. An unknown account answers 404 with a short HTML page.",
    params: { account_id: "The account's slug, or its id." },
    success: { status: 200, description: 'The page.', body: { json: { type: 'string' }, contentType: 'text/html' } },
    examples: { response: '<!doctype html><html lang="en">...</html>' },
  },
  CreatePortalLoginLink: {
    tag: 'Member portal',
    summary: 'Email an affiliate a login link',
    description:
      'Emails a single-use login link (15 minutes) to the member of the account with this address. Always 202 with the same body, whether or not the account or a member with that address exists, and also past the rate limits (per client address and per email), which drop the request silently. No credential.',
    body: portalLoginLinkBody,
    success: {
      status: 202,
      description: 'Accepted (whatever the address).',
      body: { json: { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] } },
    },
    examples: {
      request: { account: 'acme', email: 'alice@example.com' },
      response: {
        detail: 'If this address belongs to a member of the programme, a login link is on its way. It works once, for 15 minutes.',
      },
    },
  },
  OpenPortalLoginSession: {
    tag: 'Member portal',
    summary: 'Log in to the affiliate portal',
    description:
      "Trades the login link's token (the fragment's `token`) for a portal session in the `refloop_portal` cookie (HttpOnly, SameSite=Strict, Path=/portal/, Secure over https), which lasts 12 hours from its last use (at most 7 days). Answers when it ends and the portal's path name. A used, expired or unknown link answers 401. Rate limited per IP.",
    body: portalLoginSessionBody,
    success: {
      status: 201,
      description: 'Logged in; the cookie is set.',
      body: {
        json: {
          type: 'object',
          required: ['expires_at', 'portal'],
          properties: { expires_at: { type: 'integer' }, portal: { type: 'string' } },
          additionalProperties: false,
        },
      },
    },
    errors: [401, 429],
    examples: {
      request: { token: 'rpl_Zk3v9QyL3rT8aB1nK7eW4hZ6uF0dX2m9cJ5pV8sW1aB' },
      response: { expires_at: 1767268800, portal: 'acme' },
    },
  },
  EndPortalSession: {
    tag: 'Member portal',
    summary: 'Log out of the affiliate portal',
    description:
      'Ends the cookie session and clears the `refloop_portal` cookie. 204 also without a session. With a cookie, a request from another origin is refused (403).',
    success: { status: 204, description: 'Logged out.' },
    errors: [403],
  },
  GetPortalTaxDetails: {
    tag: 'Member portal',
    summary: "The member's tax details",
    description:
      "Whether the account requires tax details and whether the member gave them, masked: the form (`w9` or `w8ben`), legal name, country, the start of the address and the TIN's last four characters.",
    success: { status: 200, description: 'The tax details, masked.', body: { component: 'PortalTaxDetails' } },
  },
  PutPortalTaxDetails: {
    tag: 'Member portal',
    summary: "Give the member's tax details",
    description:
      "Stores (or replaces) the member's tax details, encrypted: `legal_name`, `country`, `address`, and either `us` (`tin`, `w9_certified: true`), always with a US address, or `w8ben` (`name`, `country_of_citizenship`, `permanent_address`, `foreign_tin`?, `date_of_birth`, `treaty_country`?, `certified: true`). Field errors name nested fields with a dot (`us.tin`). Answers them masked. Only the operator's tax export shows them in full.",
    body: taxDetailsBody,
    success: { status: 200, description: 'The tax details, masked.', body: { component: 'PortalTaxDetails' } },
    examples: {
      request: {
        legal_name: 'Alice Smith',
        country: 'US',
        address: '1 Main St, Springfield, IL 62701',
        us: { tin: '123-45-6789', w9_certified: true },
      },
    },
  },
  PortalMe: {
    tag: 'Member portal',
    summary: 'The member',
    description:
      "The member's name, code and referral link, their campaign's terms (also in words), their totals, their payout email and email opt-out, and the session's end.",
    success: { status: 200, description: 'The member.', body: { component: 'PortalMe' } },
  },
  UpdatePortalMe: {
    tag: 'Member portal',
    summary: "Change the member's settings",
    description:
      "The member's only writes: `payout_email` (where payouts are sent; null removes it), `payout_method` (one of the programme's connected rails in `program.payout_methods`, or null; another answers 400) and `email_opt_out`. A payout email or method given makes the member's collecting payouts due at once when the method is ready (`payout_method_ready`).",
    body: updatePortalMeBody,
    success: { status: 200, description: 'The member.', body: { component: 'PortalMe' } },
    examples: { request: { payout_email: 'alice@example.com', payout_method: 'paypal', email_opt_out: true } },
  },
  PortalStripeAccountLink: {
    tag: 'Member portal',
    summary: 'Set up Stripe payouts',
    description:
      "The portal's \"Set up payouts\" for Stripe: creates the member's Stripe Express account on the first call (one per member, whatever the retries), makes `stripe` their payout method, and answers a fresh Stripe onboarding link that comes back to the member's portal page (`?stripe=return`, or `?stripe=refresh` when the link expired). The method becomes ready once Stripe reports the account able to receive transfers. 409 when the programme has not connected Stripe; 502 or 503 when Stripe refuses or does not answer.",
    success: { status: 201, description: "Stripe's onboarding link.", body: { component: 'StripeAccountLink' } },
    errors: [409],
  },
  PortalStats: {
    tag: 'Member portal',
    summary: "The member's chart",
    description:
      "Clicks, referrals and conversions per bucket: the last 30 days by day, 12 weeks by week, or 12 months by month (UTC); with `sub`, those through one of the member's sub-ids.",
    query: portalStatsQuery,
    success: { status: 200, description: 'The buckets, oldest first.', body: { component: 'PortalStats' } },
  },
  PortalReferrals: {
    tag: 'Member portal',
    summary: "The member's referrals",
    description: `The users the member referred, their identifiers masked. ${PAGINATION}`,
    query: portalListQuery,
    success: { status: 200, description: 'A page of referrals.', body: { page: 'PortalReferral' } },
  },
  PortalRewards: {
    tag: 'Member portal',
    summary: "The member's rewards",
    description: `Rewards with their status; credits say where they stand at the payment provider. ${PAGINATION}`,
    query: portalListQuery,
    success: { status: 200, description: 'A page of rewards.', body: { page: 'PortalReward' } },
  },
  PortalPayouts: {
    tag: 'Member portal',
    summary: "The member's payouts",
    description: `Payouts and their status. ${PAGINATION}`,
    query: portalListQuery,
    success: { status: 200, description: 'A page of payouts.', body: { page: 'PortalPayout' } },
  },
  PortalLinks: {
    tag: 'Member portal',
    summary: "The member's named links",
    description: `The member's links with sub-ids, newest first, each with its URL. ${PAGINATION}`,
    query: portalListQuery,
    success: { status: 200, description: 'A page of links.', body: { page: 'MemberLink' } },
  },
  CreatePortalLink: {
    tag: 'Member portal',
    summary: 'Create a named link',
    description:
      "The same rules as `POST /v1/members/{id}/links/` for the session's member: at most 20 links, a slug used once, a path of the account's site.",
    body: createLinkBody,
    success: { status: 201, description: 'The link.', body: { component: 'MemberLink' } },
    examples: { request: { slug: 'newsletter', destination_path: '/pricing' } },
  },
  DeletePortalLink: {
    tag: 'Member portal',
    summary: 'Delete a named link',
    description: "Deletes one of the session's member's links; another slug answers 404.",
    params: { slug: "The link's slug." },
    success: { status: 204, description: 'Deleted.' },
    errors: [404],
  },
  Health: {
    tag: 'Operations',
    summary: 'Liveness check',
    description:
      "200 while the API answers. It reads no table and needs no key, so it is free to poll and cannot be used to drive DynamoDB reads; DynamoDB's and SQS's health are watched by AWS and the stack's DLQ alarms.",
    success: { status: 200, description: 'The API is up.', body: { component: 'Health' } },
  },
  // ---- affiliate applications (docs/affiliates.md "Applications") ----
  JoinPage: {
    tag: 'Applications',
    summary: "A campaign's public page",
    description:
      'The HTML page of a campaign open to applications: its terms in words, the questions and the application form, in the account\'s theme. It works without JavaScript (the form posts urlencoded to SubmitApplication) and enhances itself with a small inline script. An unknown account or campaign, or a campaign whose `signup.enabled` is false, answers a 404 page. `?sent=1` shows the "check your email" page.',
    params: { account_slug: "The account's slug.", campaign_slug: "The campaign's slug." },
    success: { status: 200, description: 'The page.', body: { json: { type: 'string' }, contentType: 'text/html' } },
    errors: [404],
    examples: { response: '<!doctype html><html lang="en">...</html>' },
  },
  SubmitApplication: {
    tag: 'Applications',
    summary: 'Apply to a programme',
    description:
      'Public, no credential. Malformed input answers 400 keyed by field (an answer by `answers.<question id>`). Otherwise always `202 {"detail": "Check your email to continue."}`, whatever happened: the address gets an email with a confirmation link (24 hours), or one saying it is already a member or has an application pending; an unknown or closed campaign, and a request over the limits (5 an hour per address, 20 per client address), do nothing. Nothing is stored as an application before the email is confirmed. The page\'s own form posts `application/x-www-form-urlencoded` here (`answers[<id>]=…`, `accepted_terms=on`) and gets a 303 to the page\'s `?sent=1` instead (or the page again with its errors).',
    params: { account_slug: "The account's slug.", campaign_slug: "The campaign's slug." },
    body: joinApplicationBody,
    success: {
      status: 202,
      description: 'Accepted (the same answer in every case).',
      body: { json: { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] } },
    },
    examples: {
      request: {
        email: 'casey@creator.example',
        name: 'Casey Jones',
        country: 'GB',
        payout_email: null,
        answers: { audience: 'https://youtube.example/@casey' },
        accepted_terms: true,
      },
      response: { detail: 'Check your email to continue.' },
      errors: { 400: { 'answers.audience': ['This field is required.'] } },
    },
  },
  ConfirmApplicationPage: {
    tag: 'Applications',
    summary: 'The confirmation link',
    description:
      "Where the confirmation email's link leads: a page whose one button POSTs to the same URL. It changes nothing itself, so a mail scanner that follows the link confirms nothing. An unknown or expired link answers a 404 page; a used one shows what it created.",
    params: { token: "The confirmation link's token." },
    success: { status: 200, description: 'The page.', body: { json: { type: 'string' }, contentType: 'text/html' } },
    errors: [404],
    examples: { response: '<!doctype html><html lang="en">...</html>' },
  },
  ConfirmApplication: {
    tag: 'Applications',
    summary: 'Confirm an application',
    description:
      'The confirmation page\'s button: the application is created, once (a replay shows the same page and creates nothing). With `signup.approval: "auto"` and no fraud flag it is approved at once, its member created in the same transaction and the approval email (with a login link) sent. Emits `application.created` (and `application.approved`, `member.created`). Answers an HTML page; an unknown or expired link a 404 page.',
    params: { token: "The confirmation link's token." },
    success: { status: 200, description: 'The page saying what happened.', body: { json: { type: 'string' }, contentType: 'text/html' } },
    errors: [404],
    examples: { response: '<!doctype html><html lang="en">...</html>' },
  },
  ListApplications: {
    tag: 'Applications',
    summary: 'List applications',
    description: `Filter by \`status\` and \`campaign\` (id), in any combination. ${PAGINATION}`,
    query: listApplicationsQuery,
    success: { status: 200, description: 'A page of applications.', body: { page: 'Application' } },
  },
  GetApplication: {
    tag: 'Applications',
    summary: 'Retrieve an application',
    description: 'The application with its answers.',
    params: { id: 'Application id (app_…).' },
    success: { status: 200, description: 'The application.', body: { component: 'Application' } },
    errors: [404],
  },
  ApproveApplication: {
    tag: 'Applications',
    summary: 'Approve an application',
    description:
      'A pending application becomes approved and its member is created in the same transaction, in its campaign (code generated, `source: "signup"`, identifier `signup:<application id>`, the name split at the first space); the affiliate is emailed a login link. An approved one answers as it is; a rejected one 409, as does an address that became a member meanwhile. Of an approval and a rejection racing, exactly one wins; the other answers 409. Emits `application.approved` and `member.created`.',
    params: { id: 'Application id (app_…).' },
    success: { status: 200, description: 'The approved application (with its `member_id`).', body: { component: 'Application' } },
    errors: [404, 409],
  },
  RejectApplication: {
    tag: 'Applications',
    summary: 'Reject an application',
    description:
      "A pending application becomes rejected with an optional `reason` (internal: the applicant's email is neutral). A rejected one answers as it is; an approved one 409. Emits `application.rejected`.",
    params: { id: 'Application id (app_…).' },
    body: rejectApplicationBody,
    success: { status: 200, description: 'The rejected application.', body: { component: 'Application' } },
    errors: [404, 409],
    examples: {
      request: { reason: 'No audience in our market' },
      response: {
        ...(COMPONENT_EXAMPLES.Application as Record<string, unknown>),
        status: 'rejected',
        member_id: null,
        reason: 'No audience in our market',
      },
    },
  },
  GetFraudRules: {
    tag: 'Fraud',
    summary: 'Retrieve the fraud rules',
    description: "Every rule with its action and thresholds: the account's settings over the defaults.",
    query: noQuery,
    success: { status: 200, description: 'The rules.', body: { component: 'FraudRules' } },
  },
  UpdateFraudRules: {
    tag: 'Fraud',
    summary: 'Change fraud rules',
    description:
      'Any of the rules, each with any of its settings: `{"<rule>": {"action": "off" | "flag" | "hold", ...thresholds}}`; the rest stay as they are. A change applies to what happens from now on: nothing already flagged or held changes.',
    body: fraudRulesBody,
    success: { status: 200, description: 'Every rule after the change.', body: { component: 'FraudRules' } },
    examples: {
      request: { duplicate_ip: { action: 'hold', max_referrals: 5 } },
      response: { ...DEFAULT_FRAUD_SETTINGS, duplicate_ip: { action: 'hold', max_referrals: 5, window_hours: 24 } },
    },
  },
  PreviewFraudRule: {
    tag: 'Fraud',
    summary: 'Preview a rule',
    description:
      "Runs one rule with the given action and thresholds (missing ones: the account's) over the last 90 days of recorded facts and answers what it would have flagged or held, with counts and up to 10 examples. Writes nothing.",
    body: fraudPreviewBody,
    success: { status: 200, description: 'What the rule would have done.', body: { component: 'FraudPreview' } },
    examples: { request: { rule: 'duplicate_ip', action: 'hold', thresholds: { max_referrals: 3 } } },
  },
  ListFraudFlags: {
    tag: 'Fraud',
    summary: 'List the review queue',
    description: `What the fraud rules flagged or held. Filter by \`rule\`, \`status\` and \`member\` (id), in any combination. ${PAGINATION}`,
    query: listFraudFlagsQuery,
    success: { status: 200, description: 'A page of flags.', body: { page: 'FraudFlag' } },
  },
  GetFraudFlag: {
    tag: 'Fraud',
    summary: 'Retrieve a flag',
    description: 'A flag with its explanation, its evidence and the rewards it held.',
    params: { id: 'Flag id (ff_…).' },
    success: { status: 200, description: 'The flag.', body: { component: 'FraudFlag' } },
    errors: [404],
  },
  ReleaseFraudFlag: {
    tag: 'Fraud',
    summary: 'Release a flag',
    description:
      'Every reward the flag still holds is released (pending until its hold period ends, then approved; approved at once when that has passed) and the flag becomes `released`. A released one answers as it is; a voided or reviewed one 409.',
    params: { id: 'Flag id (ff_…).' },
    body: resolveFraudFlagBody,
    success: { status: 200, description: 'The released flag.', body: { component: 'FraudFlag' } },
    errors: [404, 409],
    examples: {
      request: { note: 'Same office network; checked with the member.' },
      response: {
        ...(COMPONENT_EXAMPLES.FraudFlag as Record<string, unknown>),
        status: 'released',
        held_count: 0,
        resolved_at: 1767312000,
        note: 'Same office network; checked with the member.',
      },
    },
  },
  VoidFraudFlag: {
    tag: 'Fraud',
    summary: 'Void what a flag holds',
    description:
      'Every reward the flag still holds is voided with the reason `fraud` and the flag becomes `voided`. A voided one answers as it is; a released or reviewed one 409. Emits `reward.voided` for each.',
    params: { id: 'Flag id (ff_…).' },
    body: resolveFraudFlagBody,
    success: { status: 200, description: 'The voided flag.', body: { component: 'FraudFlag' } },
    errors: [404, 409],
    examples: {
      request: { note: 'Self-referral with a second card.' },
      response: {
        ...(COMPONENT_EXAMPLES.FraudFlag as Record<string, unknown>),
        status: 'voided',
        held_count: 0,
        resolved_at: 1767312000,
        note: 'Self-referral with a second card.',
      },
    },
  },
  ReviewFraudFlag: {
    tag: 'Fraud',
    summary: 'Mark a flag reviewed',
    description:
      'An open flag that holds nothing (any longer) becomes `reviewed`: an operator looked and nothing needs doing. One that still holds rewards answers 409: release or void it. A reviewed one answers as it is.',
    params: { id: 'Flag id (ff_…).' },
    body: resolveFraudFlagBody,
    success: { status: 200, description: 'The reviewed flag.', body: { component: 'FraudFlag' } },
    errors: [404, 409],
    examples: {
      request: { note: null },
      response: {
        ...(COMPONENT_EXAMPLES.FraudFlag as Record<string, unknown>),
        action: 'flag',
        status: 'reviewed',
        held_reward_ids: [],
        held_count: 0,
        resolved_at: 1767312000,
      },
    },
  },
  ReleaseReward: {
    tag: 'Rewards',
    summary: 'Release a held reward',
    description:
      'A `held` reward returns to `pending` until its hold period ends, then `approved` (approved at once when that has passed; a campaign with manual approval waits for an approval). A reward that is not held answers 409. Emits `reward.released`.',
    params: { id: 'Reward id.' },
    success: { status: 200, description: 'The released reward.', body: { component: 'LedgerReward' } },
    errors: [404, 409],
  },
};
