// Examples for the OpenAPI document: one realistic story (Acme's "Friends" campaign; Alice refers Bob,
// Bob subscribes, Alice earns a credit), so the examples of different operations agree with each other.
// test/unit/openapi.test.ts validates every example against the schema it illustrates (ajv), and
// Spectral's oas3-valid-*-example rules check them again.
import type { ComponentName } from './components';
import { PROVIDER_DEFINITIONS } from '../billing/registry';
import { providerOptions } from '../billing/options';
import { railOptions } from '../rails/options';
import { DEFAULT_FRAUD_SETTINGS } from '../domain/fraud';

export const ACCOUNT_ID = '3f9c2a71d04e8b65';
export const CAMPAIGN_ID = '8f3a21c4';
export const MEMBER_ID = '0190a1b2c3d47e5f8a6b1c2d3e4f5a6b';
export const APPLICATION_ID = 'app_0190a1b2c3d47e5f8a6b1c2d3e4f5a70';
export const REFERRAL_ID = '0190a1b9f2c37d4e9b0a1c2d3e4f5a6c';
export const REWARD_ID = '0190a1c4d5e67f8091a2b3c4d5e6f7a8';
export const ENDPOINT_ID = '0190a1d0e1f27a3b8c4d5e6f708192a3';
export const SUBSCRIPTION_ID = 70002;
export const USER_IDENTIFIER = 'user-4821';
const BASE = 'https://api.example.com';
const CREATED = 1767225600; // 2026-01-01T00:00:00Z

const plan = {
  id: 9001,
  name: 'Pro monthly',
  amount: '10.00',
  currency: 'USD',
  interval: 'month',
  frequency: 1,
  descriptor: '$10.00 / month',
};

const subscription = {
  id: SUBSCRIPTION_ID,
  unit_price: '10.00',
  currency: 'USD',
  status: 'active',
  email: 'bob@example.com',
  next_bill_date: '2026-02-03',
  last_bill_date: '2026-01-03',
  plan,
};

const campaign = {
  id: CAMPAIGN_ID,
  name: 'Friends',
  slug: 'friends',
  signup: { enabled: false, approval: 'manual', terms_url: null, questions: [] },
  allows_credit: true,
  credit_amount: '5.00',
  credit_currency: 'USD',
  allows_commission: false,
  commission_amount: '0.00',
  commission_currency: 'USD',
  commission_months: null,
  reward_threshold: '0.00',
  referred_discount_type: null,
  referred_discount_amount: '0.00',
  referred_discount_recurring: false,
  commission_type: 'fixed',
  commission_percent: '0.00',
  hold_days: 30,
  approval: 'auto',
  min_payout: '0.00',
  created_at: CREATED,
};

const reward = {
  id: REWARD_ID,
  type: 'credit',
  amount: '5.00',
  currency: 'USD',
  created_at: CREATED + 2 * 86_400 + 60,
  payment_id: 80002,
  reverses: null,
  refund_id: null,
  reversed_at: null,
  note: null,
  status: 'applied',
  approves_at: null,
  approved_at: null,
  paid_at: null,
  voided_at: null,
  void_reason: null,
  payout_id: null,
};

export const PAYOUT_ID = 'po_0190a1d2e3f47a8b9c0d1e2f3a4b5c6d';
export const BATCH_ID = 'pb_0190a1d4e5f67a8b9c0d1e2f3a4b5c6d';
const COMMISSION_ID = '0190a1c3d4e57f6a8b9c0d1e2f3a4b5c';

/** An approved commission in a due payout (GET /v1/rewards/, reward.* events). */
export const LEDGER_REWARD = {
  ...reward,
  id: COMMISSION_ID,
  type: 'commission',
  amount: '12.50',
  status: 'approved',
  approves_at: CREATED + 32 * 86_400 + 60,
  approved_at: CREATED + 32 * 86_400 + 120,
  payout_id: PAYOUT_ID,
  referral_id: REFERRAL_ID,
  member_id: MEMBER_ID,
  campaign_id: CAMPAIGN_ID,
  held_by: null,
};

