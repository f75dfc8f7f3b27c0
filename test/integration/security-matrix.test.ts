// Security matrix (issue 4, item 5): every API-key route of functions/routes.ts x {no key, malformed
// key, unknown key, revoked key, another account's key with this account's ids and cursors}, and the
// Paddle webhook with another account's signature; the public documentation routes answer anyone and
// carry no tenant data. The dashboard's session-only routes (team, API keys, provider connection) refuse
// every API key (403) and answer 401 without a session; another account's session gets 404 on this
// account's ids; the login routes never fail with a 5xx on bad input. Then, after a realistic flow
// (accounts, keys, provider settings, webhooks, conversions, rewards, a provider outage, dashboard logins),
// no plaintext API key, provider secret (Paddle Classic auth codes, a Stripe, a Paddle Billing and a Chargebee
// connection's API key and webhook secret; Chargebee's Basic-auth header), webhook signing secret, session
// token or login token may be found in any stored item (not even the secrets' own items, which hold them
// encrypted: `local:v1:`; tokens only as their SHA-256) or log line. Chargebee's webhook: its Basic-auth
// pair is the credential, as the Paddle signature is Paddle's.
import { randomBytes } from 'node:crypto';
import { format } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { routes, type Route } from '../../functions/routes';
import { setLogLevel } from '../../shared/log';
import { startPaddleEmulator, type DeliveredAlert, type PaddleEmulator } from '../../infra/local/emulators/paddle-classic';
import type { Pollers } from '../../infra/local/pollers';
import { createAccount, createApiKey, ensurePublishableKey, revokeApiKey } from '../../shared/store/accounts';
import { saveProviderConnection, saveProviderSettings } from '../../shared/store/provider';
import { basicAuthHeader } from '../../shared/providers/chargebee/signature';
import { getSubscription } from '../../shared/store/subscriptions';
import { approveReward } from '../../shared/flows/lifecycle';
import { affiliateLoginUrl } from '../../shared/flows/affiliate-login';
import { createBatch } from '../../shared/flows/payouts';
import { getItem } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys, moneyListKeys, moneyKeys } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { pollUntil } from '../support/fixtures';
import { API_ORIGIN, freshEmail, loginAs, sessionHeaders, type DashboardLogin } from '../support/dashboard';
import { SESSION_ONLY, tokenHash } from '../../shared/domain/team';
import { decryptSecret } from '../../shared/secrets';
import { SESSION_ENDED } from '../../shared/http/auth';
import { addTeamMember, issueLoginToken, teamKeys } from '../../shared/store/team';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';
import { useOwnTable } from '../support/own-table';
import { startPaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { startStripeEmulator } from '../../infra/local/emulators/stripe';
import { startWiseEmulator } from '../../infra/local/emulators/wise';
import { clearRailConnectionCache } from '../../shared/rails/intake';
import { saveRailConnection } from '../../shared/store/rail-connections';
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
import { newApplicationId } from '../../shared/domain/applications';
import { issueJoinConfirmation } from '../../shared/flows/applications';
import { joinRequestExpiry, putJoinRequest } from '../../shared/store/applications';
import { DEFAULT_FRAUD_SETTINGS, FRAUD_RULES, type FraudSettings } from '../../shared/domain/fraud';
import { recordFinding } from '../../shared/flows/fraud-flags';

// This file Scans the table to check what requests wrote: a table of its own keeps those Scans small.
beforeAll(useOwnTable);

// ---- log capture: everything written through console or straight to stdout/stderr ------------------

const logLines: string[] = [];
function captureLogs(): void {
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      logLines.push(format(...args));
    });
  }
  const writer = (chunk: unknown): boolean => {
    logLines.push(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));
    return true;
  };
  jest.spyOn(process.stdout, 'write').mockImplementation(writer as unknown as typeof process.stdout.write);
  jest.spyOn(process.stderr, 'write').mockImplementation(writer as unknown as typeof process.stderr.write);
}

// ---- tenants -----------------------------------------------------------------------------------------

interface Tenant {
  accountId: string;
  key: string;
  publishableKey: string;
  paddle: PaddleEmulator;
  authCode: string;
}

const suffix = randomBytes(4).toString('hex');
/** Every plaintext API key this file creates (all of them must stay out of the table and the logs). */
const apiKeys: string[] = [];
let queues: TestQueues;
let pollers: Pollers;
let paddleA: PaddleEmulator;
let paddleB: PaddleEmulator;
let A: Tenant;
let B: Tenant;
/** A key of A that gets revoked. */
let revokedKey: string;
/** Dashboard sessions: owners of A and B. */
let ownerA: DashboardLogin;
let ownerB: DashboardLogin;
/** Every session token and login token this file sees (stored only as their SHA-256 digests). */
const sessionTokens: string[] = [];
const loginTokens: string[] = [];
/** A login token never used: its LOGIN#<digest> item stays until it expires. */
let unusedLoginToken: string;
// The login routes are rate limited per IP: this file's own address (127.0.0.1 is every other file's).
const LOGIN_IP = '198.51.100.41';

async function tenant(paddle: PaddleEmulator, authCode: string): Promise<Tenant> {
  const { account, apiKey } = await createAccount({ name: `security-${suffix}`, plan: 'regular' });
  apiKeys.push(apiKey);
  await saveProviderSettings(account.accountId, {
    vendorId: paddle.vendorId,
    authCode,
    publicKey: paddle.publicKeyPem,
    vendorsApiUrl: paddle.vendorsApiUrl,
    checkoutApiUrl: paddle.checkoutApiUrl,
  });
  return { accountId: account.accountId, key: apiKey, publishableKey: account.publishableKey as string, paddle, authCode };
}

const call = (t: Tenant | string | null, method: string, path: string, body?: unknown) =>
  api(method, path, { key: t === null ? null : typeof t === 'string' ? t : t.key, ...(body === undefined ? {} : { body }) });

async function ok(res: Promise<ApiResponse>, status = 200): Promise<any> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r.body;
}

