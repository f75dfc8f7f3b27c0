// The OpenAPI document served live (issue 7, item 2): GET /v1/openapi.json without authentication is
// the generated document; GET /docs/ renders it; and a live request to EVERY route of the route table
// answers a status and body that the document describes (ajv, JSON Schema 2020-12), plus the error
// shapes (401, 404, 400, 422, 409) on a sample of routes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { routes, type Route } from '../../functions/routes';
import { EVENT_TYPES } from '../../shared/domain/events';
import { buildOpenApi } from '../../shared/openapi/document';
import { saveProviderConnection, saveProviderSettings } from '../../shared/store/provider';
import { basicAuthHeader as chargebeeAuth } from '../../shared/providers/chargebee/signature';
import { signatureHeader as billingSignature } from '../../shared/providers/paddle-billing/signature';
import { signatureHeader as stripeSignature } from '../../shared/providers/stripe/signature';
import { saveSubscription } from '../../shared/store/subscriptions';
import { approveReward } from '../../shared/flows/lifecycle';
import { createBatch } from '../../shared/flows/payouts';
import { getItem } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { DEFAULT_FRAUD_SETTINGS, FRAUD_RULES, type FraudAction, type FraudSettings } from '../../shared/domain/fraud';
import { recordFinding } from '../../shared/flows/fraud-flags';
import { recordUnattributed } from '../../shared/store/unattributed';
import { keys } from '../../shared/store/table';
import { api, type ApiOptions, type ApiResponse } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';
import { affiliateLoginUrl } from '../../shared/flows/affiliate-login';
import { issueJoinConfirmation } from '../../shared/flows/applications';
import { API_ORIGIN, freshEmail, loginAs, sessionHeaders, type DashboardLogin } from '../support/dashboard';
import { addTeamMember, issueLoginToken } from '../../shared/store/team';
import { issueUnsubscribeToken } from '../../shared/store/unsubscribe';
import { recordDynamoCalls } from '../support/dynamo-calls';
import { responseValidator } from '../support/openapi';
import { startTestQueues, type TestQueues } from '../support/queues';
import { startPaypalEmulator, type PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { saveRailConnection } from '../../shared/store/rail-connections';
import { startWiseEmulator, type WiseEmulator } from '../../infra/local/emulators/wise';
import { clearRailConnectionCache } from '../../shared/rails/intake';
import {
  paypalDelivery,
  putProcessingRailBatch,
  putUnclaimedPaypalPayout,
  stripeConnection,
  stripeDelivery,
  wiseConnection,
  wiseDelivery,
} from '../support/rail-deliveries';

const signed = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'paddle', 'signed-alerts.json'), 'utf8')) as {
  public_key: string;
  alerts: Record<string, { verifies: boolean; fields: Record<string, string> }>;
};

let queues: TestQueues;
/** The PayPal Payouts emulator the payout-rail samples connect to (started by the first that needs it). */
let paypalEmulator: Promise<PaypalEmulator> | undefined;
const paypalRail = () => {
  paypalEmulator ??= startPaypalEmulator({ settleAfterMs: null });
  return paypalEmulator;
};
/** The Stripe emulator (its Connect side) the portal's Stripe link sample connects to. */
let stripeEmulator: StripeEmulator | undefined;
/** The Wise emulator the Wise intake's sample connects to. */
let wiseEmulator: WiseEmulator | undefined;
/** The account connected to the Stripe emulator's Connect side (the portal's link and the Connect intake). */
async function connectStripeRail(): Promise<StripeEmulator> {
  stripeEmulator ??= await startStripeEmulator({ connect: { webhookUrl: null } });
  await saveRailConnection(accountId, 'stripe', stripeConnection(stripeEmulator));
  clearRailConnectionCache();
  return stripeEmulator;
}
/** PUT /v1/account/payout-rails/paypal/ as the owner, against the emulator. */
async function connectPaypalRail(): Promise<ApiResponse> {
  const emulator = await paypalRail();
  return api('PUT', '/v1/account/payout-rails/paypal/', {
    headers: owner.headers,
    body: { api_url: emulator.url, client_id: emulator.clientId, client_secret: emulator.clientSecret, webhook_id: emulator.webhookId },
  });
}
let key: string;
let publishableKey: string;
let accountId: string;
let check: ReturnType<typeof responseValidator>;
/** The account's owner, logged in to the dashboard (the session-only routes). */
let owner: DashboardLogin;
// The login routes are rate limited per IP: this file's own address (not 127.0.0.1, which other files use).
const LOGIN_IP = '198.51.100.21';
const problems: string[] = [];
let serial = 0;
const unique = (p: string) => `${p}-${++serial}-${Date.now().toString(36)}`;

beforeAll(async () => {
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  queues = await startTestQueues();
  ({ accountId, apiKey: key, publishableKey } = await newAccount('unlimited'));
  await saveProviderSettings(accountId, {
    vendorId: 1,
    authCode: 'unused',
    publicKey: signed.public_key,
    vendorsApiUrl: 'http://127.0.0.1:9/api',
    checkoutApiUrl: 'http://127.0.0.1:9/api',
  });
  owner = await loginAs(accountId, 'owner');
  const served = await api('GET', '/v1/openapi.json');
  check = responseValidator(served.body);
});

afterAll(async () => {
  await queues?.stop();
  await (await paypalEmulator)?.stop();
  await stripeEmulator?.stop();
  await wiseEmulator?.stop();
  delete process.env.WEBHOOK_ALLOW_LOOPBACK;
});

async function call(method: string, path: string, options: ApiOptions = {}): Promise<ApiResponse> {
  return api(method, path, { key, ...options });
}

async function must(res: Promise<ApiResponse>, status: number): Promise<any> {
  const r = await res;
  if (r.status !== status) throw new Error(`fixture answered ${r.status}: ${r.text}`);
  return r.body;
}

/** Validates one live answer against the document's operation for `route`. */
function validate(route: Route, res: ApiResponse, label = route.name): void {
  problems.push(
    ...check(route.method, route.path, res.status, res.status === 204 ? null : (res.body ?? res.text), res.headers['content-type']).map(
      (p) => `${label}: ${p}`,
    ),
  );
}