export const PAYOUT = {
  id: PAYOUT_ID,
  member_id: MEMBER_ID,
  amount: '62.50',
  currency: 'USD',
  status: 'due',
  reward_count: 5,
  period_start: CREATED + 2 * 86_400,
  period_end: CREATED + 30 * 86_400,
  paid_at: null,
  reference: null,
  failure_reason: null,
  batch_id: null,
  payout_email: null,
  rail: null,
  rail_status: null,
  created_at: CREATED + 32 * 86_400 + 120,
};

export const PAYOUT_BATCH = {
  id: BATCH_ID,
  rail: 'file',
  format: 'wise',
  currency: 'USD',
  status: 'processing',
  payout_ids: [PAYOUT_ID],
  payout_count: 1,
  amount: '62.50',
  file_url: `${BASE}/v1/payout-batches/${BATCH_ID}/file/`,
  created_at: CREATED + 40 * 86_400,
  paid_at: null,
  reference: null,
  failure_reason: null,
  rail_batch_id: null,
};

/** A referral made through the API and not converted yet (what the create answers). */
export const NEW_REFERRAL = {
  id: REFERRAL_ID,
  member_id: MEMBER_ID,
  user_identifier: USER_IDENTIFIER,
  created_at: CREATED + 86_400,
  converted_at: null,
  is_converted: false,
  coupon_code: null,
  subscription: null,
  source: 'api',
  sub: null,
  campaign_id: CAMPAIGN_ID,
  reward_type: 'credit',
  reward_amount: '5.00',
  reward_percent: null,
  reward_threshold: '0.00',
  currency: 'USD',
  stats: { rewards: 0, credit_earned: '0.00', commission_earned: '0.00', currency: 'USD' },
  rewards_completed: false,
  fraud_flags: [],
  rewards: [],
};

/** The same referral just converted: rewards come asynchronously. */
export const CONVERTED_REFERRAL = { ...NEW_REFERRAL, converted_at: CREATED + 2 * 86_400, is_converted: true, subscription };

/** The same referral with its reward. */
const REWARDED_REFERRAL = {
  ...CONVERTED_REFERRAL,
  stats: { rewards: 1, credit_earned: '5.00', commission_earned: '0.00', currency: 'USD' },
  rewards_completed: true,
  fraud_flags: [],
  rewards: [reward],
};

const member = {
  id: MEMBER_ID,
  identifier: 'alice',
  email: 'alice@example.com',
  first_name: 'Alice',
  last_name: null,
  code: 'ALICE2026',
  stats: {
    link_clicks: 12,
    referrals: 1,
    conversions: 1,
    credit_earned: '5.00',
    commission_earned: '0.00',
    commission_pending: '0.00',
    commission_approved: '0.00',
    commission_held: '0.00',
    commission_paid: '0.00',
    currency: 'USD',
  },
  link_clicks: 12,
  campaign,
  subscription: { ...subscription, id: 70001, email: 'alice@example.com' },
  email_opt_out: false,
  payout_email: null,
  payout_method: null,
  payout_method_ready: false,
  payout_method_reason: 'The member has no payout email.',
  source: 'app',
  fraud_flags: [],
  created_at: CREATED + 3_600,
};

const webhookEndpoint = {
  id: ENDPOINT_ID,
  url: 'https://app.example.com/hooks/refloop',
  description: 'Rewards to our billing service',
  events: ['referral.converted', 'reward.created'],
  enabled: true,
  disabled_reason: null,
  failing_since: null,
  created_at: CREATED + 600,
};

const delivery = {
  id: '0190a1c4d6017b2c9d3e4f5a6b7c8d9e',
  event_id: 'evt_5b0f0c6ad1e24e4f9a4c2f1b7d3e9a01',
  event_type: 'reward.created',
  status: 'succeeded',
  created_at: CREATED + 2 * 86_400 + 61,
  attempt_count: 2,
  next_retry_at: null,
  attempts: [
    { attempt: 2, attempted_at: CREATED + 2 * 86_400 + 121, status_code: 200, duration_ms: 84, error: null },
    { attempt: 1, attempted_at: CREATED + 2 * 86_400 + 61, status_code: 503, duration_ms: 212, error: 'HTTP 503' },
  ],
};