const webhook = (accountId: string, fields: Record<string, string>) =>
  api('POST', `/webhooks/paddle/${accountId}/`, {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

async function deliver(t: Tenant, alerts: DeliveredAlert[]): Promise<void> {
  for (const alert of alerts) expect((await webhook(t.accountId, alert.fields)).status).toBe(200);
}

/** A checkout at the tenant's Paddle whose alerts reach the service; waits for the synced copy. */
async function subscribed(t: Tenant, email: string) {
  const out = await t.paddle.checkout({ plan_id: 9001, email, deliver: false });
  await deliver(t, out.alerts);
  await pollUntil(
    async () => {
      const s = await getSubscription(t.accountId, out.subscription.subscription_id);
      return s?.status === 'active' && s.last_bill_date !== null;
    },
    { timeoutMs: 15_000 },
  );
  return out;
}

/** Real ids of account A's data, used with B's key. */
interface Ids {
  campaign: string;
  member: string;
  memberCode: string;
  otherMember: string;
  referral: string;
  /** A referral of A that is not converted (a conversion attempt with B's key must leave it so). */
  openReferral: string;
  userIdentifier: string;
  /** A subscription id of A that B does not have. */
  subscription: number;
  checkoutId: string;
  /** Two webhook endpoints of A (so its endpoint list has a next page at page_size=1). */
  webhookEndpoint: string;
  otherWebhookEndpoint: string;
  /** A's commission, its payout and the batch that holds it. */
  reward: string;
  payout: string;
  batch: string;
  /** A member of A's team, and the record of a key created through POST /v1/api-keys/. */
  teamMember: string;
  apiKeyRecord: string;
  /** A pending application to A's campaign (docs/affiliates.md "Applications"). */
  application: string;
  /** A's open fraud flag holding Carl's commission (`heldReward`), and a member flag on Alice holding nothing. */
  fraudFlag: string;
  otherFraudFlag: string;
  heldReward: string;
}
let ids: Ids;
/** Signing secrets of A's endpoints: shown once, then never in an answer, a log line or another item. */
const webhookSecrets: string[] = [];
let bIds: { campaign: string; member: string; referral: string; subscription: number };
/** Portal session and link tokens made in this file: never stored or logged in plaintext. */
const portalTokens: string[] = [];

beforeAll(async () => {
  captureLogs();
  // The logger is silent under Jest (global setup); this file reads every line it writes.
  setLogLevel('DEBUG');
  // Endpoints on a closed loopback port: deliveries fail locally, never leave the machine.
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
  const authA = `SECRET-AUTH-${randomBytes(12).toString('hex')}`;
  const authB = `SECRET-AUTH-${randomBytes(12).toString('hex')}`;
  paddleA = await startPaddleEmulator({ webhookUrl: null, authCode: authA });
  paddleB = await startPaddleEmulator({ webhookUrl: null, authCode: authB });
  A = await tenant(paddleA, authA);
  B = await tenant(paddleB, authB);
  revokedKey = await createApiKey(A.accountId);
  apiKeys.push(revokedKey);

  // Account A: a credit campaign, a referrer with her own subscription, a second member, three
  // referrals (one converted with a reward applied as a modifier, one converted later, one open).
  const campaign = await ok(
    call(A, 'POST', '/v1/campaigns/', { name: 'Friends', allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' }),
    201,
  );
  await ok(call(A, 'POST', '/v1/campaigns/', { name: 'Second', allows_commission: true, commission_amount: '1.00' }), 201);
  const aliceSub = await subscribed(A, 'alice@example.com');
  const alice = await ok(
    call(A, 'POST', '/v1/members/', {
      identifier: 'alice',
      email: 'alice@example.com',
      code: `ALICE${suffix}`,
      campaign: { id: campaign.id },
      subscription: { id: aliceSub.subscription.subscription_id },
    }),
    201,
  );
  const bob = await ok(
    call(A, 'POST', '/v1/members/', { identifier: 'bob', email: 'bob@example.com', campaign: { id: campaign.id } }),
    201,
  );
  const r1 = await ok(call(A, 'POST', '/v1/referrals/', { user_identifier: 'user/with space', member_code: alice.code }));
  const r2 = await ok(call(A, 'POST', '/v1/referrals/', { user_identifier: 'user-2', member_code: alice.code }));
  const r3 = await ok(call(A, 'POST', '/v1/referrals/', { user_identifier: 'user-3', member_code: bob.code }));

  const carol = await subscribed(A, 'carol@example.com');
  const converted = await ok(call(A, 'POST', `/referrals/${r1.id}/conversion/`, { checkout_id: carol.checkout_id }));
  expect(converted.is_converted).toBe(true);
  const rewarded = await pollUntil(
    async () => {
      const body = (await call(A, 'GET', `/v1/referrals/${r1.id}/`)).body;
      return body.rewards.length === 1 ? body : null;
    },
    { timeoutMs: 15_000 },
  );
  await pollUntil(() => paddleA.modifiers(aliceSub.subscription.subscription_id).length === 1, { timeoutMs: 15_000 });

  // A provider outage while the next credit is applied: the worker fails, logs, retries, applies it.
  const dan = await subscribed(A, 'dan@example.com');
  paddleA.setMode('down');
  try {
    const down = await call(A, 'POST', `/v1/referrals/${r2.id}/conversion/`, { checkout_id: dan.checkout_id });
    expect(down.status).toBe(503);
    expect(
      await ok(call(A, 'POST', `/v1/referrals/${r2.id}/conversion/`, { subscription_id: dan.subscription.subscription_id })),
    ).toMatchObject({ is_converted: true });
    await pollUntil(async () => (await call(A, 'GET', `/v1/referrals/${r2.id}/`)).body.rewards.length === 1, { timeoutMs: 15_000 });
    // Let the credit application fail at least once before Paddle comes back.
    await pollUntil(() => logLines.some((l) => l.includes('record failed')), { timeoutMs: 15_000 });
  } finally {
    paddleA.setMode('up');
  }
  await pollUntil(() => paddleA.modifiers(aliceSub.subscription.subscription_id).length === 2, { timeoutMs: 20_000 });

  const hookA = await ok(call(A, 'POST', '/v1/webhook-endpoints/', { url: 'http://127.0.0.1:9/a', events: ['member.created'] }), 201);
  const hookA2 = await ok(call(A, 'POST', '/v1/webhook-endpoints/', { url: 'http://127.0.0.1:9/a2' }), 201);
  webhookSecrets.push(hookA.secret, hookA2.secret);

  // The money side: Bob's commission on his referral, approved into his payout, and that payout in a batch.
  await ok(call(A, 'PATCH', `/v1/members/${bob.id}/`, { payout_email: 'bob@pay.example.com' }));
  const bobsReferral = toReferral(await getItem(keys.referral(A.accountId, r3.id)))!;
  const commission = (
    await recordRewards(A.accountId, bobsReferral, [{ payment_id: 990_001, type: 'commission', amount: 300, currency: 'USD' }], false, true)
  ).rewards[0]!;
  const approved = await approveReward(A.accountId, commission.id);
  const batch = await createBatch(A.accountId, { format: 'csv', currency: 'USD', payout_ids: [approved.payout_id!] });
  // Fraud (docs/fraud.md): Carl's referral with a commission, held by a duplicate_ip flag as the FraudScreen
  // worker records one; and a click_spam flag on Alice (flag only).
  const carl = await ok(
    call(A, 'POST', '/v1/members/', { identifier: 'carl', email: 'carl@example.com', campaign: { id: campaign.id } }),
    201,
  );
  const r4 = await ok(call(A, 'POST', '/v1/referrals/', { user_identifier: 'user-4', member_code: carl.code }));
  const heldCommission = (
    await recordRewards(
      A.accountId,
      toReferral(await getItem(keys.referral(A.accountId, r4.id)))!,
      [{ payment_id: 990_002, type: 'commission', amount: 200, currency: 'USD' }],
      false,
      true,
    )
  ).rewards[0]!;
  const holdAll = Object.fromEntries(
    FRAUD_RULES.map((rule) => [rule, { ...DEFAULT_FRAUD_SETTINGS[rule], action: 'hold' }]),
  ) as unknown as FraudSettings;
  const fraudFlag = await recordFinding(
    A.accountId,
    {
      rule: 'duplicate_ip',
      subject: { type: 'referral', id: r4.id },
      member_id: carl.id,
      detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
      evidence: { referral_ids: [r4.id], figures: { referrals: 4 } },
      dedupe_key: `duplicate_ip#referral#${r4.id}`,
    },
    holdAll,
  );
  expect(fraudFlag).toMatchObject({ status: 'open', held_reward_ids: [heldCommission.id], held_count: 1 });
  const otherFraudFlag = await recordFinding(
    A.accountId,
    {
      rule: 'click_spam',
      subject: { type: 'member', id: alice.id },
      member_id: alice.id,
      detail: '1,200 clicks and 1 conversion in 7 days.',
      evidence: { figures: { clicks: 1200, conversions: 1 } },
      dedupe_key: `click_spam#member#${alice.id}#2026-01-01`,
    },
    { ...holdAll, click_spam: { ...holdAll.click_spam, action: 'flag' } },
  );

  // A named link of Alice's, which no other credential may read or delete.
  await ok(call(A, 'POST', `/v1/members/${alice.id}/links/`, { slug: 'a-link' }), 201);
  // A pending application to A's campaign, opened to applications: applied for and confirmed as the public
  // endpoint and the confirmation link do (the join request stored, its link issued as the email worker does).
  await ok(call(A, 'PATCH', `/v1/campaigns/${campaign.id}/`, { signup: { enabled: true, approval: 'manual' } }));
  const applicationId = newApplicationId();
  const joined = Math.floor(Date.now() / 1000);
  await putJoinRequest({
    id: applicationId,
    accountId: A.accountId,
    campaignId: campaign.id,
    email: 'erin@creator.example',
    name: 'Erin Vale',
    country: 'GB',
    payoutEmail: null,
    answers: {},
    ipHash: '',
    createdAt: joined,
    expiresAt: joinRequestExpiry(joined),
  });
  const confirmUrl = await issueJoinConfirmation(A.accountId, applicationId);
  expect((await api('POST', new URL(confirmUrl as string).pathname)).status).toBe(200);
  ids = {
    reward: commission.id,
    payout: approved.payout_id!,
    batch: batch.id,
    webhookEndpoint: hookA.id,
    otherWebhookEndpoint: hookA2.id,
    campaign: campaign.id,
    member: alice.id,
    memberCode: alice.code,
    otherMember: bob.id,
    referral: r1.id,
    openReferral: r3.id,
    userIdentifier: 'user/with space',
    // Both emulators number subscriptions from the same start; A has four, B will have one.
    subscription: dan.subscription.subscription_id,
    checkoutId: dan.checkout_id,
    teamMember: '',
    apiKeyRecord: '',
    application: applicationId,
    fraudFlag: fraudFlag!.id,
    otherFraudFlag: otherFraudFlag!.id,
    heldReward: heldCommission.id,
  };
  expect(rewarded.rewards[0].type).toBe('credit');

  // Account B: its own campaign, member, referral and one subscription.
  const bCampaign = await ok(call(B, 'POST', '/v1/campaigns/', { name: 'Friends', allows_credit: true, credit_amount: '1.00' }), 201);
  const bMember = await ok(
    call(B, 'POST', '/v1/members/', { identifier: 'zed', email: 'zed@example.com', code: `ZED${suffix}`, campaign: { id: bCampaign.id } }),
    201,
  );
  const bReferral = await ok(call(B, 'POST', '/v1/referrals/', { user_identifier: 'b-user', member_code: bMember.code }));
  const bSub = await subscribed(B, 'yan@example.com');
  bIds = { campaign: bCampaign.id, member: bMember.id, referral: bReferral.id, subscription: bSub.subscription.subscription_id };
  expect(await getSubscription(B.accountId, ids.subscription)).toBeNull();

  // The dashboard: A's owner logs in through the HTTP login (a link's token traded for the cookie), B's
  // through the store; A gets a viewer and a key made through POST /v1/api-keys/ (its plaintext shown once).
  const dana = await addTeamMember(A.accountId, freshEmail('dana'), 'owner');
  const link = await issueLoginToken(A.accountId, dana.id);
  loginTokens.push(link.token);
  const opened = await api('POST', '/auth/sessions/', { body: { token: link.token }, sourceIp: LOGIN_IP });
  expect(opened.status).toBe(201);
  const cookieToken = /^refloop_session=([A-Za-z0-9_-]{43});/.exec(opened.cookies[0] ?? '')?.[1];
  if (!cookieToken) throw new Error(`no session cookie in ${JSON.stringify(opened.cookies)}`);
  const session = {
    accountId: A.accountId,
    operatorId: dana.id,
    email: dana.email,
    role: 'owner' as const,
    plan: 'regular' as const,
    expiresAt: opened.body.expires_at,
    accountName: opened.body.account_name,
    hash: tokenHash(cookieToken),
  };
  ownerA = { member: dana, token: cookieToken, session, headers: sessionHeaders(cookieToken) };
  ownerB = await loginAs(B.accountId, 'owner');
  const viewerA = await loginAs(A.accountId, 'viewer');
  sessionTokens.push(ownerA.token, ownerB.token, viewerA.token);
  unusedLoginToken = (await issueLoginToken(A.accountId, viewerA.member.id)).token;
  loginTokens.push(unusedLoginToken);
  const created = await ok(api('POST', '/v1/api-keys/', { headers: ownerA.headers, body: { name: 'Made in the dashboard' } }), 201);
  apiKeys.push(created.key);
  expect((await call(created.key, 'GET', '/v1/campaigns/')).status).toBe(200);
  ids.teamMember = viewerA.member.id;
  ids.apiKeyRecord = created.id;
}, 90_000);

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  await paddleA?.stop();
  await paddleB?.stop();
  jest.restoreAllMocks();
});

// ---- the requests of the matrix ---------------------------------------------------------------------

const apiKeyRoutes = routes.filter((r) => (r.auth ?? 'api-key') === 'api-key');
/** The dashboard's session-only routes: the team, API keys, the provider connection. */
const sessionRoutes = routes.filter((r) => r.auth === 'session');
/** Every route a secret API key or a session authenticates. */
const keyedRoutes = [...apiKeyRoutes, ...sessionRoutes];
const loginRoutes = routes.filter((r) => r.auth === 'login');
/** The member portal's API: a portal session token only. */
const portalRoutes = routes.filter((r) => r.auth === 'portal');

/** The route's path with account A's real ids in it. */
function pathFor(route: Route): string {
  return route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (name === 'user_identifier') return encodeURIComponent(ids.userIdentifier);
    // A's member's named link (made in the setup).
    if (name === 'slug') return 'a-link';
    if (route.path.includes('/referrals/{id}/conversion/')) return ids.openReferral;
    if (route.path.startsWith('/v1/referrals/')) return ids.referral;
    if (route.path.startsWith('/v1/campaigns/')) return ids.campaign;
    if (route.path.startsWith('/v1/members/')) return ids.member;
    if (route.path.startsWith('/v1/subscriptions/')) return String(ids.subscription);
    if (route.path.startsWith('/v1/webhook-endpoints/')) return ids.webhookEndpoint;
    // A reward's release: the held one (a release with another account's key must leave it held).
    if (route.name === 'ReleaseReward') return ids.heldReward;
    if (route.path.startsWith('/v1/rewards/')) return ids.reward;
    if (route.path.startsWith('/v1/fraud-flags/')) return ids.fraudFlag;
    if (route.path.startsWith('/v1/payouts/')) return ids.payout;
    if (route.path.startsWith('/v1/payout-batches/')) return ids.batch;
    if (route.path.startsWith('/v1/exports/')) return 'rewards.csv';
    if (route.path.startsWith('/v1/team/')) return ids.teamMember;
    if (route.path.startsWith('/v1/api-keys/')) return ids.apiKeyRecord;
    if (route.path.startsWith('/v1/applications/')) return ids.application;
    // A payout rail's kind (its connection is per account: no other account's id in it).
    if (route.path.startsWith('/v1/account/payout-rails/')) return 'paypal';
    throw new Error(`no id for {${name}} in ${route.path}`);
  });
}