const routeNamed = (name: string) => routes.find((r) => r.name === name) as Route;

let subscriptionIds = 81_000_000;
const subscription = (id = ++subscriptionIds) =>
  saveSubscription(accountId, {
    id,
    unit_price: '10.00',
    currency: 'USD',
    status: 'active',
    email: `s${id}@example.com`,
    next_bill_date: '2031-07-01',
    last_bill_date: null,
    plan: {
      id: 9001,
      name: 'Pro monthly',
      amount: '10.00',
      currency: 'USD',
      interval: 'month',
      frequency: 1,
      descriptor: '$10.00 / month',
    },
  });

async function fixtures() {
  const campaign = await must(
    call('POST', '/v1/campaigns/', { body: { name: unique('Campaign'), allows_credit: true, credit_amount: '5.00' } }),
    201,
  );
  const sub = await subscription();
  const name = unique('member');
  const member = await must(
    call('POST', '/v1/members/', {
      body: { identifier: name, email: `${name}@example.com`, campaign: { id: campaign.id }, subscription: { id: sub.id } },
    }),
    201,
  );
  const referral = await must(call('POST', '/v1/referrals/', { body: { user_identifier: unique('user'), member_code: member.code } }), 200);
  return { campaign, member, referral };
}

/** A commission of 4.00 as the reward worker records it; approved into a due payout, and batched, when asked. */
async function money(o: {
  approve?: boolean;
  batch?: boolean;
  holdDays?: number;
}): Promise<{ rewardId: string; referralId: string; memberId: string; payoutId?: string; batchId?: string }> {
  const campaign = await must(
    call('POST', '/v1/campaigns/', {
      body: { name: unique('Money'), allows_commission: true, commission_amount: '4.00', hold_days: o.holdDays ?? 0 },
    }),
    201,
  );
  const name = unique('payee');
  const member = await must(
    call('POST', '/v1/members/', {
      body: { identifier: name, email: `${name}@example.com`, campaign: { id: campaign.id }, payout_email: `${name}@pay.example.com` },
    }),
    201,
  );
  const referral = await must(call('POST', '/v1/referrals/', { body: { user_identifier: unique('user'), member_code: member.code } }), 200);
  const stored = toReferral(await getItem(keys.referral(accountId, referral.id)))!;
  const rewardId = (
    await recordRewards(
      accountId,
      stored,
      [{ payment_id: ++subscriptionIds, type: 'commission', amount: 400, currency: 'USD' }],
      false,
      true,
    )
  ).rewards[0]!.id;
  const ids = { rewardId, referralId: referral.id as string, memberId: member.id as string };
  if (!o.approve) return ids;
  const payoutId = (await approveReward(accountId, rewardId)).payout_id!;
  if (!o.batch) return { ...ids, payoutId };
  return { ...ids, payoutId, batchId: (await createBatch(accountId, { format: 'wise', currency: 'USD', payout_ids: [payoutId] })).id };
}

/**
 * A duplicate_ip flag on a new commission's referral (hold 30 days), recorded by the real flow as the
 * FraudScreen worker records a finding: holding that commission unless `action` is `flag`.
 */
async function fraudFlag(
  action: FraudAction = 'hold',
): Promise<{ flagId: string; rewardId: string; referralId: string; memberId: string }> {
  const m = await money({ holdDays: 30 });
  const settings = Object.fromEntries(
    FRAUD_RULES.map((rule) => [rule, { ...DEFAULT_FRAUD_SETTINGS[rule], action }]),
  ) as unknown as FraudSettings;
  const flag = await recordFinding(
    accountId,
    {
      rule: 'duplicate_ip',
      subject: { type: 'referral', id: m.referralId },
      member_id: m.memberId,
      detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
      evidence: { referral_ids: [m.referralId], figures: { referrals: 4 } },
      dedupe_key: `duplicate_ip#referral#${m.referralId}`,
    },
    settings,
  );
  if (!flag) throw new Error('fixture flag not recorded');
  return { ...m, flagId: flag.id };
}

const hook = () => must(call('POST', '/v1/webhook-endpoints/', { body: { url: 'http://127.0.0.1:9/hook' } }), 201);

/** The owner's session: its cookie, and this site's Origin (writes). */
const asOwner = (options: ApiOptions = {}): ApiOptions => ({ ...options, headers: { ...owner.headers, ...options.headers } });
const teamMember = () => addTeamMember(accountId, freshEmail('openapi'), 'viewer');
const apiKeyRecord = () => must(api('POST', '/v1/api-keys/', asOwner({ body: { name: unique('key') } })), 201);

/** `Authorization` of a portal session of the member (a link made with the key, opened). */
async function portalAs(memberId: string): Promise<Record<string, string>> {
  const link = await must(call('POST', `/v1/members/${memberId}/portal-sessions/`, { body: {} }), 201);
  const opened = await must(
    api('POST', '/portal/v1/sessions/', { body: { token: new URL(link.url).hash.slice('#token='.length) }, sourceIp: LOGIN_IP }),
    201,
  );
  return { authorization: `Bearer ${opened.token}` };
}

/** A named link of the member, made with the key. */
const memberLink = (memberId: string) =>
  must(call('POST', `/v1/members/${memberId}/links/`, { body: { slug: unique('link').toLowerCase(), destination_path: '/pricing' } }), 201);

/** A campaign open to applications (no terms, no questions), and the account's slug: its public page's path. */
async function programme(approval: 'auto' | 'manual' = 'manual'): Promise<{ id: string; path: string }> {
  const [account, campaign] = await Promise.all([
    must(call('GET', '/v1/account/'), 200),
    must(
      call('POST', '/v1/campaigns/', {
        body: {
          name: unique('Programme'),
          allows_commission: true,
          commission_amount: '4.00',
          signup: { enabled: true, approval, terms_url: null, questions: [] },
        },
      }),
      201,
    ),
  ]);
  return { id: campaign.id, path: `${account.slug}/${campaign.slug}/` };
}