export const TEAM_MEMBER_ID = 'tm_5f1c0a9e3b7d4c2a8e6f0b1d';
export const API_KEY_ID = 'key_8a2f4c6e0b1d3f5a7c9e1b2d';
export const PORTAL_SESSION_ID = 'ps_3c7e1a9f5b2d8c4e0a6f1b3d';
const TEAM_MEMBER = { id: TEAM_MEMBER_ID, email: 'sam@acme.example', role: 'finance', created_at: CREATED, last_login_at: CREATED + 3600 };
const API_KEY = { id: API_KEY_ID, name: 'Production backend', prefix: 'rfl_live_Zk3v…', created_at: CREATED, revoked_at: null };
/** The provider the examples show connected: the registry's last (shared/billing/registry.ts). */
export const EXAMPLE_PROVIDER = PROVIDER_DEFINITIONS[PROVIDER_DEFINITIONS.length - 1] as (typeof PROVIDER_DEFINITIONS)[number];
const PROVIDER_CONNECTION = {
  kind: EXAMPLE_PROVIDER.kind,
  connected: true,
  webhook_url: `${BASE}/webhooks/${EXAMPLE_PROVIDER.webhook.path}/${ACCOUNT_ID}/`,
  ...EXAMPLE_PROVIDER.view({ api_url: EXAMPLE_PROVIDER.apiHosts[0] }),
};
/** Its connection body: the required fields, their placeholders as values. */
export const PROVIDER_BODY_EXAMPLE = {
  kind: EXAMPLE_PROVIDER.kind,
  ...Object.fromEntries(EXAMPLE_PROVIDER.fields.filter((f) => f.required).map((f) => [f.name, f.placeholder ?? '…'])),
};
/** A connected payout rail (PayPal) as GET and PUT /v1/account/payout-rails/ show it. */
const PAYOUT_RAIL = {
  kind: 'paypal',
  name: 'PayPal Payouts',
  api_url: 'https://api-m.paypal.com',
  settings: { client_id: 'AZexampleClientId0123456789', webhook_id: '8PT597110X687430LKGECATA' },
  connected_at: CREATED,
  webhook_path: `/webhooks/paypal/${ACCOUNT_ID}/`,
};
/** PUT /v1/account/payout-rails/paypal/'s body. */
export const PAYOUT_RAIL_BODY_EXAMPLE = {
  client_id: PAYOUT_RAIL.settings.client_id,
  client_secret: 'EXexampleSecret0123456789',
  webhook_id: PAYOUT_RAIL.settings.webhook_id,
};
/** An example path segment of the webhook intake. */
export const WEBHOOK_PATH_EXAMPLE = EXAMPLE_PROVIDER.webhook.path;

