// THE route table. The CDK stack loops over it to create one function and one API route per line,
// the local gateway loops over it to route requests, and a test asserts that every line has a handler
// file and an integration test. Adding an endpoint = one line here + one handler file.
//
// Paths are written with a trailing slash, as the API documents them; the same path without it is
// served identically (no redirect). `{name}` is one path segment, URL-decoded into pathParameters.

import type { QueueName } from '../shared/queue/queues';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** What the route's function may do to the table: read-only routes get read-only IAM access; 'none' no access. */
export type TableAccess = 'read' | 'write' | 'none';

export interface Route {
  /** Stable name, used for the Lambda function's logical id. */
  name: string;
  method: HttpMethod;
  path: string;
  /** Handler module relative to the repository root; it exports `handler`. */
  entry: string;
  table: TableAccess;
  /** Queues the handler sends to (its function gets send permission and the queue URL). */
  queues?: QueueName[];
  /** Whether the handler reads the provider's secret settings (vendor auth code); others are denied. */
  providerSecrets?: boolean;
  /** Whether the handler reads the providers' webhook secrets (the webhook intake); others are denied them. */
  providerWebhookSecrets?: boolean;
  /** Whether the handler writes or deletes webhook signing secrets; others are denied them. */
  webhookSecrets?: boolean;
  /** Whether the handler reads or writes members' tax details (`A#<acct>#TAX#…`); others are denied them. */
  taxDetails?: boolean;
  /** Whether the handler reads, writes or deletes payout-rail secrets (`A#<acct>#RAIL_SECRET`); others are denied them. */
  railSecrets?: boolean;
  /** Lambda timeout when the default (10 s) is not enough; API Gateway gives up at 30 s. */
  timeoutSeconds?: number;
  /**
   * How callers authenticate: a secret API key or a dashboard session cookie (default, `api-key`), the
   * provider's signature in the body, the account's publishable key (public /js/v1/ endpoints), only a
   * dashboard session (`session`: the team, API keys and the provider connection, which an API key must not
   * change), the dashboard's login endpoints (`login`: no credential, rate limited, they read the cookie or
   * a login token), the member portal's session token (`portal`: /portal/v1/, never an API key), the portal
   * link's opening (`portal-link`: no credential, rate limited per IP, it reads the link token), or nothing
   * (the scripts, CORS preflights, the public documentation and the portal's page).
   */
  auth?: 'api-key' | 'provider-signature' | 'publishable-key' | 'none' | 'session' | 'login' | 'portal' | 'portal-link';
}