// The join limits count per client address in the shared table: an address of this run's own per application.
const joinIp = () => `2001:db8:${Date.now().toString(16).slice(-4)}::${(++serial).toString(16)}`;
const applicant = (email: string) => ({ email, name: 'Casey Jones', country: 'gb', payout_email: null, answers: {}, accepted_terms: true });
/** Messages read off member-emails so far (no email worker runs here). */
const emails: Record<string, unknown>[] = [];

/**
 * Applies through the public form; the path of the confirmation link the email worker would send
 * (`/join/confirm/<token>/`) for the join request it is told about.
 */
async function joinConfirmPath(campaign: { path: string }, email = `${unique('applicant')}@creator.example`): Promise<string> {
  await must(api('POST', `/join/v1/${campaign.path}applications/`, { body: applicant(email), sourceIp: joinIp() }), 202);
  const confirm = await pollUntil(async () => {
    for (const m of await queues.receiveAll('member-emails')) emails.push(m.json as Record<string, unknown>);
    return emails.find((m) => m.email === email && m.template === 'application-confirm') ?? null;
  });
  return new URL((await issueJoinConfirmation(accountId, String(confirm.join_request_id))) as string).pathname;
}

/** The confirmation link's button, as the page's form posts it. */
const confirmJoin = (path: string) => api('POST', path, { rawBody: '', headers: { 'content-type': 'application/x-www-form-urlencoded' } });

/** A pending application (manual approval), applied and confirmed as the public doors do: its id. */
async function pendingApplication(): Promise<string> {
  const campaign = await programme('manual');
  expect((await confirmJoin(await joinConfirmPath(campaign))).status).toBe(200);
  const listed = await must(call('GET', `/v1/applications/?campaign=${campaign.id}`), 200);
  expect(listed.results.map((a: { status: string }) => a.status)).toEqual(['pending']);
  return listed.results[0].id;
}