/** A body that would be valid for the route (so only authentication can refuse it). */
function bodyFor(route: Route): unknown {
  switch (route.name) {
    case 'CreateReferral':
      return { user_identifier: `new-user-${suffix}`, member_code: ids.memberCode };
    case 'ConvertReferral':
    case 'ConvertReferralV1':
      return { checkout_id: ids.checkoutId };
    case 'CreateCampaign':
    case 'UpdateCampaign':
      return { name: `renamed-${suffix}` };
    case 'CreateMember':
      return { identifier: `new-${suffix}`, email: `new-${suffix}@example.com`, campaign: { id: ids.campaign } };
    case 'UpdateMember':
      return { first_name: 'Mallory', campaign: null };
    case 'CreateMemberLink':
      return { slug: 'mallory', destination_path: '/mallory' };
    case 'CreateWebhookEndpoint':
      return { url: 'http://127.0.0.1:9/mallory' };
    case 'UpdateWebhookEndpoint':
      return { url: 'http://127.0.0.1:9/mallory', enabled: false };
    case 'VoidReward':
      return { reason: 'fraud' };
    case 'MarkPayoutFailed':
    case 'CancelPayout':
      return { reason: 'Mallory says so' };
    case 'MarkPayoutPaid':
    case 'MarkPayoutBatchPaid':
      return { reference: 'mallory' };
    case 'CreatePayoutBatch':
      return { format: 'csv', currency: 'USD' };
    case 'UpdateAccount':
      return { name: `mallory-${suffix}`, embed_origins: ['https://mallory.example'], js_referrals: 'off' };
    case 'InviteTeamMember':
      return { email: `mallory-${suffix}@example.com`, role: 'owner' };
    case 'UpdateTeamMember':
      return { role: 'owner' };
    case 'CreateApiKey':
      return { name: 'mallory' };
    case 'SetProviderConnection':
      return { kind: 'stripe', secret_key: 'sk_test_mallory0000000001', webhook_secret: 'whsec_mallory0000000001' };
    case 'SetPayoutRail':
      return { client_id: 'mallory', client_secret: 'mallory', webhook_id: 'mallory', api_url: 'http://127.0.0.1:9' };
    case 'UpdateFraudRules':
      return { self_referral: { action: 'off' }, duplicate_ip: { action: 'off' } };
    case 'PreviewFraudRule':
      return { rule: 'duplicate_ip', action: 'hold' };
    case 'ReleaseFraudFlag':
    case 'VoidFraudFlag':
    case 'ReviewFraudFlag':
      return { note: 'mallory' };
    default:
      return undefined;
  }
}

const send = (route: Route, headers: Record<string, string>) =>
  api(route.method, pathFor(route), {
    headers,
    ...(bodyFor(route) === undefined ? {} : { body: bodyFor(route) }),
  });

/** What account A has, read with A's key: compared before and after every matrix row. */
async function snapshotOfA() {
  const [
    campaign,
    member,
    referral,
    open,
    campaigns,
    members,
    referrals,
    subscriptions,
    hook,
    hooks,
    deliveries,
    rewards,
    payouts,
    summary,
    batch,
    account,
    team,
    keyRecords,
    links,
    applications,
    fraudRules,
    fraudFlags,
    fraudFlag,
    heldReward,
  ] = await Promise.all([
    ok(call(A, 'GET', `/v1/campaigns/${ids.campaign}/`)),
    ok(call(A, 'GET', `/v1/members/${ids.member}/`)),
    ok(call(A, 'GET', `/v1/referrals/${ids.referral}/`)),
    ok(call(A, 'GET', `/v1/referrals/${ids.openReferral}/`)),
    ok(call(A, 'GET', '/v1/campaigns/?page_size=100')),
    ok(call(A, 'GET', '/v1/members/?page_size=100')),
    ok(call(A, 'GET', '/v1/referrals/?page_size=100')),
    ok(call(A, 'GET', '/v1/subscriptions/?page_size=100')),
    ok(call(A, 'GET', `/v1/webhook-endpoints/${ids.webhookEndpoint}/`)),
    ok(call(A, 'GET', '/v1/webhook-endpoints/?page_size=100')),
    ok(call(A, 'GET', `/v1/webhook-endpoints/${ids.webhookEndpoint}/deliveries/?page_size=100`)),
    ok(call(A, 'GET', '/v1/rewards/?page_size=100')),
    ok(call(A, 'GET', '/v1/payouts/?page_size=100')),
    ok(call(A, 'GET', '/v1/payouts/summary/')),
    ok(call(A, 'GET', `/v1/payout-batches/${ids.batch}/`)),
    ok(call(A, 'GET', '/v1/account/')),
    // The team and the key records: A's owner's session (an API key may not read them).
    ok(api('GET', '/v1/team/', { headers: ownerA.headers })),
    ok(api('GET', '/v1/api-keys/', { headers: ownerA.headers })),
    ok(call(A, 'GET', `/v1/members/${ids.member}/links/`)),
    ok(call(A, 'GET', '/v1/applications/?page_size=100')),
    ok(call(A, 'GET', '/v1/fraud-rules/')),
    ok(call(A, 'GET', '/v1/fraud-flags/?page_size=100')),
    ok(call(A, 'GET', `/v1/fraud-flags/${ids.fraudFlag}/`)),
    ok(call(A, 'GET', `/v1/rewards/${ids.heldReward}/`)),
  ]);
  // Deliveries move on by themselves (retries of the closed port): only who and what is compared.
  const deliveryIds = (deliveries.results as { id: string }[]).map((d) => d.id);
  return {
    campaign,
    member,
    referral,
    open,
    campaigns,
    members,
    referrals,
    subscriptions,
    hook,
    hooks,
    rewards,
    payouts,
    summary,
    batch,
    account,
    team,
    keyRecords,
    links,
    applications,
    fraudRules,
    fraudFlags,
    fraudFlag,
    heldReward,
    deliveries: { count: deliveries.count >= deliveryIds.length, ids: deliveryIds.length > 0 },
  };
}

function expect401(res: ApiResponse, detail: string, label: string): void {
  expect({ label, status: res.status, body: res.body }).toEqual({ label, status: 401, body: { detail } });
  expect(res.headers['www-authenticate']).toBe('Bearer');
}

const publishableRoutes = routes.filter((r) => r.auth === 'publishable-key');

describe('the matrix covers the route table', () => {
  it('every route is API-key, session, login, publishable-key, provider-signature or unauthenticated, and each keyed route has a request here', () => {
    expect(
      routes.every((r) =>
        ['api-key', 'session', 'login', 'publishable-key', 'provider-signature', 'none', 'portal', 'portal-link'].includes(
          r.auth ?? 'api-key',
        ),
      ),
    ).toBe(true);
    expect(portalRoutes.map((r) => r.name).sort()).toEqual([
      'CreatePortalLink',
      'DeletePortalLink',
      'GetPortalTaxDetails',
      'PortalLinks',
      'PortalMe',
      'PortalPayouts',
      'PortalReferrals',
      'PortalRewards',
      'PortalStats',
      'PortalStripeAccountLink',
      'PutPortalTaxDetails',
      'UpdatePortalMe',
    ]);
    expect(apiKeyRoutes.length).toBeGreaterThanOrEqual(19);
    for (const route of keyedRoutes) expect(() => pathFor(route)).not.toThrow();
    expect(sessionRoutes.map((r) => r.name).sort()).toEqual([
      'CreateApiKey',
      'DeletePayoutRail',
      'InviteTeamMember',
      'ListApiKeys',
      'ListPayoutRails',
      'ListTeam',
      'RemoveTeamMember',
      'RevokeApiKey',
      'SetPayoutRail',
      'SetProviderConnection',
      'UpdateTeamMember',
    ]);
    expect(loginRoutes.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'DELETE /auth/sessions/current/',
      'GET /auth/sessions/current/',
      'POST /auth/login-links/',
      'POST /auth/sessions/',
    ]);
    expect(publishableRoutes.map((r) => r.name).sort()).toEqual(['CreateJsReferral', 'RecordClick']);
    // Unauthenticated routes serve no account data: the script, the CORS preflights, the public
    // documentation (and `/`, which points to it) and the liveness check.
    expect(
      routes
        .filter((r) => r.auth === 'none')
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    ).toEqual(
      [
        'GET /js/refloop.js',
        'GET /js/refloop-embed.js',
        'GET /portal/{account_id}/',
        'GET /portal/{account_id}/login/',
        'OPTIONS /js/v1/clicks/',
        'OPTIONS /js/v1/referrals/',
        'GET /v1/openapi.json',
        'GET /docs/',
        'GET /',
        'GET /health',
        'GET /unsubscribe/{token}/',
        'POST /unsubscribe/{token}/',
        'GET /join/{account_slug}/{campaign_slug}/',
        'POST /join/v1/{account_slug}/{campaign_slug}/applications/',
        'GET /join/confirm/{token}/',
        'POST /join/confirm/{token}/',
      ].sort(),
    );
    // The portal's page reads the account's embed origins, and shows nothing of any member without a token;
    // a member email's unsubscribe link reads (and its POST sets) the opt-out of the one member its token names.
    expect(routes.filter((r) => r.auth === 'none' && r.table !== 'none').map((r) => r.name)).toEqual([
      'PortalPage',
      // The same page on the affiliate's login path (the login view), by the account's slug or id.
      'PortalLoginPage',
      // An affiliate programme's public page and form (docs/affiliates.md): the page reads the campaign's
      // public settings; the form stores a join request (never an application) and answers the same 202
      // whoever applies; the confirmation link acts for the one join request its token names.
      'JoinPage',
      'SubmitApplication',
      'ConfirmApplicationPage',
      'ConfirmApplication',
      'UnsubscribePage',
      'Unsubscribe',
    ]);
  });
});