/** One example per component schema: what a response of that component looks like. */
export const COMPONENT_EXAMPLES: Record<ComponentName, unknown> = {
  Referral: REWARDED_REFERRAL,
  Reward: reward,
  Campaign: campaign,
  Member: member,
  Subscription: subscription,
  Plan: plan,
  WebhookEndpoint: webhookEndpoint,
  CreatedWebhookEndpoint: { ...webhookEndpoint, secret: 'whsec_5vJ0cX2m9QyL3rT8aB1nK7eW4hZ6uF0d' },
  WebhookDelivery: delivery,
  RewardEventData: { ...reward, referral_id: REFERRAL_ID, member_id: MEMBER_ID },
  LedgerReward: LEDGER_REWARD,
  Payout: PAYOUT,
  PayoutDetail: { ...PAYOUT, reward_ids: [COMMISSION_ID] },
  PayoutSummary: { due: { USD: '62.50' }, open: { EUR: '8.00' }, processing: {}, paid: { USD: '1250.00' } },
  PayoutBatch: PAYOUT_BATCH,
  ReportTimeseries: {
    metric: 'conversions',
    interval: 'day',
    from: 1764201600,
    to: 1764374399,
    buckets: [
      { start: 1764201600, end: 1764288000, value: 3, amounts: null },
      { start: 1764288000, end: 1764374400, value: 0, amounts: null },
    ],
  },
  ReportOverview: {
    from: 1764201600,
    to: 1766793599,
    previous_from: 1761609600,
    previous_to: 1764201599,
    current: {
      link_clicks: 420,
      referrals: 31,
      conversions: 9,
      revenue: { USD: '270.00' },
      refunds: { USD: '30.00' },
      credit_earned: {},
      commission_earned: { USD: '54.00' },
      commission_paid: { USD: '40.00' },
    },
    previous: {
      link_clicks: 380,
      referrals: 25,
      conversions: 6,
      revenue: { USD: '180.00' },
      refunds: {},
      credit_earned: {},
      commission_earned: { USD: '36.00' },
      commission_paid: {},
    },
  },
  ReportMembers: {
    sort: 'revenue',
    from: 1764201600,
    to: 1766793599,
    currency: 'USD',
    results: [
      {
        member_id: MEMBER_ID,
        identifier: 'alice',
        email: 'alice@example.com',
        conversions: 4,
        revenue: { USD: '120.00' },
        commission: { USD: '24.00' },
      },
    ],
  },
  PaddleWebhookAccepted: { received: true },
  ServiceLinks: { docs: `${BASE}/docs/`, openapi: `${BASE}/v1/openapi.json`, health: `${BASE}/health` },
  Health: { status: 'ok' },
  Session: { account_id: ACCOUNT_ID, account_name: 'Acme', email: 'dana@acme.example', role: 'owner', expires_at: CREATED + 12 * 3600 },
  TeamMember: TEAM_MEMBER,
  ApiKey: API_KEY,
  CreatedApiKey: { ...API_KEY, key: 'rfl_live_Zk3v9QyL3rT8aB1nK7eW4hZ6uF0dX2m9cJ5pV8sW1a' },
  ProviderConnection: PROVIDER_CONNECTION,
  PayoutRail: PAYOUT_RAIL,
  PayoutRails: { connected: [PAYOUT_RAIL], rail_options: railOptions() },
  Account: {
    id: ACCOUNT_ID,
    name: 'Acme',
    plan: 'regular',
    campaign_limit: 10,
    publishable_key: 'rfl_pub_Qm3kX9vB2nL7pR4tW8yZ1cF6',
    script_tag: `<script src="${BASE}/js/refloop.js" data-key="rfl_pub_Qm3kX9vB2nL7pR4tW8yZ1cF6" async></script>`,
    js_referrals: 'open',
    email_sender: { address: 'rewards@acme.example', name: 'Acme' },
    embed_origins: ['https://app.acme.example'],
    referral_url: 'https://acme.example/',
    provider: PROVIDER_CONNECTION,
    slug: 'acme',
    attribution_model: 'first_click',
    attribution_days: 60,
    tax_details_required: false,
    affiliate_emails: { new_referral: false, monthly_summary: false },
    theme: { accent: '#1a56db' },
    provider_options: providerOptions(),
  },
  PortalLink: {
    id: PORTAL_SESSION_ID,
    url: `${BASE}/portal/${ACCOUNT_ID}/#token=rpl_Zk3v9QyL3rT8aB1nK7eW4hZ6uF0dX2m9cJ5pV8sW1aB`,
    expires_at: CREATED + 600,
  },
  PortalToken: { token: 'rps_Qm3kX9vB2nL7pR4tW8yZ1cF6Zk3v9QyL3rT8aB1nK7e', expires_at: CREATED + 3600 },
  StripeAccountLink: { url: 'https://connect.stripe.com/setup/e/acct_1PqRsTuVwXyZ0123/Xy7KqLm2Np4R', expires_at: CREATED + 300 },
  PortalMe: {
    program: { name: 'Acme', portal: 'acme', payout_methods: ['paypal', 'wise'] },
    member: {
      first_name: 'Alice',
      last_name: 'Smith',
      email: 'alice@example.com',
      code: 'ALICE2026',
      link: 'https://acme.example/?via=ALICE2026',
      email_opt_out: false,
      payout_email: 'alice@example.com',
      payout_method: 'paypal',
      payout_method_ready: true,
      payout_method_reason: null,
      has_subscription: true,
      joined_at: CREATED,
    },
    campaign: {
      name: 'Partners',
      reward_type: 'commission',
      reward_amount: null,
      reward_percent: '20.00',
      currency: 'USD',
      commission_months: 12,
      reward_threshold: '0.00',
      hold_days: 30,
      min_payout: '50.00',
      referred_discount: null,
      description:
        'Earn 20% of what they pay for every payment of each customer you refer, for their first 12 months. Commissions are approved 30 days after each payment, once refunds are unlikely.',
    },
    stats: {
      link_clicks: 42,
      referrals: 5,
      conversions: 2,
      credit_earned: '0.00',
      commission_earned: '24.00',
      commission_pending: '8.00',
      commission_approved: '6.00',
      commission_held: '0.00',
      commission_paid: '10.00',
      currency: 'USD',
    },
    session: { expires_at: CREATED + 3600, return_url: 'https://app.acme.example/settings', mode: 'bearer' },
    tax_details: { required: false, provided: false },
  },
  PortalStats: {
    interval: 'month',
    from: CREATED - 334 * 86_400,
    to: CREATED,
    buckets: [
      { start: CREATED - 31 * 86_400, link_clicks: 12, referrals: 2, conversions: 1 },
      { start: CREATED, link_clicks: 3, referrals: 1, conversions: 0 },
    ],
  },
  MemberLink: {
    slug: 'youtube',
    destination_path: '/pricing',
    url: 'https://acme.example/pricing?via=ALICE2026&sub=youtube',
    created_at: CREATED,
  },
  PortalReferral: {
    id: REFERRAL_ID,
    user: 'us***21',
    created_at: CREATED,
    converted_at: CREATED + 2 * 86_400,
    status: 'paying',
    sub: 'youtube',
    earned: '2.00',
    currency: 'USD',
  },
  PortalReward: {
    id: REWARD_ID,
    type: 'credit',
    amount: '10.00',
    currency: 'USD',
    status: 'applied',
    created_at: CREATED + 2 * 86_400,
    approves_at: null,
    approved_at: null,
    paid_at: null,
    voided_at: null,
    void_reason: null,
    is_clawback: false,
    credit_standing: 'applied',
  },
  PortalPayout: {
    id: PAYOUT_ID,
    amount: '50.00',
    currency: 'USD',
    status: 'paid',
    reward_count: 5,
    created_at: CREATED + 40 * 86_400,
    paid_at: CREATED + 45 * 86_400,
    payout_email: 'alice@example.com',
  },
  PortalTaxDetails: {
    required: true,
    provided: true,
    form: 'w9',
    legal_name: 'Alice Smith',
    country: 'US',
    address: '1 Main•••',
    tin: '•••••6789',
    updated_at: CREATED + 86_400,
  },
  Application: {
    id: APPLICATION_ID,
    campaign_id: CAMPAIGN_ID,
    email: 'casey@creator.example',
    name: 'Casey Jones',
    country: 'GB',
    payout_email: 'casey@pay.example',
    answers: { audience: 'https://youtube.example/@casey' },
    status: 'approved',
    member_id: MEMBER_ID,
    created_at: CREATED + 86_400,
    decided_at: CREATED + 90_000,
    reason: null,
    fraud_flags: [],
  },
  FraudRules: DEFAULT_FRAUD_SETTINGS,
  FraudFlag: {
    id: 'ff_01935c1e7a2b7c3d8e9f0a1b2c3d4e5f',
    rule: 'duplicate_ip',
    action: 'hold',
    status: 'open',
    subject_type: 'referral',
    subject_id: REFERRAL_ID,
    member_id: MEMBER_ID,
    detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
    evidence: { referral_ids: [REFERRAL_ID], figures: { referrals: 4, window_hours: 24 } },
    held_reward_ids: [COMMISSION_ID],
    held_count: 1,
    created_at: CREATED + 86_400,
    resolved_at: null,
    note: null,
  },
  FraudPreview: {
    rule: 'duplicate_ip',
    action: 'hold',
    window_days: 90,
    would_flag: 2,
    would_hold: 2,
    examples: [
      {
        subject_type: 'referral',
        subject_id: REFERRAL_ID,
        member_id: MEMBER_ID,
        detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
        at: CREATED + 86_400,
      },
    ],
    partial: false,
  },
};