/** One live request per route (its happy path). A route added without one fails the completeness test. */
const SAMPLES: Record<string, () => Promise<ApiResponse>> = {
  ListReferrals: () => call('GET', '/v1/referrals/?page_size=2'),
  CreateReferral: async () =>
    call('POST', '/v1/referrals/', { body: { user_identifier: unique('user'), member_code: (await fixtures()).member.code } }),
  GetReferral: async () => call('GET', `/v1/referrals/${(await fixtures()).referral.id}/`),
  ConvertReferral: async () =>
    call('POST', `/referrals/${(await fixtures()).referral.id}/conversion/`, { body: { subscription_id: (await subscription()).id } }),
  ConvertReferralV1: async () =>
    call('POST', `/v1/referrals/${(await fixtures()).referral.id}/conversion/`, { body: { subscription_id: (await subscription()).id } }),
  DeleteReferral: async () => call('DELETE', `/v1/referrals/${(await fixtures()).referral.id}/`),
  GetReferralByUser: async () => call('GET', `/v1/referrals/user/${encodeURIComponent((await fixtures()).referral.user_identifier)}/`),
  DiagnoseReferral: async () => {
    // One sighting (as the subscription-sync worker records it), so the list's item shape is validated too.
    const email = `${unique('diag')}@example.com`;
    await recordUnattributed(accountId, {
      subscriptionId: (await subscription()).id,
      email,
      reason: 'no_referral_hint',
      detail: 'no referral',
      eventId: 'evt_openapi',
      checkoutId: 'txn_01openapi',
    });
    return call('GET', `/v1/referrals/${(await fixtures()).referral.id}/diagnosis/?email=${encodeURIComponent(email)}`);
  },
  ListCampaigns: () => call('GET', '/v1/campaigns/'),
  CreateCampaign: () =>
    call('POST', '/v1/campaigns/', {
      body: { name: unique('New'), allows_commission: true, commission_amount: 2.5, commission_months: 12 },
    }),
  GetCampaign: async () => call('GET', `/v1/campaigns/${(await fixtures()).campaign.id}/`),
  UpdateCampaign: async () => call('PATCH', `/v1/campaigns/${(await fixtures()).campaign.id}/`, { body: { reward_threshold: '10.00' } }),
  DeleteCampaign: async () => call('DELETE', `/v1/campaigns/${(await fixtures()).campaign.id}/`),
  ListMembers: () => call('GET', '/v1/members/'),
  CreateMember: () =>
    call('POST', '/v1/members/', { body: { identifier: unique('m'), email: `${unique('m')}@example.com`, first_name: 'Ada' } }),
  GetMember: async () => call('GET', `/v1/members/${(await fixtures()).member.id}/`),
  UpdateMember: async () =>
    call('PATCH', `/v1/members/${(await fixtures()).member.id}/`, { body: { campaign: null, last_name: 'Lovelace' } }),
  DeleteMember: async () => call('DELETE', `/v1/members/${(await fixtures()).member.id}/`),
  ListSubscriptions: () => call('GET', '/v1/subscriptions/?status=active'),
  GetSubscription: async () => call('GET', `/v1/subscriptions/${(await subscription()).id}/`),
  ListWebhookEndpoints: () => call('GET', '/v1/webhook-endpoints/'),
  CreateWebhookEndpoint: () =>
    call('POST', '/v1/webhook-endpoints/', { body: { url: 'http://127.0.0.1:9/new', events: ['reward.created'], description: 'Rewards' } }),
  GetWebhookEndpoint: async () => call('GET', `/v1/webhook-endpoints/${(await hook()).id}/`),
  UpdateWebhookEndpoint: async () => call('PATCH', `/v1/webhook-endpoints/${(await hook()).id}/`, { body: { enabled: false } }),
  DeleteWebhookEndpoint: async () => call('DELETE', `/v1/webhook-endpoints/${(await hook()).id}/`),
  ListWebhookDeliveries: async () => call('GET', `/v1/webhook-endpoints/${(await hook()).id}/deliveries/`),
  ReportTimeseries: async () => {
    await money({ approve: true });
    return call('GET', '/v1/reports/timeseries/?metric=commission_earned&interval=week');
  },
  ReportOverview: () => call('GET', '/v1/reports/overview/'),
  ExportCsv: async () => {
    await money({ approve: true });
    return call('GET', '/v1/exports/rewards.csv?page_size=1');
  },
  ReportMembers: () => call('GET', '/v1/reports/members/?sort=commission&limit=5'),
  ListRewards: async () => {
    await money({ approve: true });
    return call('GET', '/v1/rewards/?page_size=2');
  },
  GetReward: async () => call('GET', `/v1/rewards/${(await money({ approve: true })).rewardId}/`),
  ApproveReward: async () => call('POST', `/v1/rewards/${(await money({})).rewardId}/approve/`),
  VoidReward: async () => call('POST', `/v1/rewards/${(await money({ approve: true })).rewardId}/void/`, { body: { reason: 'duplicate' } }),
  ListPayouts: async () => {
    await money({ approve: true });
    return call('GET', '/v1/payouts/?status=due');
  },
  PayoutSummary: async () => {
    await money({ approve: true });
    return call('GET', '/v1/payouts/summary/');
  },
  GetPayout: async () => call('GET', `/v1/payouts/${(await money({ approve: true })).payoutId}/`),
  MarkPayoutPaid: async () =>
    call('POST', `/v1/payouts/${(await money({ approve: true })).payoutId}/mark-paid/`, {
      body: { reference: 'WISE-1', paid_at: 1767225600 },
    }),
  MarkPayoutFailed: async () =>
    call('POST', `/v1/payouts/${(await money({ approve: true, batch: true })).payoutId}/mark-failed/`, { body: { reason: 'bounced' } }),
  CancelPayout: async () =>
    call('POST', `/v1/payouts/${(await money({ approve: true, batch: true })).payoutId}/cancel/`, { body: { reason: 'not sent' } }),
  CreatePayoutBatch: async () =>
    call('POST', '/v1/payout-batches/', {
      body: { format: 'paypal', currency: 'USD', payout_ids: [(await money({ approve: true })).payoutId] },
    }),
  ListPayoutBatches: async () => {
    await money({ approve: true, batch: true });
    return call('GET', '/v1/payout-batches/?page_size=2');
  },
  GetPayoutBatch: async () => call('GET', `/v1/payout-batches/${(await money({ approve: true, batch: true })).batchId}/`),
  PayoutBatchFile: async () => call('GET', `/v1/payout-batches/${(await money({ approve: true, batch: true })).batchId}/file`),
  MarkPayoutBatchPaid: async () =>
    call('POST', `/v1/payout-batches/${(await money({ approve: true, batch: true })).batchId}/mark-paid/`, { body: {} }),
  // One intake for every provider: Paddle Billing's, Stripe's and Chargebee's answers validated here, Classic's returned.
  ProviderWebhook: async () => {
    const { accountId: billing } = await newAccount();
    await saveProviderConnection(billing, {
      kind: 'paddle-billing',
      apiKey: 'pdl_sdbx_apikey_unused00',
      apiUrl: 'http://127.0.0.1:9',
      webhookSecret: 'pdl_ntfset_openapi00000001',
    });
    const billingBody = JSON.stringify({
      event_id: 'evt_openapi',
      event_type: 'customer.updated',
      occurred_at: new Date().toISOString(),
      data: {},
    });
    const billingRes = await api('POST', `/webhooks/paddle-billing/${billing}/`, {
      rawBody: billingBody,
      headers: {
        'content-type': 'application/json',
        'paddle-signature': billingSignature('pdl_ntfset_openapi00000001', billingBody, Math.floor(Date.now() / 1000)),
      },
    });
    expect(billingRes.status).toBe(200);
    validate(routeNamed('ProviderWebhook'), billingRes, 'Paddle Billing');
    const { accountId: stripe } = await newAccount();
    await saveProviderConnection(stripe, {
      kind: 'stripe',
      secretKey: 'rk_test_openapiunused00',
      apiUrl: 'http://127.0.0.1:9',
      webhookSecret: 'whsec_openapi0000000001',
    });
    const stripeBody = JSON.stringify({
      id: 'evt_openapi',
      object: 'event',
      type: 'customer.updated',
      created: Math.floor(Date.now() / 1000),
      data: { object: {} },
    });
    const stripeRes = await api('POST', `/webhooks/stripe/${stripe}/`, {
      rawBody: stripeBody,
      headers: {
        'content-type': 'application/json',
        'stripe-signature': stripeSignature('whsec_openapi0000000001', stripeBody, Math.floor(Date.now() / 1000)),
      },
    });
    expect(stripeRes.status).toBe(200);
    validate(routeNamed('ProviderWebhook'), stripeRes, 'Stripe');
    const { accountId: chargebee } = await newAccount();
    await saveProviderConnection(chargebee, {
      kind: 'chargebee',
      site: 'openapi-test',
      apiKey: 'test_openapiunused00',
      apiUrl: 'http://127.0.0.1:9',
      webhookUsername: 'refloop',
      webhookPassword: 'openapi-webhook-password-0001',
    });
    const chargebeeRes = await api('POST', `/webhooks/chargebee/${chargebee}/`, {
      rawBody: JSON.stringify({
        id: 'ev_openapi',
        occurred_at: Math.floor(Date.now() / 1000),
        source: 'api',
        object: 'event',
        api_version: 'v2',
        event_type: 'customer_changed',
        webhook_status: 'scheduled',
        content: {},
      }),
      headers: { 'content-type': 'application/json', authorization: chargebeeAuth('refloop:openapi-webhook-password-0001') },
    });
    expect(chargebeeRes.status).toBe(200);
    validate(routeNamed('ProviderWebhook'), chargebeeRes, 'Chargebee');
    return api('POST', `/webhooks/paddle/${accountId}/`, {
      rawBody: new URLSearchParams(signed.alerts.subscriptionCreatedEvent?.fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  },
  BrowserScript: () => api('GET', '/js/refloop.js'),
  RecordClick: async () =>
    api('POST', '/js/v1/clicks/', { key: publishableKey, body: { code: (await fixtures()).member.code, visitor_id: unique('v') } }),
  RecordClickPreflight: () =>
    api('OPTIONS', '/js/v1/clicks/', { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } }),
  CreateJsReferral: async () =>
    api('POST', '/js/v1/referrals/', {
      key: publishableKey,
      body: { member_code: (await fixtures()).member.code, user_identifier: unique('js-user') },
    }),
  CreateJsReferralPreflight: () =>
    api('OPTIONS', '/js/v1/referrals/', { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } }),
  // The dashboard (docs/dashboard.md): login routes, session-only routes, the account's settings.
  CreateLoginLink: () => api('POST', '/auth/login-links/', { body: { email: freshEmail('link') }, sourceIp: LOGIN_IP }),
  CreateSession: async () => {
    const member = await addTeamMember(accountId, freshEmail('login'), 'finance');
    const { token } = await issueLoginToken(accountId, member.id);
    return api('POST', '/auth/sessions/', { body: { token }, sourceIp: LOGIN_IP });
  },
  GetCurrentSession: () => api('GET', '/auth/sessions/current/', { headers: owner.headers }),
  EndCurrentSession: async () => api('DELETE', '/auth/sessions/current/', { headers: (await loginAs(accountId, 'viewer')).headers }),
  ListTeam: async () => {
    await teamMember();
    return api('GET', '/v1/team/', asOwner());
  },
  InviteTeamMember: () => api('POST', '/v1/team/', asOwner({ body: { email: freshEmail('invite'), role: 'admin' } })),
  UpdateTeamMember: async () => api('PATCH', `/v1/team/${(await teamMember()).id}/`, asOwner({ body: { role: 'finance' } })),
  RemoveTeamMember: async () => api('DELETE', `/v1/team/${(await teamMember()).id}/`, asOwner()),
  ListApiKeys: async () => {
    await apiKeyRecord();
    return api('GET', '/v1/api-keys/', asOwner());
  },
  CreateApiKey: () => api('POST', '/v1/api-keys/', asOwner({ body: { name: 'Production backend' } })),
  RevokeApiKey: async () => api('DELETE', `/v1/api-keys/${(await apiKeyRecord()).id}/`, asOwner()),
  GetAccount: () => call('GET', '/v1/account/'),
  UpdateAccount: () =>
    api(
      'PATCH',
      '/v1/account/',
      asOwner({ body: { embed_origins: ['https://app.acme.example'], email_sender: { address: 'rewards@acme.example', name: 'Acme' } } }),
    ),
  // A fresh account: this one mirrors subscriptions, so switching its provider kind is refused (409).
  SetProviderConnection: async () => {
    const { accountId: fresh } = await newAccount();
    const admin = await loginAs(fresh, 'admin');
    // On a closed loopback port (this file allows loopback URLs): a background sync never reaches Stripe.
    return api('POST', '/v1/account/provider/', {
      headers: admin.headers,
      body: {
        kind: 'stripe',
        secret_key: 'rk_test_openapiLiveSample01',
        webhook_secret: 'whsec_openapiLiveSample01',
        api_url: 'http://127.0.0.1:9',
      },
    });
  },
  // Payout rails: PayPal connected against its emulator (the credentials are checked there first).
  ListPayoutRails: async () => {
    await must(connectPaypalRail(), 200);
    return api('GET', '/v1/account/payout-rails/', asOwner());
  },
  SetPayoutRail: connectPaypalRail,
  DeletePayoutRail: async () => {
    await must(connectPaypalRail(), 200);
    return api('DELETE', '/v1/account/payout-rails/paypal/', asOwner());
  },
  // Rail payouts: an unclaimed PayPal payout sent again, a processing PayPal batch read back (both queued).
  ResendPayout: async () => call('POST', `/v1/payouts/${(await putUnclaimedPaypalPayout(accountId)).id}/resend/`),
  ReconcilePayoutBatch: async () => call('POST', `/v1/payout-batches/${await putProcessingRailBatch(accountId)}/reconcile/`),
  // The rails' webhook intakes: a delivery signed as each emulator signs one (no credential).
  PaypalRailWebhook: async () => {
    await must(connectPaypalRail(), 200);
    clearRailConnectionCache();
    return api('POST', `/webhooks/paypal/${accountId}/`, paypalDelivery(await paypalRail()));
  },
  StripeConnectRailWebhook: async () => api('POST', `/webhooks/stripe-connect/${accountId}/`, stripeDelivery(await connectStripeRail())),
  WiseRailWebhook: async () => {
    wiseEmulator ??= await startWiseEmulator({ webhookUrl: null });
    await saveRailConnection(accountId, 'wise', wiseConnection(wiseEmulator));
    clearRailConnectionCache();
    return api('POST', `/webhooks/wise/${accountId}/`, wiseDelivery(wiseEmulator));
  },
  // The member portal: a link made with the key, opened; the portal API with its session.
  CreatePortalSession: async () =>
    call('POST', `/v1/members/${(await fixtures()).member.id}/portal-sessions/`, {
      body: { return_url: 'https://app.example.com/account' },
    }),
  RevokePortalSessions: async () => {
    const { member } = await fixtures();
    await portalAs(member.id);
    return call('DELETE', `/v1/members/${member.id}/portal-sessions/`);
  },
  // A member's named links (docs/attribution.md), with the key.
  ListMemberLinks: async () => {
    const { member } = await fixtures();
    await memberLink(member.id);
    return call('GET', `/v1/members/${member.id}/links/`);
  },
  CreateMemberLink: async () =>
    call('POST', `/v1/members/${(await fixtures()).member.id}/links/`, {
      body: { slug: 'youtube', destination_path: '/pricing?plan=pro' },
    }),
  DeleteMemberLink: async () => {
    const { member } = await fixtures();
    return call('DELETE', `/v1/members/${member.id}/links/${(await memberLink(member.id)).slug}/`);
  },
  EmbedScript: () => api('GET', '/js/refloop-embed.js'),
  PortalPage: () => api('GET', `/portal/${accountId}/`),
  UnsubscribePage: async () =>
    api('GET', `/unsubscribe/${await issueUnsubscribeToken({ accountId, memberId: (await fixtures()).member.id, programme: 'Acme' })}/`),
  Unsubscribe: async () =>
    api('POST', `/unsubscribe/${await issueUnsubscribeToken({ accountId, memberId: (await fixtures()).member.id, programme: 'Acme' })}/`, {
      rawBody: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
  OpenPortalSession: async () => {
    const link = await must(call('POST', `/v1/members/${(await fixtures()).member.id}/portal-sessions/`, { body: {} }), 201);
    return api('POST', '/portal/v1/sessions/', { body: { token: new URL(link.url).hash.slice('#token='.length) }, sourceIp: LOGIN_IP });
  },
  PortalMe: async () => api('GET', '/portal/v1/me/', { headers: await portalAs((await fixtures()).member.id) }),
  UpdatePortalMe: async () =>
    api('PATCH', '/portal/v1/me/', {
      headers: await portalAs((await fixtures()).member.id),
      body: { payout_email: 'me@pay.example.com', email_opt_out: true },
    }),
  PortalStripeAccountLink: async () => {
    await connectStripeRail();
    return api('POST', '/portal/v1/me/stripe-account-link/', { headers: await portalAs((await fixtures()).member.id) });
  },
  PortalStats: async () => api('GET', '/portal/v1/stats/?interval=week', { headers: await portalAs((await fixtures()).member.id) }),
  PortalReferrals: async () => api('GET', '/portal/v1/referrals/', { headers: await portalAs((await fixtures()).member.id) }),
  PortalRewards: async () => {
    const { rewardId } = await money({ approve: true });
    const reward = await must(call('GET', `/v1/rewards/${rewardId}/`), 200);
    return api('GET', '/portal/v1/rewards/', { headers: await portalAs(reward.member_id) });
  },
  PortalPayouts: async () => {
    const { payoutId } = await money({ approve: true });
    const payout = await must(call('GET', `/v1/payouts/${payoutId}/`), 200);
    return api('GET', '/portal/v1/payouts/', { headers: await portalAs(payout.member_id) });
  },
  PortalLoginPage: () => api('GET', `/portal/${accountId}/login/`),
  CreatePortalLoginLink: async () =>
    api('POST', '/portal/v1/login-links/', { body: { account: accountId, email: (await fixtures()).member.email }, sourceIp: LOGIN_IP }),
  OpenPortalLoginSession: async () => {
    const url = await affiliateLoginUrl(accountId, (await fixtures()).member.id);
    return api('POST', '/portal/v1/login-sessions/', {
      body: { token: new URL(url as string).hash.slice('#token='.length) },
      sourceIp: LOGIN_IP,
    });
  },
  EndPortalSession: () => api('DELETE', '/portal/v1/sessions/current/'),
  GetPortalTaxDetails: async () => api('GET', '/portal/v1/tax-details/', { headers: await portalAs((await fixtures()).member.id) }),
  PutPortalTaxDetails: async () =>
    api('PUT', '/portal/v1/tax-details/', {
      headers: await portalAs((await fixtures()).member.id),
      body: { legal_name: 'Alice Smith', country: 'US', address: '1 Main Street', us: { tin: '123-45-6789', w9_certified: true } },
    }),
  // The member's own named links, with a portal session.
  PortalLinks: async () => {
    const { member } = await fixtures();
    await memberLink(member.id);
    return api('GET', '/portal/v1/links/', { headers: await portalAs(member.id) });
  },
  CreatePortalLink: async () =>
    api('POST', '/portal/v1/links/', {
      headers: await portalAs((await fixtures()).member.id),
      body: { slug: 'newsletter', destination_path: '/blog' },
    }),
  DeletePortalLink: async () => {
    const { member } = await fixtures();
    const link = await memberLink(member.id);
    return api('DELETE', `/portal/v1/links/${link.slug}/`, { headers: await portalAs(member.id) });
  },
  ExportTaxDetails: () => api('GET', '/v1/exports/tax-details.csv/', asOwner()),
  ListEmailTemplates: () => call('GET', '/v1/email-templates/'),
  // Affiliate programmes (docs/affiliates.md): the public page, its form, the confirmation link (its page,
  // then its button, which creates the application), and the operator's applications.
  JoinPage: async () => api('GET', `/join/${(await programme()).path}`),
  SubmitApplication: async () =>
    api('POST', `/join/v1/${(await programme()).path}applications/`, {
      body: applicant(`${unique('applicant')}@creator.example`),
      sourceIp: joinIp(),
    }),
  ConfirmApplicationPage: async () => api('GET', await joinConfirmPath(await programme())),
  // Approved at once: the member is created in the same transaction.
  ConfirmApplication: async () => confirmJoin(await joinConfirmPath(await programme('auto'))),
  ListApplications: async () => {
    await pendingApplication();
    return call('GET', '/v1/applications/?status=pending&page_size=2');
  },
  GetApplication: async () => call('GET', `/v1/applications/${await pendingApplication()}/`),
  ApproveApplication: async () => call('POST', `/v1/applications/${await pendingApplication()}/approve/`),
  RejectApplication: async () =>
    call('POST', `/v1/applications/${await pendingApplication()}/reject/`, { body: { reason: 'Not a fit for this programme.' } }),
  // Fraud rules, the review queue and held rewards (docs/fraud.md): flags recorded by the real flows.
  GetFraudRules: () => call('GET', '/v1/fraud-rules/'),
  UpdateFraudRules: () =>
    call('PATCH', '/v1/fraud-rules/', {
      body: { disposable_email: { action: 'hold' }, duplicate_ip: { max_referrals: 5, window_hours: 12 } },
    }),
  PreviewFraudRule: async () => {
    await fraudFlag();
    return call('POST', '/v1/fraud-rules/preview/', { body: { rule: 'duplicate_ip', action: 'hold', thresholds: { max_referrals: 1 } } });
  },
  ListFraudFlags: async () => {
    await fraudFlag();
    await fraudFlag('flag');
    return call('GET', '/v1/fraud-flags/?status=open&page_size=2');
  },
  GetFraudFlag: async () => call('GET', `/v1/fraud-flags/${(await fraudFlag()).flagId}/`),
  ReleaseFraudFlag: async () => call('POST', `/v1/fraud-flags/${(await fraudFlag()).flagId}/release/`, { body: { note: 'Checked.' } }),
  VoidFraudFlag: async () => call('POST', `/v1/fraud-flags/${(await fraudFlag()).flagId}/void/`, { body: {} }),
  ReviewFraudFlag: async () => call('POST', `/v1/fraud-flags/${(await fraudFlag('flag')).flagId}/review/`, { body: { note: null } }),
  ReleaseReward: async () => call('POST', `/v1/rewards/${(await fraudFlag()).rewardId}/release/`),
  GetOpenApi: () => api('GET', '/v1/openapi.json'),
  ApiDocs: () => api('GET', '/docs'),
  ApiRoot: () => api('GET', '/'),
  Health: () => api('GET', '/health'),
};

describe('the served document', () => {
  it('GET /v1/openapi.json needs no key and is the generated document, with this server', async () => {
    const res = await api('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const { servers, ...doc } = res.body;
    expect(servers).toEqual([{ url: 'https://api.test' }]);
    const { servers: _local, ...generated } = JSON.parse(JSON.stringify(buildOpenApi(routes)));
    expect(doc).toEqual(generated);
  });

  it('the outgoing webhooks (one per event type) say that they carry none of the API credentials: security: []', async () => {
    const res = await api('GET', '/v1/openapi.json');
    const hooks = Object.entries(res.body.webhooks as Record<string, { post: { security?: unknown } }>);
    expect(hooks.map(([type]) => type).sort()).toEqual([...EVENT_TYPES].sort());
    for (const [type, item] of hooks) expect({ type, security: item.post.security }).toEqual({ type, security: [] });
  });

  it('GET /docs renders every operation and links the JSON', async () => {
    const res = await api('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('href="/v1/openapi.json"');
    for (const r of routes)
      expect({ route: r.name, shown: res.text.includes(`id="op-${r.name}"`) }).toEqual({ route: r.name, shown: true });
    expect(res.text).toContain('referral.created');
  });

  it('GET /docs shows the examples: every operation has one, the request and success ones open', async () => {
    const res = await api('GET', '/docs/');
    const sections = res.text.split('<section id="op-').slice(1);
    const byRoute = new Map(sections.map((s) => [s.slice(0, s.indexOf('"')), s]));
    const op = buildOpenApi(routes) as any;
    for (const r of routes) {
      const section = byRoute.get(r.name) ?? '';
      const hasBody = Object.values(op.paths[r.path][r.method.toLowerCase()].responses).some((x: any) => x.content);
      expect({ route: r.name, example: section.includes('<summary>Example ') }).toEqual({ route: r.name, example: hasBody });
    }
    // The create's request example and its success example, escaped, open.
    const create = byRoute.get('CreateReferral') as string;
    expect(create).toContain(
      '<details class="ex" open><summary>Request example</summary><pre>{\n  &quot;user_identifier&quot;: &quot;user-4821&quot;,\n  &quot;member_code&quot;: &quot;ALICE2026&quot;\n}</pre></details>',
    );
    expect(create).toContain('<details class="ex" open><summary>Example 200</summary>');
    expect(create).toContain(
      '<details class="ex"><summary>Example 401</summary><pre>{\n  &quot;detail&quot;: &quot;Authentication credentials were not provided.&quot;\n}</pre>',
    );
    // Path parameter examples in the parameter table.
    expect(byRoute.get('GetCampaign')).toContain('<td><code>8f3a21c4</code></td>');
  });
});

describe('the root and the health check', () => {
  it('GET / redirects to /docs/ (302) and gives API clients the absolute links, no key needed', async () => {
    for (const path of ['/', '']) {
      const res = await api('GET', path);
      expect({ path, status: res.status, location: res.headers.location }).toEqual({ path, status: 302, location: '/docs/' });
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({
        docs: 'https://api.test/docs/',
        openapi: 'https://api.test/v1/openapi.json',
        health: 'https://api.test/health',
      });
    }
    // Where it points answers.
    expect((await api('GET', '/docs/')).status).toBe(200);
    expect((await api('POST', '/')).status).toBe(405);
  });

  it('GET /health answers 200 {"status": "ok"} without a key and without reading the table', async () => {
    const recording = recordDynamoCalls();
    const res = await api('GET', '/health').finally(() => recording.stop());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(recording.calls).toEqual([]);
    expect((await api('GET', '/health/')).body).toEqual({ status: 'ok' });
    expect((await api('GET', '/health', { key: 'rfl_live_not-a-key' })).status).toBe(200);
  });
});

describe('live responses validate against the document', () => {
  it('every route has a live sample here', () => {
    expect(routes.filter((r) => !SAMPLES[r.name]).map((r) => r.name)).toEqual([]);
  });

  for (const route of routes) {
    it(`${route.name}: ${route.method} ${route.path}`, async () => {
      const sample = SAMPLES[route.name];
      if (!sample) throw new Error(`no live sample for ${route.name}`);
      const before = problems.length;
      const res = await sample();
      // Success: 2xx, or the documented redirect of `GET /`.
      expect({ route: route.name, status: res.status < 300 || res.status === 302 ? 'success' : res.text }).toEqual({
        route: route.name,
        status: 'success',
      });
      validate(route, res);
      expect(problems.slice(before)).toEqual([]);
    });
  }

  it('error answers validate too: 401, 404, 400 (fields and detail), 422 and 409 of Idempotency-Key', async () => {
    const before = problems.length;
    const { referral, member } = await fixtures();
    validate(routeNamed('ListMembers'), await api('GET', '/v1/members/'), 'no key');
    validate(routeNamed('GetReferral'), await call('GET', `/v1/referrals/${'f'.repeat(32)}/`), 'unknown id');
    validate(routeNamed('CreateMember'), await call('POST', '/v1/members/', { body: { email: 'nope' } }), 'invalid fields');
    validate(
      routeNamed('CreateMember'),
      await call('POST', '/v1/members/', { rawBody: '{', headers: { 'content-type': 'application/json' } }),
      'bad JSON',
    );
    validate(routeNamed('ListReferrals'), await call('GET', '/v1/referrals/?page_size=0'), 'bad page size');
    validate(
      routeNamed('ConvertReferral'),
      await call('POST', `/referrals/${referral.id}/conversion/`, { body: {} }),
      'conversion without target',
    );
    const idem = { 'idempotency-key': unique('idem') };
    validate(
      routeNamed('UpdateMember'),
      await call('PATCH', `/v1/members/${member.id}/`, { body: { first_name: 'A' }, headers: idem }),
      'first',
    );
    const replay = await call('PATCH', `/v1/members/${member.id}/`, { body: { first_name: 'A' }, headers: idem });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    validate(routeNamed('UpdateMember'), replay, 'replayed');
    const reused = await call('PATCH', `/v1/members/${member.id}/`, { body: { first_name: 'B' }, headers: idem });
    expect(reused.status).toBe(422);
    validate(routeNamed('UpdateMember'), reused, 'reused key');
    // The dashboard's errors: an API key on a session-only route (403), no session (401), a used or unknown
    // login token (401), a cross-site logout (403), a field error on the team and on the account.
    validate(routeNamed('ListTeam'), await call('GET', '/v1/team/'), 'API key on a session-only route');
    validate(routeNamed('ListTeam'), await api('GET', '/v1/team/'), 'no session');
    validate(routeNamed('GetCurrentSession'), await api('GET', '/auth/sessions/current/'), 'no session');
    validate(
      routeNamed('CreateSession'),
      await api('POST', '/auth/sessions/', { body: { token: 'A'.repeat(43) }, sourceIp: LOGIN_IP }),
      'unknown token',
    );
    validate(routeNamed('CreateSession'), await api('POST', '/auth/sessions/', { body: {}, sourceIp: LOGIN_IP }), 'no token');
    validate(
      routeNamed('EndCurrentSession'),
      await api('DELETE', '/auth/sessions/current/', { headers: sessionHeaders(owner.token, 'https://evil.example') }),
      'cross-site logout',
    );
    validate(
      routeNamed('InviteTeamMember'),
      await api('POST', '/v1/team/', asOwner({ body: { email: owner.member.email, role: 'viewer' } })),
      'address already in the team',
    );
    validate(
      routeNamed('UpdateTeamMember'),
      await api('PATCH', '/v1/team/tm_000000000000000000000000/', asOwner({ body: { role: 'viewer' } })),
      'unknown member',
    );
    validate(
      routeNamed('UpdateAccount'),
      await call('PATCH', '/v1/account/', { body: { embed_origins: ['http://x.example'] } }),
      'bad origin',
    );
    validate(
      routeNamed('CreateApiKey'),
      await api('POST', '/v1/api-keys/', { headers: { ...owner.headers, origin: API_ORIGIN }, body: { name: 'x'.repeat(101) } }),
      'long name',
    );
    // The portal's errors: a used link (401), an API key on the portal (401), a bad payout email (400), an unknown member (404).
    validate(
      routeNamed('OpenPortalSession'),
      await api('POST', '/portal/v1/sessions/', { body: { token: `rpl_${'A'.repeat(43)}` }, sourceIp: LOGIN_IP }),
      'unknown link',
    );
    validate(routeNamed('PortalMe'), await call('GET', '/portal/v1/me/'), 'API key on the portal');
    validate(
      routeNamed('UpdatePortalMe'),
      await api('PATCH', '/portal/v1/me/', { headers: await portalAs(member.id), body: { payout_email: 'nope' } }),
      'bad payout email',
    );
    validate(
      routeNamed('CreatePortalSession'),
      await call('POST', `/v1/members/${'f'.repeat(32)}/portal-sessions/`, { body: {} }),
      'unknown member',
    );
    expect(problems.slice(before)).toEqual([]);
  });

  it("the fraud routes' errors (400 fields, 404, 409) and the objects a hold changes validate too", async () => {
    const before = problems.length;
    const held = await fraudFlag();
    const answered: [string, number][] = [];
    const sample = async (name: string, label: string, res: Promise<ApiResponse>) => {
      const r = await res;
      answered.push([`${name} ${label}`, r.status]);
      validate(routeNamed(name), r, `${name} ${label}`);
    };
    await sample('UpdateFraudRules', 'unknown rule', call('PATCH', '/v1/fraud-rules/', { body: { nope: { action: 'hold' } } }));
    await sample('UpdateFraudRules', 'out of range', call('PATCH', '/v1/fraud-rules/', { body: { duplicate_ip: { max_referrals: 0 } } }));
    await sample(
      'PreviewFraudRule',
      'out of range',
      call('POST', '/v1/fraud-rules/preview/', { body: { rule: 'velocity', thresholds: { multiple: 1 } } }),
    );
    await sample('ListFraudFlags', 'unknown status', call('GET', '/v1/fraud-flags/?status=closed'));
    await sample('GetFraudFlag', 'unknown id', call('GET', `/v1/fraud-flags/ff_${'f'.repeat(32)}/`));
    await sample(
      'ReleaseFraudFlag',
      'bad note',
      call('POST', `/v1/fraud-flags/${held.flagId}/release/`, { body: { note: 'x'.repeat(501) } }),
    );
    // Reviewed while it still holds a reward: 409; a reward that is not held: 409.
    await sample('ReviewFraudFlag', 'still holding', call('POST', `/v1/fraud-flags/${held.flagId}/review/`, { body: {} }));
    await sample('ReleaseReward', 'not held', call('POST', `/v1/rewards/${(await money({})).rewardId}/release/`));
    // The held reward, its referral and member (fraud_flags, commission_held) in their own operations' shapes.
    await sample('GetReward', 'held', call('GET', `/v1/rewards/${held.rewardId}/`));
    await sample('GetReferral', 'flagged', call('GET', `/v1/referrals/${held.referralId}/`));
    await sample('GetMember', 'with a held commission', call('GET', `/v1/members/${held.memberId}/`));
    await sample('ListRewards', 'held', call('GET', '/v1/rewards/?status=held'));
    expect(answered).toEqual([
      ['UpdateFraudRules unknown rule', 400],
      ['UpdateFraudRules out of range', 400],
      ['PreviewFraudRule out of range', 400],
      ['ListFraudFlags unknown status', 400],
      ['GetFraudFlag unknown id', 404],
      ['ReleaseFraudFlag bad note', 400],
      ['ReviewFraudFlag still holding', 409],
      ['ReleaseReward not held', 409],
      ['GetReward held', 200],
      ['GetReferral flagged', 200],
      ['GetMember with a held commission', 200],
      ['ListRewards held', 200],
    ]);
    expect(problems.slice(before)).toEqual([]);
  });
});