describe('publishable keys: only the public /js/v1/ endpoints, never /v1/; secret keys never on /js/v1/', () => {
  /** A js body naming A's member code (valid for A). */
  const jsBody = (route: Route) =>
    route.name === 'RecordClick'
      ? { code: ids.memberCode, visitor_id: `v-${suffix}` }
      : { member_code: ids.memberCode, user_identifier: `js-user-${suffix}` };
  const sendJs = (route: Route, headers: Record<string, string>) => api(route.method, route.path, { headers, body: jsBody(route) });

  it("A's publishable key on every /v1/ route: 401 Invalid token, nothing changes", async () => {
    const before = await snapshotOfA();
    for (const route of keyedRoutes)
      expect401(
        await send(route, { authorization: `Bearer ${A.publishableKey}` }),
        'Invalid token.',
        `${route.name} with a publishable key`,
      );
    expect(await snapshotOfA()).toEqual(before);
  });

  it('no key, malformed keys, unknown keys and a secret key on /js/v1/: 401, nothing changes', async () => {
    const before = await snapshotOfA();
    for (const route of publishableRoutes) {
      expect401(await sendJs(route, {}), 'Authentication credentials were not provided.', `${route.name} without a header`);
      for (const authorization of [
        'Bearer',
        'Basic x',
        `Bearer ${A.publishableKey} extra`,
        `Bearer rfl_pub_${randomBytes(24).toString('base64url')}`,
        `Bearer ${A.publishableKey}!`,
      ]) {
        expect401(await sendJs(route, { authorization }), 'Invalid token.', `${route.name} with "${authorization.slice(0, 24)}"`);
      }
      expect401(
        await sendJs(route, { authorization: `Bearer ${A.key}` }),
        'Secret API keys are not accepted here; use the publishable key (rfl_pub_...).',
        `${route.name} with a secret key`,
      );
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it("B's publishable key with A's member code: A's member and referrals are untouched", async () => {
    const before = await snapshotOfA();
    const click = await api('POST', '/js/v1/clicks/', { key: B.publishableKey, body: { code: ids.memberCode, visitor_id: `b-${suffix}` } });
    expect([click.status, click.body]).toEqual([200, { recorded: true, attribution: { model: 'first_click', days: 60 } }]);
    const referral = await api('POST', '/js/v1/referrals/', {
      key: B.publishableKey,
      body: { member_code: ids.memberCode, user_identifier: `js-b-${suffix}` },
    });
    // Answered like a success (issue 11 item 6: unknown codes are not revealed), with a decoy id that names nothing.
    expect([referral.status, Object.keys(referral.body)]).toEqual([200, ['id']]);
    expect((await api('GET', `/v1/referrals/${referral.body.id}/`, { key: A.key })).status).toBe(404);
    expect((await api('GET', `/v1/referrals/${referral.body.id}/`, { key: B.key })).status).toBe(404);
    expect(await snapshotOfA()).toEqual(before);
  });

  it('a revoked publishable key: 401 on both endpoints; the account gets a new one', async () => {
    const old = A.publishableKey;
    expect((await api('POST', '/js/v1/clicks/', { key: old, body: { code: 'NOBODY' } })).status).toBe(200);
    await revokeApiKey(old);
    for (const route of publishableRoutes)
      expect401(await sendJs(route, { authorization: `Bearer ${old}` }), 'Invalid token.', `${route.name} with a revoked key`);
    const renewed = (await ensurePublishableKey(A.accountId)).publishableKey as string;
    expect(renewed).not.toBe(old);
    expect((await api('POST', '/js/v1/clicks/', { key: renewed, body: { code: 'NOBODY' } })).status).toBe(200);
    A.publishableKey = renewed;
  });
});

describe('without valid credentials: 401 on every API-key and session route, nothing changes', () => {
  it('no Authorization header: 401 "Authentication credentials were not provided."', async () => {
    const before = await snapshotOfA();
    for (const route of keyedRoutes) {
      expect401(await send(route, {}), 'Authentication credentials were not provided.', `${route.name} without a header`);
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it('malformed Authorization headers: 401 "Invalid token."', async () => {
    const before = await snapshotOfA();
    const malformed = [
      'Bearer',
      'Token',
      'Basic x',
      `Basic ${Buffer.from(`user:${A.key}`).toString('base64')}`,
      'garbage',
      `Bearer ${A.key} extra`,
      `Bearer ${A.key.slice('rfl_live_'.length)}`,
      `Bearer ${A.key}!`,
      `Bearer rfl_live_${'x'.repeat(200)}`,
      `Bearerx ${A.key}`,
    ];
    for (const route of keyedRoutes) {
      for (const authorization of malformed) {
        expect401(await send(route, { authorization }), 'Invalid token.', `${route.name} with "${authorization.slice(0, 24)}"`);
      }
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it('a well-formed unknown key: 401 "Invalid token."', async () => {
    const unknown = `rfl_live_${randomBytes(32).toString('base64url')}`;
    for (const route of keyedRoutes) {
      expect401(await send(route, { authorization: `Bearer ${unknown}` }), 'Invalid token.', `${route.name} with an unknown key`);
    }
  });

  it('a revoked key: works until revoked, then 401 "Invalid token." on every route (Bearer and Token)', async () => {
    expect((await call(revokedKey, 'GET', `/v1/campaigns/${ids.campaign}/`)).status).toBe(200);
    await revokeApiKey(revokedKey);
    const before = await snapshotOfA();
    for (const route of keyedRoutes) {
      expect401(await send(route, { authorization: `Bearer ${revokedKey}` }), 'Invalid token.', `${route.name} with a revoked key`);
      expect401(await send(route, { authorization: `Token ${revokedKey}` }), 'Invalid token.', `${route.name} with a revoked Token key`);
    }
    expect(await snapshotOfA()).toEqual(before);
    // The other key of the account still works.
    expect((await call(A, 'GET', `/v1/campaigns/${ids.campaign}/`)).status).toBe(200);
  });
});

describe('dashboard sessions on the keyed routes', () => {
  it('a session cookie that names no session (unknown, ended or malformed): 401, nothing changes', async () => {
    const before = await snapshotOfA();
    const unknown = randomBytes(32).toString('base64url');
    for (const route of keyedRoutes) {
      const res = await send(route, sessionHeaders(unknown, API_ORIGIN));
      expect({ route: route.name, status: res.status, body: res.body }).toEqual({
        route: route.name,
        status: 401,
        body: { detail: SESSION_ENDED },
      });
      // A cookie value that is not a token is no session at all.
      expect401(
        await send(route, { cookie: 'refloop_session=../../etc', origin: API_ORIGIN }),
        'Authentication credentials were not provided.',
        `${route.name} with a malformed cookie`,
      );
    }
    expect(await snapshotOfA()).toEqual(before);
  });
});

describe('session-only routes: the team, API keys and the provider connection', () => {
  it("A's valid API key: 403 on every one (Bearer and Token), nothing changes", async () => {
    const before = await snapshotOfA();
    for (const route of sessionRoutes) {
      for (const authorization of [`Bearer ${A.key}`, `Token ${A.key}`]) {
        const res = await send(route, { authorization });
        expect({ route: route.name, authorization: authorization.split(' ')[0], status: res.status, body: res.body }).toEqual({
          route: route.name,
          authorization: authorization.split(' ')[0],
          status: 403,
          body: { detail: SESSION_ONLY },
        });
      }
      // A key beside a valid session cookie: the request is the key's, and still refused.
      const both = await send(route, { authorization: `Bearer ${A.key}`, ...ownerA.headers });
      expect({ route: route.name, status: both.status, body: both.body }).toEqual({
        route: route.name,
        status: 403,
        body: { detail: SESSION_ONLY },
      });
    }
    expect(await snapshotOfA()).toEqual(before);
    // A's owner session does reach them (positive control).
    expect((await api('GET', '/v1/team/', { headers: ownerA.headers })).status).toBe(200);
  });

  it("B's owner session with A's team member and key ids: 404, and A's key keeps working", async () => {
    const before = await snapshotOfA();
    // The payout rails' {kind} is no id: B's session reaches B's own rail connections there.
    const idRoutes = sessionRoutes.filter((r) => r.path.includes('{') && !r.path.startsWith('/v1/account/payout-rails/'));
    expect(idRoutes.map((r) => r.name).sort()).toEqual(['RemoveTeamMember', 'RevokeApiKey', 'UpdateTeamMember']);
    for (const route of idRoutes) {
      const res = await send(route, ownerB.headers);
      expect({ route: route.name, status: res.status, body: res.body }).toEqual({
        route: route.name,
        status: 404,
        body: { detail: 'Not found.' },
      });
    }
    // And A's data through B's session on A-keyed reads: B's own, never A's.
    const team = await ok(api('GET', '/v1/team/', { headers: ownerB.headers }));
    expect(team.results.map((m: { id: string }) => m.id)).toEqual([ownerB.member.id]);
    const account = await ok(api('GET', '/v1/account/', { headers: ownerB.headers }));
    expect(account.id).toBe(B.accountId);
    expect(await snapshotOfA()).toEqual(before);
  });
});

describe('login routes: no credential, never a 5xx on bad input', () => {
  it('bad bodies, content types, cookies and origins answer 4xx in the contract shape (or the documented success)', async () => {
    const bodies: { rawBody?: string; body?: unknown; type?: string }[] = [
      { rawBody: '{', type: 'application/json' },
      { rawBody: 'email=a@b.co', type: 'application/x-www-form-urlencoded' },
      { rawBody: '', type: 'application/json' },
      { body: null },
      { body: [] },
      { body: 'x' },
      { body: { email: 5, token: 5 } },
      { body: { email: { $ne: '' }, token: { $gt: '' } } },
      { body: { email: `${'a'.repeat(300)}@example.com`, token: 'A'.repeat(101) } },
      { body: { email: '\ud800@example.com', token: '\u0000'.repeat(43) } },
      { body: { email: `x@example.com`, token: `${'../'.repeat(14)}x` } },
      { rawBody: JSON.stringify({ email: 'x'.repeat(70_000) }), type: 'application/json' },
    ];
    const odd: Record<string, string>[] = [
      {},
      { cookie: 'refloop_session=' },
      { cookie: `refloop_session=${'A'.repeat(43)}; refloop_session=${'B'.repeat(43)}` },
      { cookie: 'x'.repeat(4000) },
      { origin: 'null' },
    ];
    let sent = 0;
    for (const route of loginRoutes) {
      for (const b of bodies) {
        for (const headers of odd) {
          const res = await api(route.method, route.path, {
            sourceIp: LOGIN_IP,
            headers: { ...headers, ...(b.type ? { 'content-type': b.type } : {}) },
            ...(b.rawBody !== undefined ? { rawBody: b.rawBody } : b.body !== undefined ? { body: b.body } : {}),
          });
          sent++;
          const label = `${route.method} ${route.path} ${JSON.stringify(b).slice(0, 60)} ${JSON.stringify(headers).slice(0, 60)}`;
          expect({ label, serverError: res.status >= 500 }).toEqual({ label, serverError: false });
          if (res.status >= 400) {
            const keys = Object.keys(res.body ?? {});
            const shaped =
              (keys.length === 1 && keys[0] === 'detail' && typeof res.body.detail === 'string') ||
              (keys.length > 0 && keys.every((k) => Array.isArray(res.body[k])));
            expect({ label, shaped }).toEqual({ label, shaped: true });
          } else {
            // Only the login link (202 for a valid address), the logout (204) could succeed here.
            expect({ label, status: res.status }).toEqual({ label, status: route.method === 'DELETE' ? 204 : 202 });
          }
        }
      }
    }
    expect(sent).toBe(loginRoutes.length * bodies.length * odd.length);
  });
});

describe("another account's valid key with this account's ids: 404, never data", () => {
  const NOT_FOUND = { detail: 'Not found.' };
  // ExportCsv's {file} names a list (rewards.csv), not an id: B's export is B's own data (checked below).
  const idRoutes = () => apiKeyRoutes.filter((r) => r.path.includes('{') && r.name !== 'ExportCsv');

  it('every id route answers 404 {"detail": "Not found."} and changes nothing in A', async () => {
    // A's rail payout B might try to re-send and A's rail batch B might try to reconcile (both would be 202 for A).
    const unclaimed = await putUnclaimedPaypalPayout(A.accountId);
    const railBatch = await putProcessingRailBatch(A.accountId);
    const railItems = () =>
      Promise.all([
        getItem(moneyKeys.payout(A.accountId, unclaimed.id)),
        getItem(moneyListKeys.payoutBatch(A.accountId, railBatch)),
        getItem(moneyListKeys.payoutBatch(A.accountId, unclaimed.batch_id as string)),
      ]);
    const railBefore = await railItems();
    const before = await snapshotOfA();
    expect(
      idRoutes()
        .map((r) => r.name)
        .sort(),
    ).toEqual(
      [
        'ConvertReferral',
        'ConvertReferralV1',
        'DeleteCampaign',
        'DeleteMember',
        'DeleteReferral',
        'GetCampaign',
        'GetMember',
        'GetReferral',
        'GetReferralByUser',
        'DiagnoseReferral',
        'GetSubscription',
        'UpdateCampaign',
        'UpdateMember',
        'GetWebhookEndpoint',
        'UpdateWebhookEndpoint',
        'DeleteWebhookEndpoint',
        'ListWebhookDeliveries',
        'GetReward',
        'ApproveReward',
        'VoidReward',
        'GetPayout',
        'MarkPayoutPaid',
        'MarkPayoutFailed',
        'CancelPayout',
        'ResendPayout',
        'GetPayoutBatch',
        'PayoutBatchFile',
        'MarkPayoutBatchPaid',
        'ReconcilePayoutBatch',
        'CreatePortalSession',
        'RevokePortalSessions',
        'ListMemberLinks',
        'CreateMemberLink',
        'DeleteMemberLink',
        'GetApplication',
        'ApproveApplication',
        'RejectApplication',
        'GetFraudFlag',
        'ReleaseFraudFlag',
        'VoidFraudFlag',
        'ReviewFraudFlag',
        'ReleaseReward',
      ].sort(),
    );
    for (const route of idRoutes()) {
      const res = await send(route, { authorization: `Bearer ${B.key}` });
      expect({ route: route.name, status: res.status, body: res.body }).toEqual({ route: route.name, status: 404, body: NOT_FOUND });
      // Also with the id routes' other spellings: Token scheme, no trailing slash.
      const bare = await api(route.method, pathFor(route).replace(/\/$/, ''), {
        headers: { authorization: `Token ${B.key}` },
        ...(bodyFor(route) === undefined ? {} : { body: bodyFor(route) }),
      });
      expect({ route: route.name, status: bare.status, body: bare.body }).toEqual({ route: route.name, status: 404, body: NOT_FOUND });
    }
    // The other converted referral and the other member, by id; conversions by subscription id too.
    for (const [method, path, body] of [
      ['GET', `/v1/referrals/${ids.openReferral}/`, undefined],
      ['GET', `/v1/members/${ids.otherMember}/`, undefined],
      ['GET', `/v1/webhook-endpoints/${ids.otherWebhookEndpoint}/`, undefined],
      ['DELETE', `/v1/webhook-endpoints/${ids.otherWebhookEndpoint}/`, undefined],
      ['POST', `/referrals/${ids.openReferral}/conversion/`, { subscription_id: ids.subscription }],
      ['POST', `/v1/referrals/${ids.referral}/conversion/`, { subscription_id: ids.subscription }],
      ['POST', `/v1/payouts/${unclaimed.id}/resend/`, undefined],
      ['POST', `/v1/payout-batches/${railBatch}/reconcile/`, undefined],
      ['POST', `/v1/payout-batches/${unclaimed.batch_id}/reconcile/`, undefined],
      ['GET', `/v1/fraud-flags/${ids.otherFraudFlag}/`, undefined],
      ['POST', `/v1/fraud-flags/${ids.otherFraudFlag}/review/`, {}],
      ['POST', `/v1/rewards/${ids.heldReward}/void/`, { reason: 'fraud' }],
    ] as const) {
      const res = await call(B, method, path, body);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: NOT_FOUND });
    }
    // B's exports hold none of A's rows.
    for (const file of ['members.csv', 'referrals.csv', 'rewards.csv', 'payouts.csv', 'subscriptions.csv']) {
      const res = await call(B, 'GET', `/v1/exports/${file}`);
      expect(res.status).toBe(200);
      for (const id of [ids.member, ids.referral, ids.reward, ids.payout, String(ids.subscription)])
        expect({ file, leaked: res.text.includes(id) }).toEqual({ file, leaked: false });
    }
    expect(await snapshotOfA()).toEqual(before);
    expect(await railItems()).toEqual(railBefore);
  });

  it("A's ids inside request bodies are unknown to B (400 with the contract's messages), and nothing of A is touched", async () => {
    const before = await snapshotOfA();
    const referral = await call(B, 'POST', '/v1/referrals/', { user_identifier: 'someone', member_code: ids.memberCode });
    expect(referral.status).toBe(400);
    expect(referral.body).toEqual({ member_code: [`Member with code ${ids.memberCode} was not found`] });

    const member = await call(B, 'POST', '/v1/members/', {
      identifier: 'b-new',
      email: 'b-new@example.com',
      campaign: { id: ids.campaign },
      subscription: { id: ids.subscription },
    });
    expect(member.status).toBe(400);
    expect(member.body).toEqual({
      campaign: [`Campaign ${ids.campaign} could not be found`],
      subscription: [`Subscription ${ids.subscription} could not be found`],
    });

    const patch = await call(B, 'PATCH', `/v1/members/${bIds.member}/`, { campaign: { id: ids.campaign } });
    expect(patch.status).toBe(400);
    expect(patch.body).toEqual({ campaign: [`Campaign ${ids.campaign} could not be found`] });
    const patchSub = await call(B, 'PATCH', `/v1/members/${bIds.member}/`, { subscription: { id: ids.subscription } });
    expect(patchSub.status).toBe(400);
    expect(patchSub.body).toEqual({ subscription: [`Subscription ${ids.subscription} could not be found`] });

    // B's own referral converted with A's subscription id: B's Paddle does not know it.
    const convert = await call(B, 'POST', `/v1/referrals/${bIds.referral}/conversion/`, { subscription_id: ids.subscription });
    expect(convert.status).toBe(400);
    expect(convert.body).toEqual({ subscription_id: [`Subscription ${ids.subscription} could not be found`] });

    // Uniqueness is per account: A's identifier, email and code are free in B, and using them leaves A alone.
    const twin = await ok(call(B, 'POST', '/v1/members/', { identifier: 'alice', email: 'alice@example.com', code: ids.memberCode }), 201);
    expect(twin.id).not.toBe(ids.member);
    expect(twin.stats).toMatchObject({ referrals: 0, conversions: 0, credit_earned: '0.00' });
    const twinCampaign = await ok(call(B, 'POST', '/v1/campaigns/', { name: 'Second' }), 201);
    expect(twinCampaign.id).not.toBe(ids.campaign);
    expect(await snapshotOfA()).toEqual(before);
    expect((await call(B, 'GET', `/v1/referrals/${bIds.referral}/`)).body.is_converted).toBe(false);
  });

  it("fraud: B's rule settings, preview and queue are B's own; A's flag and reward ids, and malformed ones, are 404", async () => {
    const before = await snapshotOfA();
    const patched = await ok(call(B, 'PATCH', '/v1/fraud-rules/', { duplicate_ip: { action: 'hold', max_referrals: 1, window_hours: 1 } }));
    expect(patched.duplicate_ip).toEqual({ action: 'hold', max_referrals: 1, window_hours: 1 });
    // B's preview reads B's referrals only (one, made by its key): nothing of A's four is counted or shown.
    const preview = await ok(call(B, 'POST', '/v1/fraud-rules/preview/', { rule: 'duplicate_ip' }));
    expect(JSON.stringify(preview)).not.toContain(ids.referral);
    expect(preview.would_flag).toBe(0);
    expect(await ok(call(B, 'GET', '/v1/fraud-flags/'))).toEqual({ count: 0, next: null, previous: null, results: [] });
    expect(await ok(call(B, 'GET', `/v1/fraud-flags/?member=${ids.otherMember}&status=open`))).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
    // Malformed ids, with A's own key: 404, never a 5xx.
    for (const [method, path, body] of [
      ['GET', '/v1/fraud-flags/ff_zz/', undefined],
      ['GET', `/v1/fraud-flags/${ids.fraudFlag.toUpperCase()}/`, undefined],
      ['GET', `/v1/fraud-flags/${ids.fraudFlag.slice(3)}/`, undefined],
      ['POST', `/v1/fraud-flags/${encodeURIComponent('../rewards')}/release/`, {}],
      ['POST', '/v1/fraud-flags/ff_00000000000000000000000000000000/void/', {}],
      ['POST', `/v1/rewards/${ids.fraudFlag}/release/`, undefined],
      ['POST', '/v1/rewards/not-an-id/release/', undefined],
    ] as const) {
      const res = await call(A, method, path, body);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: { detail: 'Not found.' } });
    }
    expect(await snapshotOfA()).toEqual(before);
    expect((await ok(call(A, 'GET', `/v1/rewards/${ids.heldReward}/`))).status).toBe('held');
  });

  it('a subscription id both accounts have answers each account with its own copy', async () => {
    // Both emulators started numbering at the same id: B's only subscription has the id of A's first.
    const mine = await ok(call(B, 'GET', `/v1/subscriptions/${bIds.subscription}/`));
    expect(mine.email).toBe('yan@example.com');
    const theirs = await ok(call(A, 'GET', `/v1/subscriptions/${bIds.subscription}/`));
    expect(theirs.email).toBe('alice@example.com');
  });
});

describe("lists: B's lists never contain A's items; A's cursors do not open A's data to B", () => {
  /** Every id (and e-mail) of A that must never appear in an answer to B. */
  async function secretsOfA(): Promise<string[]> {
    const s = await snapshotOfA();
    const out = new Set<string>([A.accountId]);
    for (const c of s.campaigns.results) out.add(c.id);
    for (const m of s.members.results) out.add(m.id);
    for (const r of s.referrals.results) out.add(r.id);
    for (const h of s.hooks.results) out.add(h.id);
    for (const f of s.fraudFlags.results) out.add(f.id);
    out.add('carol@example.com');
    out.add('dan@example.com');
    out.add('bob@example.com');
    return [...out];
  }

  const lists = () => [
    '/v1/referrals/',
    `/v1/referrals/?member=${ids.member}`,
    '/v1/campaigns/',
    '/v1/members/',
    `/v1/members/?campaign=${ids.campaign}`,
    '/v1/subscriptions/',
    '/v1/subscriptions/?status=active',
    '/v1/webhook-endpoints/',
    '/v1/fraud-flags/',
    '/v1/fraud-flags/?status=open',
  ];

  function assertNoneOf(secrets: string[], res: ApiResponse, label: string): void {
    for (const secret of secrets) {
      if (res.text.includes(secret)) throw new Error(`${label}: the answer to B contains A's ${secret}: ${res.text}`);
    }
  }

  it("B's lists hold only B's items; filters on A's member or campaign are empty with count 0", async () => {
    const secrets = await secretsOfA();
    for (const path of lists()) {
      const res = await call(B, 'GET', `${path}${path.includes('?') ? '&' : '?'}page_size=100`);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      assertNoneOf(secrets, res, path);
      expect(res.body.count).toBe(res.body.results.length);
    }
    expect(await ok(call(B, 'GET', `/v1/referrals/?member=${ids.member}`))).toEqual({ count: 0, next: null, previous: null, results: [] });
    expect(await ok(call(B, 'GET', `/v1/members/?campaign=${ids.campaign}`))).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
    const bReferrals = await ok(call(B, 'GET', '/v1/referrals/'));
    expect(bReferrals.results.map((r: { id: string }) => r.id)).toEqual([bIds.referral]);
    const bSubscriptions = await ok(call(B, 'GET', '/v1/subscriptions/'));
    expect(bSubscriptions.results.map((s: { id: number; email: string }) => [s.id, s.email])).toEqual([
      [bIds.subscription, 'yan@example.com'],
    ]);
  });

  it("A's next and previous cursors with B's key: 400 Invalid cursor (or a page of B's only), never A's items", async () => {
    const secrets = await secretsOfA();
    let cursors = 0;
    for (const path of lists()) {
      const sep = path.includes('?') ? '&' : '?';
      const first = await ok(call(A, 'GET', `${path}${sep}page_size=1`));
      expect({ path, next: typeof first.next }).toEqual({ path, next: 'string' });
      const second = await ok(call(A, 'GET', String(first.next).replace(/^https:\/\/api\.test/, '')));
      const links = [first.next, second.previous, second.next].filter((l): l is string => typeof l === 'string');
      for (const link of links) {
        const cursor = new URL(link).searchParams.get('cursor');
        expect(cursor).toBeTruthy();
        cursors++;
        // The link as issued, and the cursor on B's unfiltered list of the same resource.
        const resource = path.split('?')[0] as string;
        for (const attempt of [link.replace(/^https:\/\/api\.test/, ''), `${resource}?page_size=1&cursor=${cursor}`]) {
          const res = await call(B, 'GET', attempt);
          assertNoneOf(secrets, res, attempt);
          if (res.status === 400) expect(res.body).toEqual({ cursor: ['Invalid cursor.'] });
          else {
            expect({ attempt, status: res.status }).toEqual({ attempt, status: 200 });
            expect(res.body.results).toEqual([]);
          }
        }
      }
    }
    expect(cursors).toBeGreaterThanOrEqual(lists().length * 2);
  });
});

describe('public documentation routes', () => {
  it('answer anyone (no key, any key) with the same document, and carry no tenant data', async () => {
    for (const [path, status] of [
      ['/v1/openapi.json', 200],
      ['/docs/', 200],
      ['/', 302],
      ['/health', 200],
    ] as const) {
      const anonymous = await api('GET', path);
      expect({ path, status: anonymous.status }).toEqual({ path, status });
      for (const authorization of ['Bearer nonsense', `Bearer ${A.key}`, `Bearer ${revokedKey}`]) {
        const res = await api('GET', path, { headers: { authorization } });
        expect({ path, status: res.status, same: res.text === anonymous.text }).toEqual({ path, status, same: true });
      }
      for (const secret of [A.accountId, B.accountId, A.key, ids.campaign, ids.member, ...webhookSecrets])
        expect(anonymous.text.includes(secret)).toBe(false);
    }
  });
});

describe('the Paddle webhook: the signature is the credential', () => {
  it("an alert signed with A's Paddle key posted to B's webhook: 403, nothing queued or applied", async () => {
    const out = await paddleA.checkout({ plan_id: 9002, email: 'eve@example.com', deliver: false });
    for (const alert of out.alerts) {
      const res = await webhook(B.accountId, alert.fields);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ detail: 'Invalid signature.' });
    }
    // Unknown account and malformed account id: 404.
    expect((await webhook('0123456789abcdef', out.alerts[0]!.fields)).status).toBe(404);
    expect((await webhook('not-an-account', out.alerts[0]!.fields)).status).toBe(404);
    // An account without provider settings: 404.
    const { account, apiKey } = await createAccount({ name: `bare-${suffix}`, plan: 'starter' });
    apiKeys.push(apiKey);
    expect((await webhook(account.accountId, out.alerts[0]!.fields)).status).toBe(404);
    // An API key does not replace the signature.
    const unsigned = Object.fromEntries(Object.entries(out.alerts[0]!.fields).filter(([k]) => k !== 'p_signature'));
    const withKey = await api('POST', `/webhooks/paddle/${A.accountId}/`, {
      rawBody: new URLSearchParams(unsigned).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${A.key}` },
    });
    expect(withKey.status).toBe(403);

    // A valid alert for B, sent after: once it is applied, the refused ones would have been too.
    const later = await subscribed(B, 'later@example.com');
    await pollUntil(async () => (await queues.count('provider-events')) === 0, { timeoutMs: 15_000 });
    const subscriptionId = out.subscription.subscription_id;
    // B's copy of that id, if any, is B's own later checkout, never eve's.
    expect(later.subscription.subscription_id).not.toBe(subscriptionId);
    expect(await getSubscription(B.accountId, subscriptionId)).toBeNull();
    expect(await getSubscription(A.accountId, subscriptionId)).toBeNull();

    // The same alerts to A's own webhook are accepted and applied (positive control).
    await deliver(A, out.alerts);
    await pollUntil(async () => (await getSubscription(A.accountId, subscriptionId))?.email === 'eve@example.com', { timeoutMs: 15_000 });
  });
});

/** Chargebee webhooks' Authorization values (Basic base64 of the pair): they must never reach a log line. */
const basicHeaders: string[] = [];

describe("the Chargebee webhook: the account's Basic-auth pair is the credential", () => {
  it("C's pair at D's webhook: 403; no account or another provider's: 404; an API key is no pair; nothing applied but C's own", async () => {
    const pairOf = () => ({ username: 'refloop', password: `SECRET${randomBytes(16).toString('hex')}` });
    const chargebee = async (name: string) => {
      const { account, apiKey } = await createAccount({ name: `security-chargebee-${name}-${suffix}`, plan: 'starter' });
      apiKeys.push(apiKey);
      const pair = pairOf();
      await saveProviderConnection(account.accountId, {
        kind: 'chargebee',
        site: `security-${name}`,
        apiKey: `test_SECRET${randomBytes(8).toString('hex')}`,
        // A closed port: the event below is of a type the worker acknowledges without calling Chargebee.
        apiUrl: 'http://127.0.0.1:9',
        webhookUsername: pair.username,
        webhookPassword: pair.password,
      });
      const header = basicAuthHeader(`${pair.username}:${pair.password}`);
      basicHeaders.push(header, pair.password);
      return { accountId: account.accountId, key: apiKey, header };
    };
    const [C, D] = [await chargebee('c'), await chargebee('d')];
    const event = JSON.stringify({
      id: `ev_security${suffix}`,
      occurred_at: Math.floor(Date.now() / 1000),
      source: 'api',
      object: 'event',
      api_version: 'v2',
      event_type: 'customer_changed',
      webhook_status: 'scheduled',
      content: { customer: { id: 'AzZTZgVlCqZ2k1Aa', object: 'customer', email: 'eve@example.com' } },
    });
    const post = (account: string, authorization?: string) =>
      answerOf(
        api('POST', `/webhooks/chargebee/${account}/`, {
          rawBody: event,
          headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
        }),
      );
    await pollUntil(async () => (await queues.count('provider-events')) === 0, { timeoutMs: 15_000 });
    expect(await post(D.accountId, C.header)).toEqual([403, 'detail']);
    expect(await post(D.accountId)).toEqual([403, 'detail']);
    // An API key of the account, or its session, is no pair.
    expect(await post(C.accountId, `Bearer ${C.key}`)).toEqual([403, 'detail']);
    expect(await post(C.accountId, basicAuthHeader(`${C.key}:`))).toEqual([403, 'detail']);
    // A Paddle Classic account (A), an unknown one, a malformed id: 404 whatever the pair.
    for (const account of [A.accountId, '0123456789abcdef', 'not-an-account'])
      expect({ account, answer: await post(account, C.header) }).toEqual({ account, answer: [404, 'detail'] });
    expect(await queues.count('provider-events')).toBe(0);
    // The positive control: C's own pair at C's webhook.
    expect(await post(C.accountId, C.header)).toEqual([200, 'received']);
    await pollUntil(async () => (await queues.count('provider-events')) === 0, { timeoutMs: 15_000 });
  });
});

describe("the payout rails' webhook intakes: the rail's signature is the credential", () => {
  it("a delivery signed for A: 200 at A's intake with no credential; at B's (connected elsewhere, or not at all) 404 or 403; an API key is no signature", async () => {
    const [paypalA, paypalB, stripeA, stripeB, wiseA, wiseB] = await Promise.all([
      startPaypalEmulator({ settleAfterMs: null }),
      startPaypalEmulator({ settleAfterMs: null }),
      startStripeEmulator({ connect: { webhookUrl: null } }),
      startStripeEmulator({ connect: { webhookUrl: null } }),
      startWiseEmulator({ webhookUrl: null }),
      startWiseEmulator({ webhookUrl: null }),
    ]);
    try {
      const { account: bare, apiKey } = await createAccount({ name: `rails-bare-${suffix}`, plan: 'starter' });
      apiKeys.push(apiKey);
      const rails = [
        {
          kind: 'paypal',
          path: 'paypal',
          a: paypalConnection(paypalA),
          b: paypalConnection(paypalB),
          signed: () => paypalDelivery(paypalA),
        },
        {
          kind: 'stripe',
          path: 'stripe-connect',
          a: stripeConnection(stripeA),
          b: stripeConnection(stripeB),
          signed: () => stripeDelivery(stripeA),
        },
        { kind: 'wise', path: 'wise', a: wiseConnection(wiseA), b: wiseConnection(wiseB), signed: () => wiseDelivery(wiseA) },
      ] as const;
      for (const r of rails) {
        await saveRailConnection(A.accountId, r.kind, r.a);
        await saveRailConnection(B.accountId, r.kind, r.b);
      }
      clearRailConnectionCache();
      const post = (account: string, path: string, d: RailDelivery, extra: Record<string, string> = {}) =>
        api('POST', `/webhooks/${path}/${account}/`, { rawBody: d.rawBody, headers: { ...d.headers, ...extra } });
      for (const r of rails) {
        const label = r.kind;
        // The positive control: no Authorization, no session, only the rail's signature.
        expect({ label, status: (await post(A.accountId, r.path, r.signed())).status }).toEqual({ label, status: 200 });
        // B is connected to another rail account: A's signature is not B's.
        expect({ label, answer: await answerOf(post(B.accountId, r.path, r.signed())) }).toEqual({ label, answer: [403, 'detail'] });
        // An account without this rail, an unknown account, a malformed id: 404.
        for (const account of [bare.accountId, '0123456789abcdef0123456789abcdef', 'not-an-account'])
          expect({ label, account, answer: await answerOf(post(account, r.path, r.signed())) }).toEqual({
            label,
            account,
            answer: [404, 'detail'],
          });
        // A's API key (or its owner's session cookie) does not replace the signature.
        const unsigned: RailDelivery = { rawBody: r.signed().rawBody, headers: { 'content-type': 'application/json' } };
        expect({ label, answer: await answerOf(post(A.accountId, r.path, unsigned, { authorization: `Bearer ${A.key}` })) }).toEqual({
          label,
          answer: [403, 'detail'],
        });
        expect({ label, answer: await answerOf(post(A.accountId, r.path, unsigned, ownerA.headers)) }).toEqual({
          label,
          answer: [403, 'detail'],
        });
      }
    } finally {
      await Promise.all([paypalA, paypalB, stripeA, stripeB, wiseA, wiseB].map((e) => e.stop()));
    }
  });
});

/** A refusal's status and the keys of its body (the contract's `{"detail": …}`). */
async function answerOf(res: Promise<ApiResponse>): Promise<[number, string]> {
  const r = await res;
  return [r.status, Object.keys(r.body ?? {}).join(',')];
}

describe('the member portal: its token opens only /portal/v1/ and only its member', () => {
  /** A portal session of one of A's members, through the API (link made with A's key, opened). */
  async function portalOf(memberId: string): Promise<string> {
    const link = await ok(call(A, 'POST', `/v1/members/${memberId}/portal-sessions/`, {}), 201);
    const token = new URL(link.url).hash.slice('#token='.length);
    const opened = await ok(api('POST', '/portal/v1/sessions/', { body: { token }, sourceIp: LOGIN_IP }), 201);
    portalTokens.push(token, opened.token);
    return opened.token as string;
  }
  const portalGet = (path: string, token: string | null, headers: Record<string, string> = {}) =>
    api('GET', path, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });

  it('a portal token on every API-key and session route: 401, nothing changes', async () => {
    const token = await portalOf(ids.member);
    const before = await snapshotOfA();
    for (const route of keyedRoutes)
      expect401(await send(route, { authorization: `Bearer ${token}` }), 'Invalid token.', `${route.name} with a portal token`);
    expect(await snapshotOfA()).toEqual(before);
  });

  it("API keys (A's, B's, revoked), publishable keys, session cookies and nothing on every portal route: 401, nothing changes", async () => {
    const before = await snapshotOfA();
    const only = 'This is the member portal API: it takes a portal session token (rps_...), not an API key.';
    for (const route of portalRoutes) {
      const body = route.method === 'PATCH' ? { body: { email_opt_out: true } } : {};
      const sendPortal = (headers: Record<string, string>) => api(route.method, route.path, { headers, ...body });
      for (const key of [A.key, B.key, revokedKey])
        expect401(await sendPortal({ authorization: `Bearer ${key}` }), only, `${route.name} with an API key`);
      expect401(await sendPortal({ authorization: `Bearer ${A.publishableKey}` }), only, `${route.name} with a publishable key`);
      expect401(await sendPortal(ownerA.headers), 'Authentication credentials were not provided.', `${route.name} with A's owner session`);
      expect401(await sendPortal({}), 'Authentication credentials were not provided.', `${route.name} without a header`);
      for (const authorization of ['Bearer', 'Basic x', `Bearer rps_${'A'.repeat(43)}`, `Bearer rpl_${'A'.repeat(43)}`]) {
        const res = await sendPortal({ authorization });
        expect({ route: route.name, authorization, status: res.status }).toEqual({ route: route.name, authorization, status: 401 });
      }
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it("B's key cannot make or end portal sessions of A's members (404), and the portal's page names no member", async () => {
    for (const method of ['POST', 'DELETE']) {
      const res = await api(method, `/v1/members/${ids.member}/portal-sessions/`, {
        key: B.key,
        ...(method === 'POST' ? { body: {} } : {}),
      });
      expect({ method, status: res.status, body: res.body }).toEqual({ method, status: 404, body: { detail: 'Not found.' } });
    }
    const page = await api('GET', `/portal/${A.accountId}/`);
    expect(page.status).toBe(200);
    for (const secret of ['alice', 'bob@', ids.member, ids.memberCode]) expect(page.text.includes(secret)).toBe(false);
  });

  it("a member's portal shows only that member: Bob's referrals, rewards and payouts are not in Alice's lists, and Bob's cursors do not open them to Alice", async () => {
    const alice = await portalOf(ids.member);
    const bob = await portalOf(ids.otherMember);
    const [aliceRefs, bobRefs] = await Promise.all([
      portalGet('/portal/v1/referrals/?page_size=1', alice),
      portalGet('/portal/v1/referrals/?page_size=100', bob),
    ]);
    const aliceIds = (await call(A, 'GET', `/v1/referrals/?member=${ids.member}&page_size=100`)).body.results.map(
      (r: { id: string }) => r.id,
    );
    expect(aliceRefs.body.count).toBe(aliceIds.length);
    expect(aliceIds).toContain(aliceRefs.body.results[0].id);
    expect(bobRefs.body.results.map((r: { id: string }) => r.id)).toEqual([ids.openReferral]);
    const aliceRewards = await portalGet('/portal/v1/rewards/?page_size=100', alice);
    expect(aliceRewards.body.results.map((r: { id: string }) => r.id)).not.toContain(ids.reward);
    expect((await portalGet('/portal/v1/rewards/', bob)).body.results.map((r: { id: string }) => r.id)).toEqual([ids.reward]);
    expect((await portalGet('/portal/v1/payouts/', alice)).body).toMatchObject({ count: 0, results: [] });
    expect((await portalGet('/portal/v1/payouts/', bob)).body.results.map((p: { id: string }) => p.id)).toEqual([ids.payout]);
    // Alice's next cursor in Bob's session (and the other way round): refused, never the other's items.
    const aliceNext = aliceRefs.body.next as string | null;
    if (aliceNext) {
      const res = await portalGet(aliceNext.replace(/^https?:\/\/[^/]+/, ''), bob);
      expect(res.status).toBe(400);
    }
    // The masked user never shows the identifier.
    expect(JSON.stringify(aliceRefs.body)).not.toContain('user/with space');
    // Bob's settings change nothing of Alice.
    const before = (await call(A, 'GET', `/v1/members/${ids.member}/`)).body;
    expect(
      (
        await api('PATCH', '/portal/v1/me/', {
          headers: { authorization: `Bearer ${bob}` },
          body: { payout_email: 'bob2@pay.example.com', email_opt_out: false },
        })
      ).status,
    ).toBe(200);
    expect((await call(A, 'GET', `/v1/members/${ids.member}/`)).body).toEqual(before);
  });

  /** An affiliate's cookie session for one of A's members (an emailed login link, opened). */
  async function cookieOf(memberId: string): Promise<string> {
    const url = await affiliateLoginUrl(A.accountId, memberId);
    const token = new URL(url as string).hash.slice('#token='.length);
    const opened = await api('POST', '/portal/v1/login-sessions/', { body: { token }, sourceIp: LOGIN_IP });
    expect(opened.status).toBe(201);
    const cookie = (opened.cookies[0] ?? '').split(';')[0] as string;
    portalTokens.push(token, cookie.slice('refloop_portal='.length));
    return cookie;
  }

  it("an affiliate's portal cookie on every API-key and session route: 401, nothing changes (the dashboard reads refloop_session only)", async () => {
    const cookie = await cookieOf(ids.member);
    const before = await snapshotOfA();
    for (const route of keyedRoutes) {
      const res = await send(route, { cookie, origin: API_ORIGIN });
      expect({ route: route.name, status: res.status }).toEqual({ route: route.name, status: 401 });
    }
    // Its token under the dashboard's cookie name is no dashboard session either.
    const token = cookie.slice('refloop_portal='.length);
    expect((await api('GET', '/v1/members/', { headers: { cookie: `refloop_session=${token}` } })).status).toBe(401);
    expect(await snapshotOfA()).toEqual(before);
  });

  it("an affiliate's cookie shows only that member, through cursors and sub-id filters too; a cross-site write is refused", async () => {
    const alice = await cookieOf(ids.member);
    const bob = await cookieOf(ids.otherMember);
    const asCookie = (path: string, cookie: string) => api('GET', path, { headers: { cookie } });
    const bobRefs = await asCookie('/portal/v1/referrals/?page_size=100', bob);
    expect(bobRefs.body.results.map((r: { id: string }) => r.id)).toEqual([ids.openReferral]);
    const aliceRefs = await asCookie('/portal/v1/referrals/?page_size=1', alice);
    expect(aliceRefs.body.results.map((r: { id: string }) => r.id)).not.toContain(ids.openReferral);
    const aliceNext = aliceRefs.body.next as string | null;
    if (aliceNext) expect((await asCookie(aliceNext.replace(/^https?:\/\/[^/]+/, ''), bob)).status).toBe(400);
    expect((await asCookie('/portal/v1/rewards/', bob)).body.results.map((r: { id: string }) => r.id)).toEqual([ids.reward]);
    expect((await asCookie('/portal/v1/rewards/?page_size=100', alice)).body.results.map((r: { id: string }) => r.id)).not.toContain(
      ids.reward,
    );
    // Bob's sub-id (a link of his) cuts only his own chart; in Alice's session the same sub is hers: empty.
    expect(
      (await api('POST', '/portal/v1/links/', { headers: { cookie: bob, origin: API_ORIGIN }, body: { slug: 'bobs-video' } })).status,
    ).toBe(201);
    const aliceSub = await asCookie('/portal/v1/stats/?sub=bobs-video', alice);
    expect(aliceSub.status).toBe(200);
    for (const b of aliceSub.body.buckets) expect(b).toMatchObject({ link_clicks: 0, referrals: 0, conversions: 0 });
    const aliceLinks = await asCookie('/portal/v1/links/', alice);
    expect(aliceLinks.body.results.map((l: { slug: string }) => l.slug)).not.toContain('bobs-video');
    // A write without this site's Origin: 403, nothing changes.
    const before = (await call(A, 'GET', `/v1/members/${ids.member}/`)).body;
    for (const origin of [null, 'https://evil.example']) {
      const res = await api('PATCH', '/portal/v1/me/', {
        headers: { cookie: alice, ...(origin ? { origin } : {}) },
        body: { payout_email: 'mallory@pay.example.com' },
      });
      expect({ origin, status: res.status }).toEqual({ origin, status: 403 });
    }
    expect((await call(A, 'GET', `/v1/members/${ids.member}/`)).body).toEqual(before);
  });

  it('tax details: each member sees only their own, masked; the export is for owner and finance sessions only', async () => {
    const alice = await cookieOf(ids.member);
    const bob = await cookieOf(ids.otherMember);
    const body = { legal_name: 'Alice Example', country: 'US', address: '9 Elm Street', us: { tin: '900-12-3456', w9_certified: true } };
    expect((await api('PUT', '/portal/v1/tax-details/', { headers: { cookie: alice, origin: API_ORIGIN }, body })).status).toBe(200);
    const mine = await api('GET', '/portal/v1/tax-details/', { headers: { cookie: alice } });
    expect(mine.body).toMatchObject({ provided: true, tin: '•••••3456' });
    expect(mine.text).not.toContain('900123456');
    expect((await api('GET', '/portal/v1/tax-details/', { headers: { cookie: bob } })).body.provided).toBe(false);
    const adminA = await loginAs(A.accountId, 'admin');
    sessionTokens.push(adminA.token);
    for (const headers of [{ authorization: `Bearer ${A.key}` }, adminA.headers, { cookie: alice }]) {
      const res = await api('GET', '/v1/exports/tax-details.csv/', { headers });
      expect(res.status).toBeGreaterThanOrEqual(401);
      expect(res.text).not.toContain('900123456');
    }
    const owner = await api('GET', '/v1/exports/tax-details.csv/', { headers: ownerA.headers });
    expect(owner.status).toBe(200);
    expect(owner.text).toContain('900123456');
    const other = await api('GET', '/v1/exports/tax-details.csv/', { headers: ownerB.headers });
    expect(other.text).not.toContain('900123456');
  });
});

describe('secrets at rest and in logs', () => {
  const scanner = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: process.env.DYNAMODB_ENDPOINT,
      region: process.env.AWS_REGION || 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  afterAll(() => scanner.destroy());

  async function scanAll(): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await scanner.send(
        new ScanCommand({ TableName: process.env.TABLE_NAME, ...(start ? { ExclusiveStartKey: start } : {}) }),
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** The plaintext forms of a key that must never be stored: the whole key and its random part. */
  const forms = (key: string) => [key, key.slice('rfl_live_'.length)];

  /** Accounts connected through the dashboard's provider form to Stripe, Paddle Billing and Chargebee, with their secrets. */
  const connected: { kind: 'stripe' | 'paddle-billing' | 'chargebee'; accountId: string; apiSecret: string; webhookSecret: string }[] = [];
  const providerSecrets = () => [A.authCode, B.authCode, ...connected.flatMap((c) => [c.apiSecret, c.webhookSecret])];

  beforeAll(async () => {
    const random = () => randomBytes(12).toString('hex');
    for (const kind of ['stripe', 'paddle-billing', 'chargebee'] as const) {
      const { account } = await createAccount({ name: `security-${kind}-${suffix}`, plan: 'regular' });
      const owner = await loginAs(account.accountId, 'owner');
      sessionTokens.push(owner.token);
      const c =
        kind === 'stripe'
          ? { kind, accountId: account.accountId, apiSecret: `sk_live_SECRET${random()}`, webhookSecret: `whsec_SECRET${random()}` }
          : kind === 'paddle-billing'
            ? {
                kind,
                accountId: account.accountId,
                apiSecret: `pdl_live_apikey_SECRET${random()}`,
                webhookSecret: `pdl_ntfset_SECRET${random()}`,
              }
            : // Chargebee's webhook secret is the Basic-auth password (stored as the pair `refloop:<password>`).
              { kind, accountId: account.accountId, apiSecret: `live_SECRET${random()}`, webhookSecret: `SECRET${random()}` };
      const body =
        kind === 'stripe'
          ? { kind, secret_key: c.apiSecret, webhook_secret: c.webhookSecret, api_url: 'http://127.0.0.1:9' }
          : kind === 'paddle-billing'
            ? { kind, api_key: c.apiSecret, webhook_secret: c.webhookSecret, api_url: 'http://127.0.0.1:9' }
            : { kind, site: 'security-test', api_key: c.apiSecret, webhook_password: c.webhookSecret, api_url: 'http://127.0.0.1:9' };
      await ok(api('POST', '/v1/account/provider/', { headers: owner.headers, body }));
      connected.push(c);
    }
  });

  it('no stored item holds a plaintext API key', async () => {
    // Let the workers finish, so their writes are in the scan too.
    await pollUntil(async () => (await queues.count('provider-events')) === 0 && (await queues.count('rewards')) === 0, {
      timeoutMs: 15_000,
    });
    const items = await scanAll();
    const mine = items.filter((i) => String(i.pk).startsWith(`A#${A.accountId}`) || String(i.pk).startsWith(`A#${B.accountId}`));
    expect(mine.length).toBeGreaterThan(40);
    expect(apiKeys.length).toBeGreaterThanOrEqual(4);
    // The key items exist, under their hashes (two first keys, one from the CLI, one from the dashboard).
    expect(items.filter((i) => i.type === 'ApiKey' && (i.account_id === A.accountId || i.account_id === B.accountId))).toHaveLength(4);
    // The dashboard's key: its record shows a prefix too short to use, and the lookup item its digest only.
    const record = items.find((i) => i.type === 'ApiKeyRecord' && i.sk === ids.apiKeyRecord);
    expect(record).toMatchObject({ prefix: expect.stringMatching(/^rfl_live_.{4}…$/), key_hash: expect.any(String) });

    for (const item of items) {
      const text = JSON.stringify(item);
      for (const key of apiKeys) {
        for (const form of forms(key)) {
          if (text.includes(form)) throw new Error(`item ${String(item.pk)} / ${String(item.sk)} holds a plaintext API key`);
        }
      }
    }
  });

  it('no stored item holds a provider secret, not even its own secret item: those hold local:v1: values that decrypt only for their account', async () => {
    const items = await scanAll();
    expect(providerSecrets()).toHaveLength(8);
    for (const item of items) {
      const text = JSON.stringify(item);
      for (const secret of providerSecrets()) {
        if (text.includes(secret)) throw new Error(`item ${String(item.pk)} / ${String(item.sk)} holds a plaintext provider secret`);
      }
    }
    const itemAt = (pk: string) => {
      const found = items.filter((i) => i.pk === pk);
      expect(found).toHaveLength(1);
      return found[0] as Record<string, unknown>;
    };
    const encrypted = expect.stringMatching(/^local:v1:[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    // Paddle Classic: the auth code in PROVIDER_SECRET; no webhook secret item.
    for (const t of [A, B]) {
      const item = itemAt(`A#${t.accountId}#PROVIDER_SECRET`);
      expect(item).toMatchObject({ type: 'ProviderSecret', auth_code: encrypted });
      expect(await decryptSecret(t.accountId, String(item.auth_code))).toBe(t.authCode);
      expect(items.some((i) => i.pk === `A#${t.accountId}#PROVIDER_WEBHOOK_SECRET`)).toBe(false);
    }
    // Stripe, Paddle Billing and Chargebee: the API secret in PROVIDER_SECRET, the webhook secret (Chargebee's
    // Basic-auth pair) in PROVIDER_WEBHOOK_SECRET.
    for (const c of connected) {
      const secretItem = itemAt(`A#${c.accountId}#PROVIDER_SECRET`);
      const webhookItem = itemAt(`A#${c.accountId}#PROVIDER_WEBHOOK_SECRET`);
      const field = c.kind === 'stripe' ? 'secret_key' : 'api_key';
      expect(secretItem).toMatchObject({ type: 'ProviderSecret', [field]: encrypted });
      expect(webhookItem).toMatchObject({ type: 'ProviderSecret', webhook_secret: encrypted });
      expect(await decryptSecret(c.accountId, String(secretItem[field]))).toBe(c.apiSecret);
      expect(await decryptSecret(c.accountId, String(webhookItem.webhook_secret))).toBe(
        c.kind === 'chargebee' ? `refloop:${c.webhookSecret}` : c.webhookSecret,
      );
      // Bound to its account: another account's id does not decrypt it.
      await expect(decryptSecret(A.accountId, String(secretItem[field]))).rejects.toThrow();
    }
  });

  it("no stored item holds a session token or a login token: only their SHA-256 digests, in the items' keys", async () => {
    const items = await scanAll();
    expect(portalTokens.length).toBeGreaterThanOrEqual(4);
    for (const item of items) {
      const text = JSON.stringify(item);
      for (const token of portalTokens)
        if (text.includes(token)) throw new Error(`item ${String(item.pk)} / ${String(item.sk)} holds a plaintext portal token`);
    }
    expect(sessionTokens.length).toBeGreaterThanOrEqual(3);
    expect(loginTokens.length).toBeGreaterThanOrEqual(2);
    for (const item of items) {
      const text = JSON.stringify(item);
      for (const token of [...sessionTokens, ...loginTokens]) {
        if (text.includes(token)) throw new Error(`item ${String(item.pk)} / ${String(item.sk)} holds a plaintext session or login token`);
      }
    }
    // The live sessions and the unused link are there, keyed by digest; the used link is gone.
    const keysOf = new Set(items.map((i) => `${String(i.pk)}|${String(i.sk)}`));
    for (const token of sessionTokens) expect(keysOf.has(`${teamKeys.session(tokenHash(token)).pk}|SESSION`)).toBe(true);
    expect(keysOf.has(`${teamKeys.login(tokenHash(unusedLoginToken)).pk}|LOGIN`)).toBe(true);
    expect(keysOf.has(`${teamKeys.login(tokenHash(loginTokens[0]!)).pk}|LOGIN`)).toBe(false);
  });

  it('no stored item holds a webhook signing secret, not even its WEBHOOK_SECRET item (local:v1:), and no answer after the create shows them', async () => {
    const items = await scanAll();
    expect(webhookSecrets).toHaveLength(2);
    for (const secret of webhookSecrets) {
      const holders = items.filter((i) => JSON.stringify(i).includes(secret)).map((i) => `${String(i.pk)}|${String(i.sk)}`);
      expect(holders).toEqual([]);
    }
    const secretItems = items.filter((i) => i.pk === `A#${A.accountId}#WEBHOOK_SECRET`);
    expect(secretItems.map((i) => i.sk).sort()).toEqual([ids.webhookEndpoint, ids.otherWebhookEndpoint].sort());
    for (const item of secretItems) {
      expect(item).toMatchObject({ type: 'WebhookSecret', secret: expect.stringMatching(/^local:v1:/) });
      expect(await decryptSecret(A.accountId, String(item.secret))).toBe(webhookSecrets[item.sk === ids.webhookEndpoint ? 0 : 1]);
    }
    const answers = [
      await call(A, 'GET', '/v1/webhook-endpoints/?page_size=100'),
      await call(A, 'GET', `/v1/webhook-endpoints/${ids.webhookEndpoint}/`),
    ];
    for (const res of answers) for (const secret of webhookSecrets) expect(res.text.includes(secret)).toBe(false);
  });

  it('no log line holds an API key, a provider secret, a webhook signing secret, a session token or a login token', () => {
    // The flow above did log: worker lines, the failed credit application during the outage.
    expect(logLines.length).toBeGreaterThan(10);
    expect(logLines.some((l) => l.includes('record failed'))).toBe(true);
    const secrets = [
      ...apiKeys.flatMap(forms),
      ...providerSecrets(),
      ...webhookSecrets,
      ...sessionTokens,
      ...loginTokens,
      ...portalTokens,
      ...basicHeaders,
      ...basicHeaders.map((h) => h.replace(/^Basic /, '')),
    ];
    expect(providerSecrets()).toHaveLength(8);
    expect(basicHeaders.length).toBeGreaterThanOrEqual(4);
    const leaks = logLines.filter((line) => secrets.some((s) => line.includes(s)));
    expect(leaks).toEqual([]);
  });
});