export const routes: readonly Route[] = [
  { name: 'ListReferrals', method: 'GET', path: '/v1/referrals/', entry: 'functions/referrals/list.ts', table: 'read' },
  // A referral in a double-sided campaign queues the creation of its coupon (rewards queue); writes that
  // emit webhook events hand them to `webhook-events` right after their commit.
  {
    name: 'CreateReferral',
    method: 'POST',
    path: '/v1/referrals/',
    entry: 'functions/referrals/create.ts',
    table: 'write',
    // ... and the member's optional new-referral email (docs/affiliate-emails.md).
    queues: ['rewards', 'webhook-events', 'member-emails'],
  },
  { name: 'GetReferral', method: 'GET', path: '/v1/referrals/{id}/', entry: 'functions/referrals/get.ts', table: 'read' },
  // The specification's path has no /v1/ prefix; the contract adds the /v1/ alias.
  {
    name: 'ConvertReferral',
    method: 'POST',
    // Usually one provider call; when the subscription's webhook is late, up to four (order, users,
    // deleted users, plan) at PROVIDER_TIMEOUT_MS (4 s) each.
    timeoutSeconds: 25,
    path: '/referrals/{id}/conversion/',
    entry: 'functions/referrals/convert.ts',
    table: 'write',
    queues: ['rewards', 'webhook-events'],
    providerSecrets: true,
  },
  {
    name: 'ConvertReferralV1',
    method: 'POST',
    timeoutSeconds: 25,
    path: '/v1/referrals/{id}/conversion/',
    entry: 'functions/referrals/convert.ts',
    table: 'write',
    queues: ['rewards', 'webhook-events'],
    providerSecrets: true,
  },
  // ---- money (docs/design/money.md): the reward lifecycle, payouts and batches ----
  { name: 'ListRewards', method: 'GET', path: '/v1/rewards/', entry: 'functions/rewards/list.ts', table: 'read' },
  { name: 'GetReward', method: 'GET', path: '/v1/rewards/{id}/', entry: 'functions/rewards/get.ts', table: 'read' },
  {
    name: 'ApproveReward',
    method: 'POST',
    path: '/v1/rewards/{id}/approve/',
    entry: 'functions/rewards/approve.ts',
    table: 'write',
    queues: ['webhook-events'],
  },
  {
    name: 'VoidReward',
    method: 'POST',
    path: '/v1/rewards/{id}/void/',
    entry: 'functions/rewards/void.ts',
    table: 'write',
    queues: ['webhook-events'],
  },
  { name: 'ListPayouts', method: 'GET', path: '/v1/payouts/', entry: 'functions/payouts/list.ts', table: 'read' },
  { name: 'PayoutSummary', method: 'GET', path: '/v1/payouts/summary/', entry: 'functions/payouts/summary.ts', table: 'read' },
  { name: 'GetPayout', method: 'GET', path: '/v1/payouts/{id}/', entry: 'functions/payouts/get.ts', table: 'read' },
  {
    name: 'MarkPayoutPaid',
    method: 'POST',
    path: '/v1/payouts/{id}/mark-paid/',
    entry: 'functions/payouts/mark-paid.ts',
    table: 'write',
    // The payout-sent email of each payout paid (docs/affiliate-emails.md).
    queues: ['webhook-events', 'member-emails'],
    timeoutSeconds: 29,
  },
  {
    name: 'MarkPayoutFailed',
    method: 'POST',
    path: '/v1/payouts/{id}/mark-failed/',
    entry: 'functions/payouts/mark-failed.ts',
    table: 'write',
    queues: ['webhook-events'],
    timeoutSeconds: 29,
  },
  {
    name: 'CancelPayout',
    method: 'POST',
    path: '/v1/payouts/{id}/cancel/',
    entry: 'functions/payouts/cancel.ts',
    table: 'write',
    timeoutSeconds: 29,
  },
  // An unclaimed PayPal payout, its email corrected: the item canceled and sent again (pb_…-r<n>), by the
  // payout-rails worker (docs/payouts.md).
  {
    name: 'ResendPayout',
    method: 'POST',
    path: '/v1/payouts/{id}/resend/',
    entry: 'functions/payouts/resend.ts',
    table: 'write',
    queues: ['payout-rails'],
  },
  // Takes up to 5,000 payouts (one conditional write each, 8 at a time): up to API Gateway's 29 s.
  {
    name: 'CreatePayoutBatch',
    method: 'POST',
    path: '/v1/payout-batches/',
    entry: 'functions/payout-batches/create.ts',
    table: 'write',
    queues: ['webhook-events', 'payout-rails'],
    timeoutSeconds: 29,
  },
  { name: 'ListPayoutBatches', method: 'GET', path: '/v1/payout-batches/', entry: 'functions/payout-batches/list.ts', table: 'read' },
  { name: 'GetPayoutBatch', method: 'GET', path: '/v1/payout-batches/{id}/', entry: 'functions/payout-batches/get.ts', table: 'read' },
  {
    name: 'PayoutBatchFile',
    method: 'GET',
    path: '/v1/payout-batches/{id}/file/',
    entry: 'functions/payout-batches/file.ts',
    table: 'read',
    timeoutSeconds: 29,
  },
  {
    name: 'MarkPayoutBatchPaid',
    method: 'POST',
    path: '/v1/payout-batches/{id}/mark-paid/',
    entry: 'functions/payout-batches/mark-paid.ts',
    table: 'write',
    // The payout-sent email of each payout paid (docs/affiliate-emails.md).
    queues: ['webhook-events', 'member-emails'],
    timeoutSeconds: 29,
  },
  // Reads a rail batch back from its rail now (the payout-rails worker does it; docs/payouts.md).
  {
    name: 'ReconcilePayoutBatch',
    method: 'POST',
    path: '/v1/payout-batches/{id}/reconcile/',
    entry: 'functions/payout-batches/reconcile.ts',
    table: 'write',
    queues: ['payout-rails'],
  },
  // Reports: read the daily (and monthly per-member) buckets the writes keep; one Query per range.
  { name: 'ReportTimeseries', method: 'GET', path: '/v1/reports/timeseries/', entry: 'functions/reports/timeseries.ts', table: 'read' },
  { name: 'ReportOverview', method: 'GET', path: '/v1/reports/overview/', entry: 'functions/reports/overview.ts', table: 'read' },
  { name: 'ReportMembers', method: 'GET', path: '/v1/reports/members/', entry: 'functions/reports/members.ts', table: 'read' },
  // CSV exports, paged (10,000 rows per response at most, Link rel="next").
  { name: 'ExportCsv', method: 'GET', path: '/v1/exports/{file}/', entry: 'functions/exports/get.ts', table: 'read', timeoutSeconds: 29 },
  // Members' tax details in full: owner and finance sessions only; the one /v1/ route allowed the tax items.
  {
    name: 'ExportTaxDetails',
    method: 'GET',
    path: '/v1/exports/tax-details.csv/',
    entry: 'functions/exports/tax-details.ts',
    table: 'read',
    timeoutSeconds: 29,
    taxDetails: true,
  },
  { name: 'DeleteReferral', method: 'DELETE', path: '/v1/referrals/{id}/', entry: 'functions/referrals/delete.ts', table: 'write' },
  {
    name: 'GetReferralByUser',
    method: 'GET',
    path: '/v1/referrals/user/{user_identifier}/',
    entry: 'functions/referrals/get-by-user.ts',
    table: 'read',
  },
  // Why a referral did not convert (docs/referrals-diagnosis.md). After GetReferralByUser: on the tie
  // `/v1/referrals/user/diagnosis/`, the user named "diagnosis" is meant (referral ids are hex).
  {
    name: 'DiagnoseReferral',
    method: 'GET',
    path: '/v1/referrals/{id}/diagnosis/',
    entry: 'functions/referrals/diagnosis.ts',
    table: 'read',
  },

  { name: 'ListCampaigns', method: 'GET', path: '/v1/campaigns/', entry: 'functions/campaigns/list.ts', table: 'read' },
  { name: 'CreateCampaign', method: 'POST', path: '/v1/campaigns/', entry: 'functions/campaigns/create.ts', table: 'write' },
  { name: 'GetCampaign', method: 'GET', path: '/v1/campaigns/{id}/', entry: 'functions/campaigns/get.ts', table: 'read' },
  { name: 'UpdateCampaign', method: 'PATCH', path: '/v1/campaigns/{id}/', entry: 'functions/campaigns/update.ts', table: 'write' },
  { name: 'DeleteCampaign', method: 'DELETE', path: '/v1/campaigns/{id}/', entry: 'functions/campaigns/delete.ts', table: 'write' },

  { name: 'ListMembers', method: 'GET', path: '/v1/members/', entry: 'functions/members/list.ts', table: 'read' },
  {
    name: 'CreateMember',
    method: 'POST',
    path: '/v1/members/',
    entry: 'functions/members/create.ts',
    table: 'write',
    queues: ['webhook-events'],
  },
  { name: 'GetMember', method: 'GET', path: '/v1/members/{id}/', entry: 'functions/members/get.ts', table: 'read' },
  // Attaching a subscription to a member applies the member's pending credits (through the rewards queue).
  {
    name: 'UpdateMember',
    method: 'PATCH',
    path: '/v1/members/{id}/',
    entry: 'functions/members/update.ts',
    table: 'write',
    queues: ['rewards'],
  },
  { name: 'DeleteMember', method: 'DELETE', path: '/v1/members/{id}/', entry: 'functions/members/delete.ts', table: 'write' },
  // The member portal (docs/portal.md): the app's backend asks for a single-use portal URL, or ends them all.
  {
    name: 'CreatePortalSession',
    method: 'POST',
    path: '/v1/members/{id}/portal-sessions/',
    entry: 'functions/members/create-portal-session.ts',
    table: 'write',
  },
  {
    name: 'RevokePortalSessions',
    method: 'DELETE',
    path: '/v1/members/{id}/portal-sessions/',
    entry: 'functions/members/revoke-portal-sessions.ts',
    table: 'write',
  },
  // A member's named links with sub-ids (docs/attribution.md): at most 20, each `?via=<code>&sub=<slug>`.
  { name: 'ListMemberLinks', method: 'GET', path: '/v1/members/{id}/links/', entry: 'functions/members/links-list.ts', table: 'read' },
  { name: 'CreateMemberLink', method: 'POST', path: '/v1/members/{id}/links/', entry: 'functions/members/links-create.ts', table: 'write' },
  {
    name: 'DeleteMemberLink',
    method: 'DELETE',
    path: '/v1/members/{id}/links/{slug}/',
    entry: 'functions/members/links-delete.ts',
    table: 'write',
  },

  {
    name: 'ListSubscriptions',
    method: 'GET',
    path: '/v1/subscriptions/',
    entry: 'functions/subscriptions/list.ts',
    table: 'read',
  },
  {
    name: 'GetSubscription',
    method: 'GET',
    path: '/v1/subscriptions/{id}/',
    entry: 'functions/subscriptions/get.ts',
    table: 'read',
  },

  // The browser script and its public endpoints: publishable key, CORS for any origin, rate limited.
  { name: 'BrowserScript', method: 'GET', path: '/js/refloop.js', entry: 'functions/js/script.ts', table: 'none', auth: 'none' },
  {
    name: 'RecordClick',
    method: 'POST',
    path: '/js/v1/clicks/',
    entry: 'functions/js/record-click.ts',
    table: 'write',
    auth: 'publishable-key',
  },
  {
    name: 'RecordClickPreflight',
    method: 'OPTIONS',
    path: '/js/v1/clicks/',
    entry: 'functions/js/preflight.ts',
    table: 'none',
    auth: 'none',
  },
  {
    name: 'CreateJsReferral',
    method: 'POST',
    path: '/js/v1/referrals/',
    entry: 'functions/js/create-referral.ts',
    table: 'write',
    auth: 'publishable-key',
    // The coupon job of a double-sided campaign and the new-referral email, as for POST /v1/referrals/.
    queues: ['rewards', 'webhook-events', 'member-emails'],
  },
  // The widget's host-side script (Refloop.mount): frames the member portal.
  { name: 'EmbedScript', method: 'GET', path: '/js/refloop-embed.js', entry: 'functions/js/embed-script.ts', table: 'none', auth: 'none' },
  {
    name: 'CreateJsReferralPreflight',
    method: 'OPTIONS',
    path: '/js/v1/referrals/',
    entry: 'functions/js/preflight.ts',
    table: 'none',
    auth: 'none',
  },

  // Outgoing webhooks: endpoints (the signing secret is shown once, by the create) and their deliveries.
  {
    name: 'ListWebhookEndpoints',
    method: 'GET',
    path: '/v1/webhook-endpoints/',
    entry: 'functions/webhook-endpoints/list.ts',
    table: 'read',
  },
  {
    name: 'CreateWebhookEndpoint',
    method: 'POST',
    path: '/v1/webhook-endpoints/',
    entry: 'functions/webhook-endpoints/create.ts',
    table: 'write',
    webhookSecrets: true,
  },
  {
    name: 'GetWebhookEndpoint',
    method: 'GET',
    path: '/v1/webhook-endpoints/{id}/',
    entry: 'functions/webhook-endpoints/get.ts',
    table: 'read',
  },
  {
    name: 'UpdateWebhookEndpoint',
    method: 'PATCH',
    path: '/v1/webhook-endpoints/{id}/',
    entry: 'functions/webhook-endpoints/update.ts',
    table: 'write',
  },
  {
    name: 'DeleteWebhookEndpoint',
    method: 'DELETE',
    path: '/v1/webhook-endpoints/{id}/',
    entry: 'functions/webhook-endpoints/delete.ts',
    table: 'write',
    webhookSecrets: true,
  },
  {
    name: 'ListWebhookDeliveries',
    method: 'GET',
    path: '/v1/webhook-endpoints/{id}/deliveries/',
    entry: 'functions/webhook-endpoints/deliveries.ts',
    table: 'read',
  },

  // Provider webhooks, one route for every provider (shared/billing/registry.ts): no API key, the
  // provider's signature is the credential (each definition's `webhook` check, with the account's public
  // key or webhook secret); verify, queue, 200. The only function allowed the webhook secret items besides
  // the provider connection's (the API secrets stay denied to it). `{provider}` is a definition's
  // `webhook.path` (shared/billing/registry.ts); another answers 404.
  {
    name: 'ProviderWebhook',
    method: 'POST',
    path: '/webhooks/{provider}/{account_id}/',
    entry: 'functions/webhooks/provider.ts',
    table: 'read',
    queues: ['provider-events'],
    auth: 'provider-signature',
    providerWebhookSecrets: true,
  },
  // Payout rails' webhooks (docs/payouts.md "Webhooks"): verified with the rail connection's secret
  // or key before anything is queued, then one SQS send. Literal segments: they win over {provider}.
  {
    name: 'PaypalRailWebhook',
    method: 'POST',
    path: '/webhooks/paypal/{account_id}/',
    entry: 'functions/webhooks/paypal.ts',
    table: 'read',
    queues: ['payout-rails'],
    auth: 'provider-signature',
    railSecrets: true,
  },
  {
    name: 'StripeConnectRailWebhook',
    method: 'POST',
    path: '/webhooks/stripe-connect/{account_id}/',
    entry: 'functions/webhooks/stripe-connect.ts',
    table: 'read',
    queues: ['payout-rails'],
    auth: 'provider-signature',
    railSecrets: true,
  },
  {
    name: 'WiseRailWebhook',
    method: 'POST',
    path: '/webhooks/wise/{account_id}/',
    entry: 'functions/webhooks/wise.ts',
    table: 'read',
    queues: ['payout-rails'],
    auth: 'provider-signature',
    railSecrets: true,
  },

  // ---- the dashboard (docs/dashboard.md): login, sessions, team, API keys, account settings ----
  {
    name: 'CreateLoginLink',
    method: 'POST',
    path: '/auth/login-links/',
    entry: 'functions/auth/login-links.ts',
    table: 'write',
    auth: 'login',
    queues: ['member-emails'],
  },
  {
    name: 'CreateSession',
    method: 'POST',
    path: '/auth/sessions/',
    entry: 'functions/auth/create-session.ts',
    table: 'write',
    auth: 'login',
  },
  {
    name: 'GetCurrentSession',
    method: 'GET',
    path: '/auth/sessions/current/',
    entry: 'functions/auth/current-session.ts',
    table: 'read',
    auth: 'login',
  },
  {
    name: 'EndCurrentSession',
    method: 'DELETE',
    path: '/auth/sessions/current/',
    entry: 'functions/auth/end-session.ts',
    table: 'write',
    auth: 'login',
  },
  { name: 'ListTeam', method: 'GET', path: '/v1/team/', entry: 'functions/team/list.ts', table: 'read', auth: 'session' },
  {
    name: 'InviteTeamMember',
    method: 'POST',
    path: '/v1/team/',
    entry: 'functions/team/invite.ts',
    table: 'write',
    auth: 'session',
    queues: ['member-emails'],
  },
  { name: 'UpdateTeamMember', method: 'PATCH', path: '/v1/team/{id}/', entry: 'functions/team/update.ts', table: 'write', auth: 'session' },
  {
    name: 'RemoveTeamMember',
    method: 'DELETE',
    path: '/v1/team/{id}/',
    entry: 'functions/team/remove.ts',
    table: 'write',
    auth: 'session',
  },
  { name: 'ListApiKeys', method: 'GET', path: '/v1/api-keys/', entry: 'functions/api-keys/list.ts', table: 'read', auth: 'session' },
  { name: 'CreateApiKey', method: 'POST', path: '/v1/api-keys/', entry: 'functions/api-keys/create.ts', table: 'write', auth: 'session' },
  {
    name: 'RevokeApiKey',
    method: 'DELETE',
    path: '/v1/api-keys/{id}/',
    entry: 'functions/api-keys/revoke.ts',
    table: 'write',
    auth: 'session',
  },
  // GET writes too: an account from before publishable keys gets one on first sight.
  { name: 'GetAccount', method: 'GET', path: '/v1/account/', entry: 'functions/account/get.ts', table: 'write' },
  { name: 'UpdateAccount', method: 'PATCH', path: '/v1/account/', entry: 'functions/account/update.ts', table: 'write' },
  // The only API route that writes provider secrets (the admin CLI does too); its function is allowed them.
  {
    name: 'SetProviderConnection',
    method: 'POST',
    path: '/v1/account/provider/',
    entry: 'functions/account/provider.ts',
    table: 'write',
    auth: 'session',
    providerSecrets: true,
    providerWebhookSecrets: true,
  },
  // Payout rails (docs/payouts.md "Connecting a rail"): their connections, owner or admin with a dashboard
  // session only. The writer and the delete touch the rail secret items (the writer encrypts, never
  // decrypts); the list reads only the public items.
  {
    name: 'ListPayoutRails',
    method: 'GET',
    path: '/v1/account/payout-rails/',
    entry: 'functions/payout-rails/list.ts',
    table: 'read',
    auth: 'session',
  },
  {
    name: 'SetPayoutRail',
    method: 'PUT',
    path: '/v1/account/payout-rails/{kind}/',
    entry: 'functions/payout-rails/set.ts',
    table: 'write',
    auth: 'session',
    timeoutSeconds: 25,
    railSecrets: true,
  },
  {
    name: 'DeletePayoutRail',
    method: 'DELETE',
    path: '/v1/account/payout-rails/{kind}/',
    entry: 'functions/payout-rails/delete.ts',
    table: 'write',
    auth: 'session',
    railSecrets: true,
  },

  // ---- the member portal (docs/portal.md) ----
  // Its page: no credential, one read of the account (its embed origins are the page's frame-ancestors).
  // {account_id} is the account's id or its slug (then two reads).
  { name: 'PortalPage', method: 'GET', path: '/portal/{account_id}/', entry: 'functions/portal/page.ts', table: 'read', auth: 'none' },
  // The same page on the affiliate's login path: the app shows the login view there.
  {
    name: 'PortalLoginPage',
    method: 'GET',
    path: '/portal/{account_id}/login/',
    entry: 'functions/portal/page.ts',
    table: 'read',
    auth: 'none',
  },
  // An affiliate asks for a login link: always 202; the email worker sends it to a member.
  {
    name: 'CreatePortalLoginLink',
    method: 'POST',
    path: '/portal/v1/login-links/',
    entry: 'functions/portal/login-links.ts',
    table: 'write',
    queues: ['member-emails'],
    auth: 'portal-link',
  },
  // The login link's token for a cookie session (`refloop_portal`); rate limited per IP.
  {
    name: 'OpenPortalLoginSession',
    method: 'POST',
    path: '/portal/v1/login-sessions/',
    entry: 'functions/portal/login-sessions.ts',
    table: 'write',
    auth: 'portal-link',
  },
  // Log out of the affiliate portal: the cookie session ends, the cookie is cleared.
  {
    name: 'EndPortalSession',
    method: 'DELETE',
    path: '/portal/v1/sessions/current/',
    entry: 'functions/portal/end-session.ts',
    table: 'write',
    auth: 'portal-link',
  },
  // The link's token (from the URL fragment) for a portal session token; rate limited per IP.
  {
    name: 'OpenPortalSession',
    method: 'POST',
    path: '/portal/v1/sessions/',
    entry: 'functions/portal/open-session.ts',
    table: 'write',
    auth: 'portal-link',
  },
  // The portal API: bearer portal session, rate limited per session, scoped to its member.
  { name: 'PortalMe', method: 'GET', path: '/portal/v1/me/', entry: 'functions/portal/me.ts', table: 'read', auth: 'portal' },
  // The member's only writes (payout email, email opt-out); a payout email makes collecting payouts due.
  {
    name: 'UpdatePortalMe',
    method: 'PATCH',
    path: '/portal/v1/me/',
    entry: 'functions/portal/update-me.ts',
    table: 'write',
    auth: 'portal',
  },
  // "Set up payouts" for Stripe: the member's Express account (created on first use) and an Account Link
  // to Stripe's onboarding, which comes back to the portal (docs/portal.md).
  {
    name: 'PortalStripeAccountLink',
    method: 'POST',
    path: '/portal/v1/me/stripe-account-link/',
    entry: 'functions/portal/stripe-account-link.ts',
    table: 'write',
    auth: 'portal',
    railSecrets: true,
    timeoutSeconds: 25,
  },
  { name: 'PortalStats', method: 'GET', path: '/portal/v1/stats/', entry: 'functions/portal/stats.ts', table: 'read', auth: 'portal' },
  {
    name: 'PortalReferrals',
    method: 'GET',
    path: '/portal/v1/referrals/',
    entry: 'functions/portal/referrals.ts',
    table: 'read',
    auth: 'portal',
  },
  {
    name: 'PortalRewards',
    method: 'GET',
    path: '/portal/v1/rewards/',
    entry: 'functions/portal/rewards.ts',
    table: 'read',
    auth: 'portal',
  },
  {
    name: 'PortalPayouts',
    method: 'GET',
    path: '/portal/v1/payouts/',
    entry: 'functions/portal/payouts.ts',
    table: 'read',
    auth: 'portal',
  },
  // The member's tax details (masked) and their writing: the only portal routes allowed the tax items.
  {
    name: 'GetPortalTaxDetails',
    method: 'GET',
    path: '/portal/v1/tax-details/',
    entry: 'functions/portal/tax-details.ts',
    table: 'read',
    auth: 'portal',
    taxDetails: true,
  },
  {
    name: 'PutPortalTaxDetails',
    method: 'PUT',
    path: '/portal/v1/tax-details/',
    entry: 'functions/portal/put-tax-details.ts',
    table: 'write',
    auth: 'portal',
    taxDetails: true,
  },
  // The member's own named links (the same rules as /v1/members/{id}/links/).
  { name: 'PortalLinks', method: 'GET', path: '/portal/v1/links/', entry: 'functions/portal/links-list.ts', table: 'read', auth: 'portal' },
  {
    name: 'CreatePortalLink',
    method: 'POST',
    path: '/portal/v1/links/',
    entry: 'functions/portal/links-create.ts',
    table: 'write',
    auth: 'portal',
  },
  {
    name: 'DeletePortalLink',
    method: 'DELETE',
    path: '/portal/v1/links/{slug}/',
    entry: 'functions/portal/links-delete.ts',
    table: 'write',
    auth: 'portal',
  },

  // Previews of the emails to affiliates (docs/affiliate-emails.md), rendered with sample data; read-only.
  {
    name: 'ListEmailTemplates',
    method: 'GET',
    path: '/v1/email-templates/',
    entry: 'functions/email-templates/list.ts',
    table: 'read',
  },
  // ---- affiliate programmes: the public join page and applications (docs/affiliates.md "Applications") ----
  // A campaign's public page: no credential; the account and campaign by their slugs (404 page when closed).
  {
    name: 'JoinPage',
    method: 'GET',
    path: '/join/{account_slug}/{campaign_slug}/',
    entry: 'functions/join/page.ts',
    table: 'read',
    auth: 'none',
  },
  // The form's endpoint: always the same 202 (or the page's 303); stores a join request, queues the email.
  {
    name: 'SubmitApplication',
    method: 'POST',
    path: '/join/v1/{account_slug}/{campaign_slug}/applications/',
    entry: 'functions/join/apply.ts',
    table: 'write',
    auth: 'none',
    queues: ['member-emails'],
  },
  // The confirmation link: its page (a button, no change), and the button's POST, which creates the
  // application (and, approved automatically, its member: the approval email and the events are queued).
  {
    name: 'ConfirmApplicationPage',
    method: 'GET',
    path: '/join/confirm/{token}/',
    entry: 'functions/join/confirm-page.ts',
    table: 'read',
    auth: 'none',
  },
  {
    name: 'ConfirmApplication',
    method: 'POST',
    path: '/join/confirm/{token}/',
    entry: 'functions/join/confirm.ts',
    table: 'write',
    auth: 'none',
    queues: ['member-emails', 'webhook-events'],
  },
  // The operator's applications: decisions are member writes (owner, admin, API keys).
  { name: 'ListApplications', method: 'GET', path: '/v1/applications/', entry: 'functions/applications/list.ts', table: 'read' },
  { name: 'GetApplication', method: 'GET', path: '/v1/applications/{id}/', entry: 'functions/applications/get.ts', table: 'read' },
  {
    name: 'ApproveApplication',
    method: 'POST',
    path: '/v1/applications/{id}/approve/',
    entry: 'functions/applications/approve.ts',
    table: 'write',
    queues: ['member-emails', 'webhook-events'],
  },
  {
    name: 'RejectApplication',
    method: 'POST',
    path: '/v1/applications/{id}/reject/',
    entry: 'functions/applications/reject.ts',
    table: 'write',
    queues: ['member-emails', 'webhook-events'],
  },

  // ---- fraud rules, held rewards and the review queue (docs/fraud.md) ----
  { name: 'GetFraudRules', method: 'GET', path: '/v1/fraud-rules/', entry: 'functions/fraud-rules/get.ts', table: 'read' },
  { name: 'UpdateFraudRules', method: 'PATCH', path: '/v1/fraud-rules/', entry: 'functions/fraud-rules/update.ts', table: 'write' },
  // A read over recorded facts (a POST because it takes a body). Its table access is `write` all the same:
  // like every POST it counts against the API key's rate window and honours an Idempotency-Key, both writes.
  { name: 'PreviewFraudRule', method: 'POST', path: '/v1/fraud-rules/preview/', entry: 'functions/fraud-rules/preview.ts', table: 'write' },
  { name: 'ListFraudFlags', method: 'GET', path: '/v1/fraud-flags/', entry: 'functions/fraud-flags/list.ts', table: 'read' },
  { name: 'GetFraudFlag', method: 'GET', path: '/v1/fraud-flags/{id}/', entry: 'functions/fraud-flags/get.ts', table: 'read' },
  {
    name: 'ReleaseFraudFlag',
    method: 'POST',
    path: '/v1/fraud-flags/{id}/release/',
    entry: 'functions/fraud-flags/release.ts',
    table: 'write',
    queues: ['webhook-events'],
  },
  {
    name: 'VoidFraudFlag',
    method: 'POST',
    path: '/v1/fraud-flags/{id}/void/',
    entry: 'functions/fraud-flags/void.ts',
    table: 'write',
    queues: ['webhook-events'],
  },
  {
    name: 'ReviewFraudFlag',
    method: 'POST',
    path: '/v1/fraud-flags/{id}/review/',
    entry: 'functions/fraud-flags/review.ts',
    table: 'write',
    queues: ['webhook-events'],
  },
  {
    name: 'ReleaseReward',
    method: 'POST',
    path: '/v1/rewards/{id}/release/',
    entry: 'functions/rewards/release.ts',
    table: 'write',
    queues: ['webhook-events'],
  },

  // ---- unsubscribe links of member emails (RFC 8058; shared/email/unsubscribe.ts) ----
  // The link's page: a button, no change (a link scanner unsubscribes nobody). No credential: the token.
  {
    name: 'UnsubscribePage',
    method: 'GET',
    path: '/unsubscribe/{token}/',
    entry: 'functions/unsubscribe/page.ts',
    table: 'read',
    auth: 'none',
  },
  // One-click (a mail client's POST) and the page's button: sets the member's email opt-out.
  {
    name: 'Unsubscribe',
    method: 'POST',
    path: '/unsubscribe/{token}/',
    entry: 'functions/unsubscribe/confirm.ts',
    table: 'write',
    auth: 'none',
  },

  // The API's own description: public, no table access. Generated from this table (shared/openapi).
  { name: 'GetOpenApi', method: 'GET', path: '/v1/openapi.json', entry: 'functions/docs/openapi.ts', table: 'none', auth: 'none' },
  { name: 'ApiDocs', method: 'GET', path: '/docs/', entry: 'functions/docs/reference.ts', table: 'none', auth: 'none' },
  // `GET /` points people and API clients to the reference (302 to /docs/ with a JSON body of links).
  { name: 'ApiRoot', method: 'GET', path: '/', entry: 'functions/docs/root.ts', table: 'none', auth: 'none' },
  // Liveness for load balancers and uptime checks: no credential and no table read, so it costs nothing
  // and cannot be used to drive DynamoDB reads (see functions/health.ts).
  { name: 'Health', method: 'GET', path: '/health', entry: 'functions/health.ts', table: 'none', auth: 'none' },
];