/** A first page of a list, with a next link (the cursor is opaque). */
export function pageExample(component: ComponentName, path: string): unknown {
  const concrete = path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(pathParameterExample(path, name)));
  return {
    count: 3,
    next: `${BASE}${concrete}?cursor=eyJrIjoiMDE5MGExYjlmMmMzN2Q0ZSJ9&page_size=1`,
    previous: null,
    results: [COMPONENT_EXAMPLES[component]],
  };
}

/** Examples of the `{name}` path parameters, by the path's first resource segment. */
export function pathParameterExample(path: string, name: string): string {
  if (name === 'user_identifier') return USER_IDENTIFIER;
  if (name === 'account_id') return ACCOUNT_ID;
  if (name === 'provider') return WEBHOOK_PATH_EXAMPLE;
  if (path.includes('/campaigns/')) return CAMPAIGN_ID;
  if (path.includes('/members/')) return MEMBER_ID;
  if (path.includes('/subscriptions/')) return String(SUBSCRIPTION_ID);
  if (path.includes('/webhook-endpoints/')) return ENDPOINT_ID;
  if (path.includes('/payout-batches/')) return BATCH_ID;
  if (path.includes('/exports/')) return 'rewards.csv';
  if (path.includes('/payouts/')) return PAYOUT_ID;
  if (path.includes('/rewards/')) return COMMISSION_ID;
  if (path.includes('/applications/')) return name === 'id' ? APPLICATION_ID : name === 'campaign_slug' ? 'creators' : 'acme';
  if (path.startsWith('/join/'))
    return name === 'token' ? 'Zk3v9QyL3rT8aB1nK7eW4hZ6uF0dX2m9cJ5pV8sW1aB' : name === 'campaign_slug' ? 'creators' : 'acme';
  return REFERRAL_ID;
}