export const publicDocumentationRoutes = ['GetOpenApi', 'ApiDocs', 'ApiRoot'] as const;

/**
 * Answers every request no route matches: 404 for an unknown path, 405 (with `Allow`) for a known
 * path with another method. In AWS it is the HTTP API's `$default` route.
 */
export const fallbackRoute = { name: 'Fallback', entry: 'functions/fallback.ts', table: 'none' } as const;

export interface RouteMatch {
  route: Route;
  pathParameters: Record<string, string>;
}

function segments(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

/** Matches a raw request path (still URL-encoded) against a route path; decoded parameters or null. */
export function matchPath(routePath: string, rawPath: string): Record<string, string> | null {
  const want = segments(routePath);
  const got = segments(rawPath);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const g = got[i] as string;
    if (w.startsWith('{') && w.endsWith('}')) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(g);
      } catch {
        return null;
      }
      params[w.slice(1, -1)] = decoded;
    } else if (w !== g) {
      return null;
    }
  }
  return params;
}

/** The most specific route for a method and path: literal segments beat parameters. */
export function findRoute(method: string, rawPath: string): RouteMatch | { allowed: HttpMethod[] } | null {
  const candidates = routes
    .map((route) => ({ route, params: matchPath(route.path, rawPath) }))
    .filter((c): c is { route: Route; params: Record<string, string> } => c.params !== null);
  if (candidates.length === 0) return null;
  // Prefer the route with the most literal segments (`/referrals/user/{x}/` over `/referrals/{id}/`).
  const literalCount = (p: string) => segments(p).filter((s) => !s.startsWith('{')).length;
  const best = Math.max(...candidates.map((c) => literalCount(c.route.path)));
  const specific = candidates.filter((c) => literalCount(c.route.path) === best);
  const hit = specific.find((c) => c.route.method === method.toUpperCase());
  if (hit) return { route: hit.route, pathParameters: hit.params };
  return { allowed: specific.map((c) => c.route.method) };
}