/** What each error status answers, in the contract's DRF shapes. */
export const ERROR_EXAMPLES: Record<number, unknown> = {
  400: { email: ['Enter a valid email address.'] },
  401: { detail: 'Authentication credentials were not provided.' },
  403: { detail: 'You do not have permission to perform this action.' },
  404: { detail: 'Not found.' },
  409: { detail: 'A request with this Idempotency-Key is in progress.' },
  413: { detail: 'Request body is too large.' },
  415: { detail: 'Unsupported media type "text/plain" in request.' },
  422: { detail: 'Idempotency-Key reused with a different request.' },
  429: { detail: 'Request was throttled. Expected available in 2 seconds.' },
  500: { detail: 'Internal server error.', request_id: '5f1c1f0e-8d3b-4c56-9a77-1e2f3a4b5c6d' },
  503: { detail: 'Service temporarily unavailable, try again later.' },
};

/** A Paddle Classic `subscription_created` alert as Paddle posts it (form fields; the signature shortened). */
export const PADDLE_ALERT_EXAMPLE = {
  alert_id: '2091557455',
  alert_name: 'subscription_created',
  checkout_id: '2-461ecbe710cab0e-f2e284ef00',
  currency: 'USD',
  email: 'bob@example.com',
  event_time: '2026-01-03 10:15:09',
  next_bill_date: '2026-02-03',
  passthrough: `{"refloop_referral_id":"${REFERRAL_ID}"}`,
  quantity: '1',
  status: 'active',
  subscription_id: String(SUBSCRIPTION_ID),
  subscription_plan_id: '9001',
  unit_price: '10.00',
  user_id: '4821',
  p_signature: 'D2jcpJvuB1RWUR8nZvf9y6v3l7p3Mn1H5uBOmQ7VInYF1ZRnoIKliedaHWMEI6JG4NkfJewwzeNtEl4wMSd9W+c5MkccUAibvpFTY3yCm+Pg==',
};
