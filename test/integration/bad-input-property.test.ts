// Bad input, generated (issue 4, item 4). Thousands of fast-check requests over every route of
// functions/routes.ts - wrong types, missing and extra fields, huge strings, unicode (lone surrogates,
// NUL), invalid JSON, invalid UTF-8, wrong content types, bad cursors and filters, odd paths and
// methods, bad credentials, forged webhook alerts - sent through the in-process gateway. For every
// answer: never a 5xx; X-Request-Id; a JSON body (but 204); every 4xx body in the contract's shape
// (`{"detail": "..."}` or `{"<field>": ["...", ...]}`); and the statuses the contract fixes where the
// request alone decides them (401, 413, 415, the webhook's 403/404, and for the dashboard: 403 for an API
// key on a session-only route, for a session's write without this site's Origin and for a viewer's write).
// The dashboard's login routes and sessions (cookies, origins) are generated too. The data must not change
// under rejected requests: the two accounts' items are read (uninstrumented Scan) before and after each batch.
//
// http.test.ts holds the hand-written cases of the same rules; this file only generates.
import { readFileSync } from 'node:fs';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { findRoute, routes, type Route } from '../../functions/routes';
import { saveRailConnection } from '../../shared/store/rail-connections';
import { MAX_RAIL_WEBHOOK_BYTES } from '../../shared/rails/intake';
import { saveProviderSettings } from '../../shared/store/provider';
import { CROSS_SITE_REFUSED, PERMISSION_DENIED, SESSION_ONLY } from '../../shared/domain/team';
import { addTeamMember, listApiKeyRecords } from '../../shared/store/team';
import { createPortalLink, openPortalSession } from '../../shared/store/portal';
import { DEFAULT_FRAUD_SETTINGS, FRAUD_RULES, type FraudSettings } from '../../shared/domain/fraud';
import { recordFinding } from '../../shared/flows/fraud-flags';
import { api, type ApiResponse } from '../support/api';
import { API_ORIGIN, freshEmail, loginAs, type DashboardLogin } from '../support/dashboard';
import { closeVerificationClient, verificationClient } from '../support/dynamo-calls';
import { newAccount } from '../support/fixtures';
import { PROVIDER_DEFINITIONS } from '../../shared/billing/registry';
import { startTestQueues, type TestQueues } from '../support/queues';
import { useOwnTable } from '../support/own-table';

// This file Scans the table to check what requests wrote: a table of its own keeps those Scans small.
beforeAll(useOwnTable);

const MAX_BODY = 64 * 1024;
const BATCH = 25;
const RUNS = 81; // RUNS * BATCH >= 2,000 requests
const PATCH_RUNS = 25;

// ---- fixtures -----------------------------------------------------------------------------------

interface Fixture {
  accountId: string;
  key: string;
  publishableKey: string;
  campaigns: string[];
  /** The account's and its campaigns' slugs (the public join page's address; the campaigns are closed to applications). */
  slug: string;
  campaignSlugs: string[];
  members: { id: string; code: string; identifier: string; email: string }[];
  referrals: { id: string; user: string }[];
  cursors: string[];
  /** A team member (a viewer: never the owner, whose session the requests use) and the account's key records. */
  teamMember: string;
  keyRecords: string[];
  /** Open fraud flags (docs/fraud.md): one on a referral, one on a member, recorded as the FraudScreen worker does. */
  flags: string[];
}

/** The account the requests are sent to (no provider settings: a conversion can never reach a provider). */
let A: Fixture;
/** Another account: its ids are used with A's key (cross-tenant), its webhook has a public key. */
let B: Fixture;

async function must(res: Promise<ApiResponse>, status: number): Promise<ApiResponse> {
  const r = await res;
  if (r.status !== status) throw new Error(`fixture request answered ${r.status}: ${r.text}`);
  return r;
}

async function fixture(tag: string): Promise<Fixture> {
  const { accountId, apiKey: key, publishableKey } = await newAccount('small');
  const campaigns: string[] = [];
  const campaignSlugs: string[] = [];
  for (const name of [`${tag} one`, `${tag} two`]) {
    const created = (await must(api('POST', '/v1/campaigns/', { key, body: { name, allows_credit: true, credit_amount: '5.00' } }), 201))
      .body;
    campaigns.push(created.id);
    campaignSlugs.push(created.slug);
  }
  const slug = (await must(api('GET', '/v1/account/', { key }), 200)).body.slug;
  const members: Fixture['members'] = [];
  for (const [i, campaign] of [campaigns[0], null, campaigns[1]].entries()) {
    const body = {
      identifier: `${tag}-member-${i}`,
      email: `${tag}-${i}@example.com`,
      ...(campaign ? { campaign: { id: campaign } } : {}),
    };
    const m = (await must(api('POST', '/v1/members/', { key, body }), 201)).body;
    members.push({ id: m.id, code: m.code, identifier: m.identifier, email: m.email });
  }
  const referrals: Fixture['referrals'] = [];
  for (const [i, member] of [members[0], members[1], members[0]].entries()) {
    const user = `${tag}-user-${i}`;
    const r = (await must(api('POST', '/v1/referrals/', { key, body: { user_identifier: user, member_code: member?.code } }), 200)).body;
    referrals.push({ id: r.id, user });
  }
  const cursors: string[] = [];
  for (const list of [
    '/v1/referrals/',
    '/v1/members/',
    '/v1/campaigns/',
    `/v1/referrals/?member=${members[0]?.id}`,
    `/v1/members/?campaign=${campaigns[0]}`,
  ]) {
    const page = (await must(api('GET', `${list}${list.includes('?') ? '&' : '?'}page_size=1`, { key }), 200)).body;
    for (const link of [page.next, page.previous]) {
      if (typeof link === 'string') cursors.push(new URL(link).searchParams.get('cursor') ?? '');
    }
  }
  const teamMember = (await addTeamMember(accountId, freshEmail(`${tag}-viewer`), 'viewer')).id;
  const keyRecords = (await listApiKeyRecords(accountId)).map((r) => r.id);
  const flagOnly = Object.fromEntries(
    FRAUD_RULES.map((rule) => [rule, { ...DEFAULT_FRAUD_SETTINGS[rule], action: 'flag' }]),
  ) as unknown as FraudSettings;
  const flags: string[] = [];
  for (const finding of [
    {
      rule: 'duplicate_ip' as const,
      subject: { type: 'referral' as const, id: referrals[0]!.id },
      member_id: members[0]!.id,
      detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
      evidence: { referral_ids: [referrals[0]!.id] },
      dedupe_key: `duplicate_ip#referral#${referrals[0]!.id}`,
    },
    {
      rule: 'click_spam' as const,
      subject: { type: 'member' as const, id: members[1]!.id },
      member_id: members[1]!.id,
      detail: '1,200 clicks and 1 conversion in 7 days.',
      evidence: { figures: { clicks: 1200, conversions: 1 } },
      dedupe_key: `click_spam#member#${members[1]!.id}#2026-01-01`,
    },
  ]) {
    const flag = await recordFinding(accountId, finding, flagOnly);
    if (!flag) throw new Error('fixture flag not recorded');
    flags.push(flag.id);
  }
  const flagPage = (await must(api('GET', '/v1/fraud-flags/?page_size=1', { key }), 200)).body;
  if (typeof flagPage.next === 'string') cursors.push(new URL(flagPage.next).searchParams.get('cursor') ?? '');
  return { accountId, key, publishableKey, campaigns, slug, campaignSlugs, members, referrals, cursors, teamMember, keyRecords, flags };
}

/** A's dashboard sessions: its owner's (the session requests) and a viewer's; and another account's, which the login requests may log out. */
let owner: DashboardLogin;
let viewer: DashboardLogin;
let leaving: DashboardLogin;
/** A portal session of A's first member (the portal requests). */
let portalToken: string;
/** Login links and invitations are queued (member-emails): a local SQS takes them (no worker runs). */
let queues: TestQueues;

const signedAlerts = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'paddle', 'signed-alerts.json'), 'utf8')) as {
  public_key: string;
  alerts: Record<string, { verifies: boolean; fields: Record<string, string> }>;
};

beforeAll(async () => {
  queues = await startTestQueues();
  [A, B] = await Promise.all([fixture('a'), fixture('b')]);
  owner = await loginAs(A.accountId, 'owner');
  viewer = await loginAs(A.accountId, 'viewer');
  // Of a third account: its logout changes nothing of A's or B's.
  leaving = await loginAs((await newAccount('starter')).accountId, 'finance');
  portalToken = (await openPortalSession((await createPortalLink(A.accountId, A.members[0]!.id, null)).token)).token;
  // B's webhook verifies alerts; its provider URLs are a closed port (never called: nothing here verifies).
  await saveProviderSettings(B.accountId, {
    vendorId: 1,
    authCode: 'not-a-real-auth-code',
    publicKey: signedAlerts.public_key,
    vendorsApiUrl: 'http://127.0.0.1:9/api',
    checkoutApiUrl: 'http://127.0.0.1:9/api',
  });
  // B is connected to every payout rail (secrets and keys of its own; the URLs a closed port): a forged
  // delivery to B's rail intakes is checked and refused; A has no rail, so its intakes answer 404.
  const wiseKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
  await saveRailConnection(B.accountId, 'paypal', {
    apiUrl: 'http://127.0.0.1:9',
    credentials: { client_id: 'fuzz-client', client_secret: 'fuzz-secret', webhook_id: 'WH-FUZZ' },
  });
  await saveRailConnection(B.accountId, 'stripe', {
    apiUrl: 'http://127.0.0.1:9',
    credentials: { secret_key: 'sk_test_fuzz00000000', webhook_secret: 'whsec_fuzzplatform', connect_webhook_secret: 'whsec_fuzzconnect' },
  });
  await saveRailConnection(B.accountId, 'wise', {
    apiUrl: 'http://127.0.0.1:9',
    credentials: { api_token: 'fuzz-token', profile_id: '1', webhook_public_key: wiseKey },
  });
}, 60_000);

afterAll(async () => {
  closeVerificationClient();
  await queues?.stop();
});

// ---- snapshots (uninstrumented Scan, test-only) ----------------------------------------------------

/** The items of each account (pk `A#<acct>...`) as sorted canonical JSON, read in one Scan. */
async function snapshot(accountIds: string[]): Promise<string[][]> {
  const out: string[][] = accountIds.map(() => []);
  const names = accountIds.map((_, i) => `:a${i}`);
  let start: Record<string, unknown> | undefined;
  do {
    const page = await verificationClient().send(
      new ScanCommand({
        TableName: process.env.TABLE_NAME,
        FilterExpression: names.map((n) => `begins_with(pk, ${n})`).join(' OR '),
        ExpressionAttributeValues: Object.fromEntries(accountIds.map((id, i) => [names[i], `A#${id}`])),
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      // Rate-limit windows count requests (refused ones too, by design); they are bookkeeping, not data.
      if (item.type === 'RateWindow') continue;
      const owner = accountIds.findIndex((id) => String(item.pk).startsWith(`A#${id}`));
      out[owner]?.push(canonical(item));
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out.map((items) => items.sort());
}

/** The raw items of one account. */
async function rawItems(accountId: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await verificationClient().send(
      new ScanCommand({
        TableName: process.env.TABLE_NAME,
        FilterExpression: 'begins_with(pk, :a)',
        ExpressionAttributeValues: { ':a': `A#${accountId}` },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** JSON with sorted keys (DynamoDB maps come back in any order). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value instanceof Set) return `set(${[...value].map(canonical).sort().join(',')})`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

// ---- generators ---------------------------------------------------------------------------------

/** Odd characters: lone surrogates, NUL, BOM, bidi override, noncharacters, an astral emoji, a combining mark. */
const oddChar = fc.constantFrom(
  '\ud800',
  '\udfff',
  '\u0000',
  '\ufeff',
  '\u202e',
  '\uffff',
  '\ufffe',
  '😀',
  'e\u0301',
  '\r\n',
  '\t',
  '"',
  '\\',
  '%',
  '/',
  '..',
  '#',
  '?',
  '&',
  '=',
  '+',
);
const unicodeText = fc
  .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), oddChar, fc.string({ unit: 'grapheme', maxLength: 6 })), { maxLength: 8 })
  .map((parts) => parts.join(''));
const hugeText = fc
  .record({ size: fc.integer({ min: 66_000, max: 120_000 }), ch: fc.constantFrom('x', 'é', '😀', '\u0000', ' ') })
  .map(({ size, ch }) => ch.repeat(Math.ceil(size / Buffer.byteLength(ch))));
const longText = fc
  .integer({ min: 90, max: 400 })
  .chain((n) => fc.constantFrom('a'.repeat(n), 'é'.repeat(n), '😀'.repeat(n), `${'a'.repeat(n)}@example.com`));
const oddScalar = fc.constantFrom<unknown>(
  null,
  true,
  false,
  0,
  -1,
  -0,
  1.5,
  0.001,
  1e21,
  -1e21,
  1e300,
  // biome-ignore lint/correctness/noPrecisionLoss: deliberately past Number.MAX_SAFE_INTEGER.
  9007199254740993,
  2 ** 53,
  123456789012,
  '',
  ' ',
  '\t\n',
  '0',
  '-0',
  '-1',
  '1e2',
  '1E400',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x10',
  '0b1',
  '1_000',
  '١٢٣',
  '１２',
  '12.345',
  '99999999.99',
  '100000000.00',
  '12345678901',
  '.5',
  '5.',
  '+5',
  ' 7 ',
  'true',
  'True',
  'yes',
  'null',
  'None',
  'USD',
  'usd',
  'XXX',
  'EURO',
  'a@b',
  'a@b.co',
  ' a@B.Co ',
  '@',
  'x'.repeat(101),
  'ABC-def_123',
  'bad code!',
  'trialing',
);
const objectLike = fc.constantFrom<unknown>(
  {},
  { id: null },
  { id: '' },
  { id: '   ' },
  { id: 5 },
  { id: -3 },
  { id: 1.5 },
  { id: true },
  { id: [] },
  { id: {} },
  { id: { toString: 1 } },
  { id: { valueOf: {}, toString: {} } },
  { toString: 1 },
  { valueOf: 'x' },
  [1, 2],
  [[[]]],
  [null],
  ['a'],
  { id: '0badc0de' },
  { id: 'ffffffff' },
  { id: '../../etc' },
  { id: '%00' },
  { id: '\u0000' },
  { id: '\ud800' },
);
/** Values that are valid somewhere (ids, codes), so some requests pass validation and reach the store. */
const meaningful = fc
  .constantFrom(0, 1, 2)
  .chain((i) =>
    fc.constantFrom<unknown>(
      A.campaigns[i % 2],
      { id: A.campaigns[i % 2] },
      { id: B.campaigns[i % 2] },
      A.members[i]?.code,
      B.members[i]?.code,
      A.members[i]?.identifier,
      A.members[i]?.email,
      A.referrals[i]?.user,
      B.referrals[i]?.user,
      A.members[i]?.id,
      A.referrals[i]?.id,
    ),
  );
/** A fraud rule's settings (or a preview's thresholds) with odd names and values. */
const fraudSetting = fc.dictionary(
  fc.constantFrom(
    'action',
    'max_referrals',
    'window_hours',
    'ratio',
    'min_clicks',
    'window_days',
    'max_percent',
    'multiple',
    'nope',
    '__proto__',
    'constructor',
    '',
  ),
  fc.oneof(
    fc.constantFrom<unknown>('off', 'flag', 'hold', 'HOLD', 'block', 0, 1, 3, 168, 169, 1001, -1, 1.5, 2 ** 53, '5', null, true, [], {}),
    oddScalar,
  ),
  { maxKeys: 4 },
);
/** Any generated value as query text: String() throws on an object whose toString is not a function ({"toString": 1}). */
const asText = (v: unknown): string => {
  try {
    return String(v);
  } catch {
    return JSON.stringify(v) ?? 'null';
  }
};

const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: oddScalar, weight: 6 },
  { arbitrary: fraudSetting, weight: 1 },
  { arbitrary: objectLike, weight: 3 },
  { arbitrary: unicodeText, weight: 4 },
  { arbitrary: longText, weight: 2 },
  { arbitrary: meaningful, weight: 3 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 3 },
  { arbitrary: fc.double(), weight: 1 },
);

const FIELDS: Record<string, string[]> = {
  CreateCampaign: [
    'name',
    'allows_credit',
    'credit_amount',
    'credit_currency',
    'allows_commission',
    'commission_amount',
    'commission_currency',
    'commission_months',
    'reward_threshold',
    'referred_discount_type',
    'referred_discount_amount',
    'referred_discount_recurring',
    'commission_type',
    'commission_percent',
    'hold_days',
    'approval',
    'min_payout',
    'id',
    'created_at',
  ],
  CreateMember: [
    'identifier',
    'email',
    'first_name',
    'last_name',
    'code',
    'campaign',
    'subscription',
    'email_opt_out',
    'payout_email',
    'payout_method',
    'id',
    'stats',
  ],
  CreateReferral: ['user_identifier', 'member_code', 'id', 'source'],
  ConvertReferral: ['checkout_id', 'subscription_id'],
  CreateWebhookEndpoint: ['url', 'events', 'enabled', 'description', 'id', 'secret'],
};
FIELDS.RecordClick = ['code', 'visitor_id'];
FIELDS.CreateJsReferral = ['user_identifier', 'member_code', 'id', 'source'];
FIELDS.UpdateWebhookEndpoint = FIELDS.CreateWebhookEndpoint as string[];
FIELDS.UpdateCampaign = FIELDS.CreateCampaign as string[];
FIELDS.UpdateMember = FIELDS.CreateMember as string[];
FIELDS.ConvertReferralV1 = FIELDS.ConvertReferral as string[];
// The money routes (docs/design/money.md).
FIELDS.VoidReward = ['reason', 'status'];
FIELDS.ApproveReward = ['status', 'reason'];
FIELDS.CreatePayoutBatch = ['format', 'currency', 'payout_ids', 'id'];
FIELDS.MarkPayoutPaid = ['paid_at', 'reference', 'status'];
FIELDS.MarkPayoutBatchPaid = FIELDS.MarkPayoutPaid;
FIELDS.MarkPayoutFailed = ['reason', 'status'];
FIELDS.CancelPayout = FIELDS.MarkPayoutFailed;
// The dashboard (docs/dashboard.md).
FIELDS.CreateLoginLink = ['email', 'token', 'account_id'];
FIELDS.CreateSession = ['token', 'email'];
FIELDS.InviteTeamMember = ['email', 'role', 'id'];
FIELDS.UpdateTeamMember = ['role', 'email'];
FIELDS.CreateApiKey = ['name', 'key', 'prefix'];
FIELDS.UpdateAccount = ['name', 'email_sender', 'embed_origins', 'js_referrals', 'plan', 'publishable_key', 'provider'];
// The member portal: its only write, and the opening of a link.
FIELDS.UpdatePortalMe = ['payout_email', 'payout_method', 'email_opt_out', 'email', 'code', 'commission_paid'];
FIELDS.OpenPortalSession = ['token'];
FIELDS.CreatePortalSession = ['return_url'];
// The public application form (its campaigns are closed here: a valid body is a silent 202) and the decisions.
FIELDS.SubmitApplication = ['email', 'name', 'country', 'payout_email', 'answers', 'accepted_terms', 'id', 'status'];
FIELDS.RejectApplication = ['reason', 'status'];
// Fraud rules (docs/fraud.md): the rules' PATCH (each rule an object of its action and thresholds), the
// preview, a flag's resolution and a reward's release.
FIELDS.UpdateFraudRules = [...FRAUD_RULES, 'action', 'max_referrals', 'id'];
FIELDS.PreviewFraudRule = ['rule', 'action', 'thresholds'];
FIELDS.ReleaseFraudFlag = ['note', 'status'];
FIELDS.VoidFraudFlag = FIELDS.ReleaseFraudFlag;
FIELDS.ReviewFraudFlag = FIELDS.ReleaseFraudFlag;
FIELDS.ReleaseReward = ['status', 'reason'];
// Every provider's form fields (shared/billing/registry.ts), besides the common kind and api_url.
FIELDS.SetProviderConnection = ['kind', 'api_url', ...new Set(PROVIDER_DEFINITIONS.flatMap((d) => d.fields.map((f) => f.name)))];
const fieldsOf = (route: Route) => FIELDS[route.name] ?? ['name', 'id', 'user_identifier', 'identifier'];

/** A JSON object built from the route's fields (any subset, each with an odd value) plus unknown keys. */
function objectBody(route: Route): fc.Arbitrary<Record<string, unknown>> {
  const known = fieldsOf(route);
  return fc
    .tuple(
      fc.subarray(known),
      fc.array(weirdValue, { minLength: known.length, maxLength: known.length }),
      fc.dictionary(
        fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '')),
        weirdValue,
        { maxKeys: 3 },
      ),
    )
    .map(([keys, values, extra]) => {
      const body: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(extra))
        Object.defineProperty(body, k, { value: v, enumerable: true, writable: true, configurable: true });
      keys.forEach((k, i) => {
        body[k] = values[i];
      });
      return body;
    });
}

const INVALID_JSON = [
  '{',
  '}',
  '{"a":1,}',
  "{'a': 1}",
  '{"a":1}{"b":2}',
  '{"a" 1}',
  'NaN',
  'undefined',
  '\ufeff{}',
  '{"a":"\\x41"}',
  '{"a":"\\ud800"}',
  '{"a":01}',
  '{"a":.5}',
  '{"a":+1}',
  '{"a":1e}',
  '"unterminated',
  '{"a":"line\nbreak"}',
  '//c\n{}',
  '[1,2',
  'tru',
  'nul',
  '{"__proto__":{"name":"x"},"name":{"toString":1}}',
  '{"name":"a","name":{"toString":1}}',
];

type RawBody = { kind: string; body: string | Buffer };

function bodyArb(route: Route): fc.Arbitrary<RawBody> {
  const json =
    (kind: string) =>
    (v: unknown): RawBody => ({ kind, body: JSON.stringify(v) ?? 'null' });
  return fc.oneof(
    { arbitrary: objectBody(route).map(json('object')), weight: 12 },
    { arbitrary: fc.jsonValue({ maxDepth: 4 }).map(json('json value')), weight: 3 },
    { arbitrary: fc.constantFrom(...INVALID_JSON).map((body): RawBody => ({ kind: 'invalid json', body })), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map((body): RawBody => ({ kind: 'text', body })), weight: 2 },
    {
      // A valid object cut short.
      arbitrary: fc.tuple(objectBody(route), fc.nat()).map(([v, n]): RawBody => {
        const text = JSON.stringify(v);
        return { kind: 'truncated json', body: text.slice(0, text.length === 0 ? 0 : n % text.length) };
      }),
      weight: 2,
    },
    {
      // Bytes that are not UTF-8 (the gateway hands them over base64-encoded), CESU surrogates included.
      arbitrary: fc
        .tuple(
          fc.uint8Array({ minLength: 1, maxLength: 40 }),
          fc.constantFrom(Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xff, 0xfe]), Buffer.from([0xc3])),
        )
        .map(
          ([bytes, bad]): RawBody => ({
            kind: 'binary',
            body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), bad, Buffer.from('"}')]),
          }),
        ),
      weight: 1,
    },
    {
      // Over 64 KiB: a huge field value.
      arbitrary: fc
        .tuple(fc.constantFrom(...fieldsOf(route)), hugeText)
        .map(([field, text]): RawBody => ({ kind: 'huge', body: JSON.stringify({ [field]: text }) })),
      weight: 2,
    },
    {
      // Deep nesting inside a field (String() of it used to overflow the stack).
      arbitrary: fc
        .tuple(
          fc.constantFrom(...fieldsOf(route), 'campaign', 'subscription'),
          fc.integer({ min: 100, max: 30_000 }),
          fc.boolean(),
          fc.constantFrom('[', '{"id":'),
        )
        .map(([field, depth, asId, open]): RawBody => {
          const close = open === '[' ? ']' : '}';
          const deep = `${open.repeat(depth)}${open === '[' ? '' : '1'}${close.repeat(depth)}`;
          return { kind: 'deep', body: `{"${field}":${asId ? `{"id":${deep}}` : deep}}` };
        }),
      weight: 1,
    },
    { arbitrary: fc.constant<RawBody>({ kind: 'empty', body: '' }), weight: 1 },
  );
}

const JSON_TYPE = 'application/json';
const contentType = fc.oneof(
  { arbitrary: fc.constant<string | undefined>(JSON_TYPE), weight: 10 },
  {
    arbitrary: fc.constantFrom<string | undefined>(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'application/json;',
      ' application/json ',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'text/json',
      'application/jsonx',
      'json',
      '',
      ' ',
      '*/*',
      'application/xml',
      'application/json, text/plain',
      undefined,
    ),
    weight: 4,
  },
  { arbitrary: unicodeText.map((t): string | undefined => t), weight: 1 },
);

/** Whether parseJsonBody accepts the media type. */
function isJsonType(type: string | undefined): boolean {
  const media = (type ?? '').trim().split(';')[0]?.trim().toLowerCase() ?? '';
  return media === JSON_TYPE || /^application\/[a-z0-9.+-]*\+json$/.test(media);
}

type Auth = { header: string | undefined; valid: boolean };
const authArb = (): fc.Arbitrary<Auth> =>
  fc.oneof(
    { arbitrary: fc.constant(null).map((): Auth => ({ header: `Bearer ${A.key}`, valid: true })), weight: 20 },
    {
      arbitrary: fc.constantFrom('bearer', 'Token', 'TOKEN', 'Bearer ').map((s): Auth => ({ header: `${s} ${A.key}`, valid: true })),
      weight: 1,
    },
    {
      arbitrary: fc
        .oneof(
          fc.constantFrom<string | undefined>(
            undefined,
            '',
            '   ',
            'Bearer',
            'Bearer ',
            'Basic dXNlcjpwYXNz',
            `Basic ${A.key}`,
            `Bearer ${A.key} extra`,
            `Bearer ${A.key}x`,
            `Bearer ${A.key.slice(0, -1)}`,
            `Bearer rfl_live_${'A'.repeat(43)}`,
            `Bearer ${A.key.toUpperCase()}`,
            `${A.key}`,
            `Bearer\u0000${A.key}`,
            'Bearer \ud800',
          ),
          unicodeText.map((t) => `Bearer ${t}`),
          fc.string({ unit: 'binary', maxLength: 80 }),
        )
        .map((header): Auth => ({ header, valid: false })),
      weight: 3,
    },
  );

/** A path segment standing for an id: a real one (of A or B), an unknown one of the right shape, or garbage. */
function idSegment(
  kind: 'campaign' | 'member' | 'referral' | 'user' | 'subscription' | 'account' | 'team' | 'apikey' | 'flag',
  ownIds: boolean,
): fc.Arbitrary<string> {
  // A's own key records are never generated: revoking the key the requests use is not bad input.
  const own: Record<typeof kind, string[]> = {
    campaign: A.campaigns,
    member: A.members.map((m) => m.id),
    referral: A.referrals.map((r) => r.id),
    user: A.referrals.map((r) => encodeURIComponent(r.user)),
    subscription: [],
    account: [B.accountId],
    team: [A.teamMember],
    apikey: [],
    flag: A.flags,
  };
  const foreign: Record<typeof kind, string[]> = {
    campaign: B.campaigns,
    member: B.members.map((m) => m.id),
    referral: B.referrals.map((r) => r.id),
    user: B.referrals.map((r) => encodeURIComponent(r.user)),
    subscription: ['1', '424242'],
    account: [A.accountId],
    team: [B.teamMember],
    apikey: B.keyRecords,
    // Another account's, and a flag id cut or changed in case.
    flag: [...B.flags, ...A.flags.map((f) => f.toUpperCase()), ...A.flags.map((f) => f.slice(3)), 'ff_', 'ff_0'],
  };
  const garbage = fc.oneof(
    fc.constantFrom(
      '..',
      '.',
      '%2F',
      '%2e%2e',
      '%00',
      '%',
      '%zz',
      '%ED%A0%80',
      '%F0%9F%98%80',
      '%C0%AF',
      '0',
      '-1',
      '00000000',
      'ffffffff',
      '0'.repeat(32),
      'f'.repeat(16),
      'A'.repeat(32),
      'null',
      'undefined',
      '__proto__',
      'constructor',
      '%20',
      '+',
      'a%2Fb',
      '9'.repeat(40),
      '1e3',
      '0x1f',
    ),
    fc.integer({ min: 1, max: 4000 }).map((n) => 'a'.repeat(n)),
    fc.stringMatching(/^[0-9a-f]{8}$|^[0-9a-f]{16}$|^[0-9a-f]{32}$/),
    unicodeText
      .filter((t) => t.length > 0)
      .map((t) => {
        try {
          return encodeURIComponent(t);
        } catch {
          return encodeURIComponent(t.replace(/[\ud800-\udfff]/g, '')) || 'x';
        }
      }),
  );
  const options: fc.Arbitrary<string>[] = [garbage];
  if (ownIds && own[kind].length > 0) options.push(fc.constantFrom(...own[kind]), fc.constantFrom(...own[kind]));
  if (foreign[kind].length > 0) options.push(fc.constantFrom(...foreign[kind]));
  return fc.oneof(...options);
}

function segmentKind(route: Route, param: string): Parameters<typeof idSegment>[0] {
  if (param === 'user_identifier') return 'user';
  if (param === 'account_id') return 'account';
  if (route.path.includes('/campaigns/')) return 'campaign';
  if (route.path.includes('/members/')) return 'member';
  if (route.path.includes('/subscriptions/')) return 'subscription';
  if (route.path.includes('/team/')) return 'team';
  if (route.path.includes('/api-keys/')) return 'apikey';
  if (route.path.includes('/fraud-flags/')) return 'flag';
  return 'referral';
}

function concretePath(route: Route): fc.Arbitrary<string> {
  const params = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  // A DELETE never gets one of A's real ids: the fixtures must stay (deleting is not bad input); nor does a
  // flag's resolution (its body is checked before the id is looked up, and a resolved flag is no bad input).
  const ownIds = route.method !== 'DELETE' && !route.path.startsWith('/v1/fraud-flags/{id}/');
  return fc.tuple(fc.tuple(...params.map((p) => idSegment(segmentKind(route, p), ownIds))), fc.boolean()).map(([values, slash]) => {
    let i = 0;
    const path = route.path.replace(/\{[^}]+\}/g, () => values[i++] as string);
    return slash ? path : path.replace(/\/$/, '');
  });
}

// ---- query strings ------------------------------------------------------------------------------

const scopeDigest = (scope: string) => createHash('sha256').update(scope).digest('base64url').slice(0, 12);
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v), 'utf8').toString('base64url');

function cursorArb(scopes: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...A.cursors, ...B.cursors),
    fc.constantFrom('', ' ', '=', 'null', 'e30', b64('[]'), b64('"x"'), b64('{"d":"n"}'), 'A'.repeat(601), '%', '%ZZ', '..', 'a+b/c=='),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.jsonValue({ maxDepth: 2 }).map(b64),
    // Well-formed cursors of the right scope (a client can compute them) with odd contents.
    fc
      .record({
        d: fc.constantFrom<unknown>('n', 'p', 'x', 1, null),
        k: fc.oneof(
          unicodeText,
          longText,
          fc.constantFrom<unknown>('', ' ', '\u0000', '\ud800', 'z'.repeat(300), '😀'.repeat(150), 'é'.repeat(300), 5, null, ['a'], {}),
        ),
        i: fc.constantFrom<unknown>(undefined, 1, 0, 'x'),
        s: fc.oneof(fc.constantFrom(...scopes.map(scopeDigest)), fc.constantFrom('', 'xxxxxxxxxxxx')),
      })
      .map(b64),
  );
}

const pageSizeArb = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1',
    '100',
    '101',
    '20.0',
    '1e2',
    ' 5 ',
    '5,5',
    'abc',
    '9'.repeat(400),
    '١٢',
    '１２',
    '0x10',
    '+5',
    '5 5',
    'NaN',
  ),
  fc.integer().map(String),
  unicodeText,
);

function listQuery(route: Route): fc.Arbitrary<string> {
  const acct = A.accountId;
  const filter: Record<string, [string, string[]] | undefined> = {
    ListReferrals: ['member', [`${acct}|referrals`, ...A.members.map((m) => `${acct}|referrals|${m.id}`)]],
    ListMembers: ['campaign', [`${acct}|members`, ...A.campaigns.map((c) => `${acct}|members|${c}`)]],
    ListCampaigns: undefined,
    ListSubscriptions: [
      'status',
      [`${acct}|subscriptions`, ...['active', 'trialling', 'past_due', 'deleted', 'paused'].map((st) => `${acct}|subscriptions|${st}`)],
    ],
    // The review queue: rule, status and member (the rule and member filters are generated below).
    ListFraudFlags: ['status', [`${acct}|fraud_flags|||`, `${acct}|fraud_flags||open|`, `${acct}|fraud_flags|duplicate_ip||`]],
  };
  const [filterName, scopes] = filter[route.name] ?? [undefined, [`${acct}|campaigns`]];
  const filterValue = fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'active',
      'trialing',
      'trialling',
      'ACTIVE',
      'past-due',
      'open',
      'OPEN',
      'released',
      'duplicate_ip',
      'duplicate-ip',
      '%00',
      'x'.repeat(2000),
      ...A.campaigns,
      ...B.campaigns,
      ...A.members.map((m) => m.id),
      ...B.members.map((m) => m.id),
    ),
    unicodeText,
    fc.stringMatching(/^[0-9a-f]{8}$|^[0-9a-f]{32}$/),
  );
  const enc = (s: string) => {
    try {
      return encodeURIComponent(s);
    } catch {
      return s; // a lone surrogate: sent raw
    }
  };
  const param = fc.oneof(
    pageSizeArb.map((v) => `page_size=${enc(v)}`),
    cursorArb(scopes ?? [`${acct}|campaigns`]).map((v) => `cursor=${enc(v)}`),
    cursorArb(scopes ?? [`${acct}|campaigns`]).map((v) => `cursor=${v}`), // unencoded: '+' and '/' change meaning
    ...(filterName ? [filterValue.map((v) => `${filterName}=${enc(v)}`)] : []),
    fc.constantFrom(
      '&',
      '&&',
      '=',
      '==',
      'a',
      'a=1',
      '%zz=%zz',
      '%E0%A4=1',
      'page_size',
      'cursor',
      'page_size=1&page_size=2',
      `${filterName ?? 'x'}=a&${filterName ?? 'x'}=b`,
      'toString=1',
      '__proto__=x',
      'constructor=1',
    ),
    fc.tuple(unicodeText, unicodeText).map(([k, v]) => `${enc(k)}=${enc(v)}`),
    ...(route.name === 'ListFraudFlags'
      ? [
          fc.tuple(fc.constantFrom('rule', 'member'), filterValue).map(([k, v]) => `${k}=${enc(v)}`),
          fc.constantFrom(...A.members.map((m) => `member=${m.id}`), 'rule=velocity', 'rule=VELOCITY', 'rule=', 'member=', 'rule=a&rule=b'),
        ]
      : []),
  );
  return fc.array(param, { minLength: 0, maxLength: 4 }).map((ps) => ps.join('&'));
}

// ---- requests -----------------------------------------------------------------------------------

interface Req {
  family: string;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body?: RawBody;
  auth: Auth;
  /** The status the contract fixes for this request, when the request alone decides it. */
  expect?: number;
  /** A 2xx of this request changes nothing (a click on a code that is no member's). */
  harmlessSuccess?: boolean;
  sourceIp?: string;
  /**
   * Sent with a session cookie and no Authorization header: its 401 (a session that has ended) carries no
   * `WWW-Authenticate: Bearer`, which the contract fixes for API-key failures only.
   */
  cookieOnly?: boolean;
}

const BODY_ROUTES = new Set([
  'CreateReferral',
  'ConvertReferral',
  'ConvertReferralV1',
  'CreateCampaign',
  'UpdateCampaign',
  'CreateMember',
  'UpdateMember',
  'CreateWebhookEndpoint',
  'UpdateWebhookEndpoint',
  'UpdateAccount',
  'InviteTeamMember',
  'UpdateTeamMember',
  'CreateApiKey',
  'SetProviderConnection',
  'UpdateFraudRules',
  'PreviewFraudRule',
]);
const LIST_ROUTES = new Set([
  'ListReferrals',
  'ListMembers',
  'ListCampaigns',
  'ListSubscriptions',
  'ListWebhookEndpoints',
  'ListWebhookDeliveries',
  'ListFraudFlags',
]);
const apiRoutes = routes.filter((r) => (r.auth ?? 'api-key') === 'api-key');

function headersWith(auth: Auth, type: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(auth.header !== undefined ? { authorization: auth.header } : {}),
    ...(type !== undefined ? { 'content-type': type } : {}),
    ...extra,
  };
}

const byteLength = (b: string | Buffer) => (typeof b === 'string' ? Buffer.byteLength(b, 'utf8') : b.length);

/** The status the body alone decides on a JSON-body route (after authentication), or undefined. */
function bodyStatus(body: RawBody | undefined, type: string | undefined): number | undefined {
  if (!body || byteLength(body.body) === 0) return undefined;
  if (byteLength(body.body) > MAX_BODY) return 413;
  if (!isJsonType(type)) return 415;
  return undefined;
}

function routeRequestOf(route: Route): fc.Arbitrary<Req> {
  return fc
    .record({
      path: concretePath(route),
      query: LIST_ROUTES.has(route.name)
        ? listQuery(route)
        : fc.oneof(fc.constant(''), fc.constantFrom('a=1', '%zz', 'page_size=0', 'cursor=x')),
      body:
        route.method === 'POST' || route.method === 'PATCH'
          ? bodyArb(route).map((b): RawBody | undefined => b)
          : fc.option(bodyArb(route), { nil: undefined, freq: 8 }),
      type: contentType,
      auth: authArb(),
      extra: fc.option(
        fc.constantFrom<Record<string, string>>(
          { 'content-encoding': 'gzip' },
          { 'x-forwarded-proto': 'javascript:' },
          { host: 'evil.example\u0000' },
          { 'content-length': '1' },
          { 'transfer-encoding': 'chunked' },
        ),
        { nil: undefined, freq: 6 },
      ),
    })
    .map(({ path, query, body, type, auth, extra }): Req => {
      const req: Req = {
        family: `route ${route.name}`,
        method: route.method,
        path,
        query,
        headers: headersWith(auth, type, extra ?? {}),
        auth,
        ...(body ? { body } : {}),
      };
      const match = findRoute(route.method, path);
      if (match && 'route' in match && (match.route.auth ?? 'api-key') === 'api-key') {
        if (!auth.valid) req.expect = 401;
        else if (BODY_ROUTES.has(match.route.name)) req.expect = bodyStatus(body, type);
      }
      return req;
    });
}

/** Any API-key route with its own method, generated path parameters, body, query and headers. */
const routeRequest = (): fc.Arbitrary<Req> => fc.oneof(...apiRoutes.map(routeRequestOf));

/** The public /js/v1/ endpoints: publishable key (or a secret or garbage key), generated bodies. */
const jsRoutes = routes.filter((r) => r.auth === 'publishable-key');
const jsAuthArb = (): fc.Arbitrary<Auth> =>
  fc.oneof(
    { arbitrary: fc.constant<Auth>({ header: `Bearer ${A.publishableKey}`, valid: true }), weight: 8 },
    {
      arbitrary: fc
        .oneof(
          fc.constantFrom<string | undefined>(
            undefined,
            '',
            'Bearer',
            `Bearer ${A.key}`,
            `Token ${B.key}`,
            `Bearer ${A.publishableKey}x`,
            `Bearer ${A.publishableKey} x`,
            `Basic ${A.publishableKey}`,
            `Bearer rfl_pub_${'A'.repeat(32)}`,
          ),
          unicodeText.map((t) => `Bearer ${t}`),
        )
        .map((header): Auth => ({ header, valid: false })),
      weight: 3,
    },
  );
const memberCodes = () => new Set([...A.members, ...B.members].map((m) => m.code.toLowerCase()));
function jsRequestOf(route: Route): fc.Arbitrary<Req> {
  return fc
    .record({
      body: bodyArb(route),
      type: contentType,
      auth: jsAuthArb(),
      slash: fc.boolean(),
      sourceIp: fc.constantFrom('203.0.113.9', '::1', '2001:db8::7'),
    })
    .map(({ body, type, auth, slash, sourceIp }): Req => {
      const path = slash ? route.path : route.path.replace(/\/$/, '');
      const req: Req = {
        family: `js ${route.name}`,
        method: route.method,
        path,
        query: '',
        headers: headersWith(auth, type),
        auth,
        body,
        sourceIp,
      };
      req.expect = auth.valid ? bodyStatus(body, type) : 401;
      if (route.name === 'RecordClick') {
        let code: unknown;
        try {
          code = (JSON.parse(typeof body.body === 'string' ? body.body : body.body.toString('utf8')) as { code?: unknown }).code;
        } catch {
          code = undefined;
        }
        // Only a string or a number can name a member's code (the field's rules); anything else counts nothing.
        const text = typeof code === 'string' || typeof code === 'number' ? String(code).trim().toLowerCase() : null;
        req.harmlessSuccess = text === null || !memberCodes().has(text);
      }
      return req;
    });
}
const jsRequest = (): fc.Arbitrary<Req> => fc.oneof(...jsRoutes.map(jsRequestOf));

// ---- the dashboard: sessions on the keyed routes, and the login routes ------------------------------

const sessionRoutes = routes.filter((r) => r.auth === 'session');
const keyedRoutes = [...apiRoutes, ...sessionRoutes];
const loginRoutes = routes.filter((r) => r.auth === 'login');
const UNSAFE = new Set(['POST', 'PATCH', 'DELETE']);

/** A cookie header: A's owner's or viewer's session, an unknown token, or garbage. */
type Who = 'owner' | 'viewer' | 'unknown' | 'garbage' | 'key' | 'none';
const cookieArb = (): fc.Arbitrary<{ who: Who; cookie?: string; authorization?: string }> =>
  fc.oneof(
    { arbitrary: fc.constant({ who: 'owner' as Who, cookie: `refloop_session=${owner.token}` }), weight: 3 },
    { arbitrary: fc.constant({ who: 'viewer' as Who, cookie: `refloop_session=${viewer.token}` }), weight: 3 },
    {
      arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((t) => ({ who: 'unknown' as Who, cookie: `refloop_session=${t}` })),
      weight: 1,
    },
    {
      arbitrary: fc
        .oneof(
          fc.constantFrom(
            'refloop_session=',
            'refloop_session',
            `refloop_session=${owner.token}x`,
            `refloop_session="${owner.token}"`,
            `Refloop_Session=${owner.token}`,
            `refloop_session=${owner.token.slice(1)}`,
            ';;;',
            '=',
            `refloop_session=${'A'.repeat(4000)}`,
          ),
          unicodeText.map((t) => `refloop_session=${t.replace(/[\r\n]/g, '')}`),
        )
        .map((cookie) => ({ who: 'garbage' as Who, cookie })),
      weight: 2,
    },
    // An API key on the session-only routes (403), with or without a cookie beside it.
    {
      arbitrary: fc.boolean().map((withCookie) => ({
        who: 'key' as Who,
        authorization: `Bearer ${A.key}`,
        ...(withCookie ? { cookie: `refloop_session=${owner.token}` } : {}),
      })),
      weight: 2,
    },
    { arbitrary: fc.constant({ who: 'none' as Who }), weight: 1 },
  );
const originArb = fc.oneof(
  { arbitrary: fc.constant<string | undefined>(API_ORIGIN), weight: 6 },
  {
    arbitrary: fc.constantFrom<string | undefined>(
      undefined,
      'null',
      'https://evil.example',
      'http://api.test',
      'https://api.test.evil.example',
      'https://API.TEST',
      `${API_ORIGIN}/`,
      '',
    ),
    weight: 3,
  },
  { arbitrary: unicodeText.map((t): string | undefined => t.replace(/[\r\n]/g, '')), weight: 1 },
);

/** The status the request alone decides on a keyed route with a session (or a key on a session-only route). */
function sessionStatus(
  route: Route,
  who: Who,
  origin: string | undefined,
  body: RawBody | undefined,
  type: string | undefined,
): number | undefined {
  const sessionOnly = route.auth === 'session';
  if (who === 'key') return sessionOnly ? 403 : undefined;
  if (who === 'none' || who === 'unknown' || who === 'garbage') return 401;
  // A session: the Origin first (unsafe methods), then the role, then the body.
  if (UNSAFE.has(route.method) && origin !== API_ORIGIN) return 403;
  if (who === 'viewer' && (UNSAFE.has(route.method) || sessionOnly)) return 403;
  if (BODY_ROUTES.has(route.name)) return bodyStatus(body, type);
  return undefined;
}

function sessionRequestOf(route: Route): fc.Arbitrary<Req> {
  return fc
    .record({
      path: concretePath(route),
      body:
        route.method === 'POST' || route.method === 'PATCH'
          ? bodyArb(route).map((b): RawBody | undefined => b)
          : fc.constant<RawBody | undefined>(undefined),
      type: contentType,
      who: cookieArb(),
      origin: originArb,
    })
    .map(({ path, body, type, who, origin }): Req => {
      const auth: Auth = { header: who.authorization, valid: who.who === 'key' || who.who === 'owner' || who.who === 'viewer' };
      const headers = headersWith(auth, type, {
        ...(who.cookie !== undefined ? { cookie: who.cookie } : {}),
        ...(origin !== undefined ? { origin } : {}),
      });
      const req: Req = {
        family: `session ${route.name}`,
        method: route.method,
        path,
        query: '',
        headers,
        auth,
        ...(body ? { body } : {}),
        cookieOnly: who.authorization === undefined && who.cookie !== undefined,
        // Disconnecting a payout rail the account never connected answers 204 and changes nothing.
        ...(route.name === 'DeletePayoutRail' ? { harmlessSuccess: true } : {}),
      };
      const match = findRoute(route.method, path);
      if (match && 'route' in match && match.route.name === route.name) {
        const status = sessionStatus(route, who.who, origin, body, type);
        if (status !== undefined) req.expect = status;
      }
      return req;
    });
}

/** Every API-key and session-only route with a session cookie (or a key, or garbage) and an Origin. */
const sessionRequest = (): fc.Arbitrary<Req> => fc.oneof(...keyedRoutes.map(sessionRequestOf));

/** Login routes: generated bodies, cookies (one session they may log out) and origins, from a few addresses (rate limited per IP). */
function loginRequestOf(route: Route): fc.Arbitrary<Req> {
  return fc
    .record({
      body:
        route.method === 'POST'
          ? bodyArb(route).map((b): RawBody | undefined => b)
          : fc.option(bodyArb(route), { nil: undefined, freq: 6 }),
      type: contentType,
      // Never the owner's or the viewer's cookie: a logout would end the sessions the other requests use.
      cookie: fc.option(
        fc.oneof(
          fc.constant(`refloop_session=${leaving.token}`),
          cookieArb()
            .filter((c) => c.who === 'unknown' || c.who === 'garbage')
            .map((c) => c.cookie ?? ''),
        ),
        { nil: undefined, freq: 3 },
      ),
      origin: originArb,
      slash: fc.boolean(),
      sourceIp: fc.constantFrom('198.51.100.61', '198.51.100.62', '2001:db8::61'),
    })
    .map(({ body, type, cookie, origin, slash, sourceIp }): Req => {
      const auth: Auth = { header: undefined, valid: false };
      const headers = headersWith(auth, type, { ...(cookie ? { cookie } : {}), ...(origin !== undefined ? { origin } : {}) });
      const path = slash ? route.path : route.path.replace(/\/$/, '');
      const req: Req = {
        family: `login ${route.name}`,
        method: route.method,
        path,
        query: '',
        headers,
        auth,
        ...(body ? { body } : {}),
        sourceIp,
        cookieOnly: true,
      };
      if (route.method === 'POST') req.expect = bodyStatus(body, type);
      // A login link writes no data of any account (only rate-limit windows); a logout ends, at most, the
      // third account's session.
      if (route.name === 'CreateLoginLink' || route.name === 'EndCurrentSession') req.harmlessSuccess = true;
      if (route.name === 'GetCurrentSession' && !cookie) req.expect = 401;
      return req;
    });
}
const loginRequest = (): fc.Arbitrary<Req> => fc.oneof(...loginRoutes.map(loginRequestOf));

/** Conversion with bodies aimed at its two fields, on A's referrals: always refused (A has no provider). */
const conversionRequest = (): fc.Arbitrary<Req> =>
  fc
    .record({
      v1: fc.boolean(),
      id: idSegment('referral', true),
      body: fc.oneof(
        { arbitrary: bodyArb(routes.find((r) => r.name === 'ConvertReferral') as Route), weight: 2 },
        {
          arbitrary: fc
            .record({
              checkout_id: fc.option(weirdValue, { nil: undefined }),
              subscription_id: fc.option(fc.oneof(weirdValue, fc.integer({ min: 1 }), fc.nat().map(String)), { nil: undefined }),
            })
            .map((v): RawBody => ({ kind: 'conversion', body: JSON.stringify(v) })),
          weight: 3,
        },
      ),
      type: contentType,
    })
    .map(({ v1, id, body, type }): Req => {
      const auth: Auth = { header: `Bearer ${A.key}`, valid: true };
      const path = `${v1 ? '/v1' : ''}/referrals/${id}/conversion/`;
      const match = findRoute('POST', path);
      const routed = match !== null && 'route' in match && match.route.name.startsWith('ConvertReferral');
      return {
        family: 'conversion',
        method: 'POST',
        path,
        query: '',
        headers: headersWith(auth, type),
        auth,
        body,
        ...(routed ? { expect: bodyStatus(body, type) } : {}),
      };
    });

/** Paddle alerts: form bodies with random fields and signatures, to B (public key), A (none) or nobody. */
const FORM = 'application/x-www-form-urlencoded';
const alertFields = Object.values(signedAlerts.alerts)[0]?.fields ?? {};
const webhookRequest = (): fc.Arbitrary<Req> =>
  fc
    .record({
      account: fc.oneof(
        { arbitrary: fc.constant('B'), weight: 5 },
        { arbitrary: fc.constant('A'), weight: 1 },
        { arbitrary: idSegment('account', true).map((s) => `raw:${s}`), weight: 2 },
      ),
      fields: fc.oneof(
        fc.dictionary(
          fc.oneof(
            fc.constantFrom('alert_name', 'alert_id', 'p_signature', 'subscription_id', 'status', 'passthrough', 'p_signature[]'),
            unicodeText,
          ),
          fc.oneof(unicodeText, longText, fc.base64String({ maxLength: 700 })),
          { maxKeys: 8 },
        ),
        // A real alert with its signature replaced or a field changed.
        fc
          .tuple(fc.base64String({ minLength: 4, maxLength: 700 }), fc.constantFrom(...Object.keys(alertFields)), unicodeText)
          .map(([sig, field, value]) => ({
            ...alertFields,
            [field]: value,
            ...(field === 'p_signature' ? {} : { p_signature: sig }),
          })),
      ),
      raw: fc.option(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 80 }),
          hugeText.map((t) => `p_signature=${t}`),
          fc.constantFrom('a=1&a=2&p_signature=x', '%zz=%zz', '&&&', '=', `p_signature=${'%'.repeat(100)}`),
        ),
        { nil: undefined, freq: 3 },
      ),
      type: fc.oneof(
        { arbitrary: fc.constant<string | undefined>(FORM), weight: 6 },
        {
          arbitrary: fc.constantFrom<string | undefined>(
            `${FORM}; charset=utf-8`,
            JSON_TYPE,
            'text/plain',
            '',
            undefined,
            'multipart/form-data',
          ),
          weight: 2,
        },
      ),
      key: fc.option(fc.constantFrom(`Bearer ${A.key}`, 'Bearer nonsense'), { nil: undefined, freq: 3 }),
      slash: fc.boolean(),
    })
    .map(({ account, fields, raw, type, key, slash }): Req => {
      const accountSegment = account === 'A' ? A.accountId : account === 'B' ? B.accountId : account.slice(4);
      const text =
        raw ??
        new URLSearchParams(
          Object.entries(fields).map(([k, v]): [string, string] => [k.replace(/[\ud800-\udfff]/g, ''), v.replace(/[\ud800-\udfff]/g, '')]),
        ).toString();
      const auth: Auth = { header: key, valid: false };
      const req: Req = {
        family: 'webhook',
        method: 'POST',
        path: `/webhooks/paddle/${accountSegment}${slash ? '/' : ''}`,
        query: '',
        headers: headersWith(auth, type),
        auth,
        body: { kind: raw === undefined ? 'form' : 'raw form', body: text },
      };
      if (accountSegment === A.accountId) req.expect = 404;
      else if (accountSegment === B.accountId) {
        const media = (type ?? '').split(';')[0]?.trim().toLowerCase();
        req.expect = Buffer.byteLength(text, 'utf8') > MAX_BODY ? 413 : media !== FORM ? 415 : 403;
      }
      return req;
    });

/**
 * The payout rails' intakes (POST /webhooks/{paypal|stripe-connect|wise}/{account_id}/): JSON and other
 * bodies with forged signature headers, to B (connected: 403), A (no rail: 404) or any account segment.
 * Nothing is ever queued or written.
 */
const RAIL_INTAKES = ['paypal', 'stripe-connect', 'wise'] as const;
const railSignatureHeaders = fc.oneof(
  fc.constant<Record<string, string>>({}),
  fc.record({
    'paypal-transmission-id': unicodeText.map((t) => t.replace(/[^ -~]/g, '')),
    'paypal-transmission-time': fc.constantFrom('2026-01-01T00:00:00Z', '', 'yesterday'),
    'paypal-transmission-sig': fc.constantFrom('AAAA', 'not base64!', ''),
    'paypal-cert-url': fc.constantFrom(
      'https://api.paypal.com/v1/notifications/certs/CERT',
      'https://evil.example/cert',
      'file:///etc/passwd',
      '',
    ),
    'paypal-auth-algo': fc.constantFrom('SHA256withRSA', 'none', ''),
  }),
  fc.constantFrom<Record<string, string>>(
    { 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
    { 'stripe-signature': 't=,v1=' },
    { 'stripe-signature': 'garbage' },
    { 'x-signature-sha256': 'AAAA', 'x-delivery-id': 'd-1' },
    { 'x-signature-sha256': '!!!', 'x-test-notification': 'true' },
    { 'x-signature-sha256': '', 'x-delivery-id': '' },
  ),
);
const railIntakeRequest = (): fc.Arbitrary<Req> =>
  fc
    .record({
      rail: fc.constantFrom(...RAIL_INTAKES),
      account: fc.oneof(
        { arbitrary: fc.constant('B'), weight: 5 },
        { arbitrary: fc.constant('A'), weight: 1 },
        { arbitrary: idSegment('account', true).map((s) => `raw:${s}`), weight: 2 },
      ),
      body: fc.oneof(
        { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null'), weight: 4 },
        {
          arbitrary: fc.constantFrom(
            '{"id":"WH-1","event_type":"PAYMENT.PAYOUTS-ITEM.SUCCEEDED","resource":{"payout_item":{"sender_item_id":"po_x"}}}',
            '{"id":"evt_1","object":"event","type":"transfer.created","data":{"object":{"object":"transfer"}}}',
            '{"event_type":"transfers#state-change","data":{"resource":{"id":1},"current_state":"outgoing_payment_sent"}}',
            '',
            '{',
          ),
          weight: 2,
        },
        { arbitrary: hugeText, weight: 1 },
        {
          arbitrary: fc.integer({ min: MAX_RAIL_WEBHOOK_BYTES + 1, max: MAX_RAIL_WEBHOOK_BYTES + 4096 }).map((n) => 'x'.repeat(n)),
          weight: 1,
        },
      ),
      signature: railSignatureHeaders,
      type: fc.oneof(
        { arbitrary: fc.constant<string | undefined>(JSON_TYPE), weight: 6 },
        { arbitrary: fc.constantFrom<string | undefined>('text/plain', FORM, '', undefined), weight: 1 },
      ),
      key: fc.option(fc.constantFrom(`Bearer ${A.key}`, `Bearer ${B.key}`, 'Bearer nonsense'), { nil: undefined, freq: 3 }),
      slash: fc.boolean(),
    })
    .map(({ rail, account, body, signature, type, key, slash }): Req => {
      const accountSegment = account === 'A' ? A.accountId : account === 'B' ? B.accountId : account.slice(4);
      const auth: Auth = { header: key, valid: false };
      const req: Req = {
        family: 'rail intake',
        method: 'POST',
        path: `/webhooks/${rail}/${accountSegment}${slash ? '/' : ''}`,
        query: '',
        headers: headersWith(auth, type, signature),
        auth,
        body: { kind: 'rail delivery', body },
      };
      // The intakes take up to 128 KiB (a rail's own limit), past the gateway's usual MAX_BODY.
      const tooBig = Buffer.byteLength(body, 'utf8') > MAX_RAIL_WEBHOOK_BYTES;
      if (accountSegment === A.accountId) req.expect = tooBig ? 413 : 404;
      else if (accountSegment === B.accountId) req.expect = tooBig ? 413 : 403;
      return req;
    });

/** Odd paths and methods, with and without credentials. */
const METHODS = [
  'GET',
  'POST',
  'PATCH',
  'DELETE',
  'PUT',
  'HEAD',
  'OPTIONS',
  'TRACE',
  'CONNECT',
  'get',
  'Delete',
  'FOO',
  '',
  'GET ',
  'POST\u0000',
];
const oddPathRequest = (): fc.Arbitrary<Req> =>
  fc
    .record({
      method: fc.constantFrom(...METHODS),
      path: fc.oneof(
        fc.constantFrom(
          '',
          '/',
          '//',
          '///v1///campaigns///',
          '/v1',
          '/v1/',
          '/V1/CAMPAIGNS/',
          '/v1/campaigns/..',
          '/v1/campaigns/../members/',
          '/v1/./campaigns/',
          '/v1/campaigns%2F',
          '/v1%2Fcampaigns/',
          '/v1/referrals/user/',
          '/v1/referrals/user/%2F/',
          '/v1/referrals/user/a/b/',
          '/v1/referrals/x/conversion',
          '/referrals/',
          '/referrals/x/',
          '/webhooks/paddle/',
          '/webhooks/paddle/x/y/',
          '/v2/campaigns/',
          'v1/campaigns/',
          '/v1/campaigns/\u0000/',
          '/v1/members/%E0%A4%A/',
          '/v1/members/%',
          '/v1/members/%%%/',
          '/v1/subscriptions/-1/',
          '/v1/subscriptions/1e3/',
          '/v1/subscriptions/9007199254740993/',
          '/v1/campaigns/ /',
          '/v1/campaigns/\t/',
          '/v1/campaigns/%09/',
          '/v1/referrals/user/..%2F..%2F/',
          '/favicon.ico',
          '/.env',
          '/v1/members/?/',
        ),
        fc
          .tuple(
            fc.constantFrom(
              '/v1/campaigns/',
              '/v1/members/',
              '/v1/referrals/',
              '/v1/referrals/user/',
              '/v1/subscriptions/',
              '/referrals/',
              '/webhooks/paddle/',
            ),
            fc.array(idSegment('member', false), { minLength: 1, maxLength: 3 }),
            fc.boolean(),
          )
          .map(([base, segs, slash]) => `${base}${segs.join('/')}${slash ? '/' : ''}`),
        fc.integer({ min: 2000, max: 20_000 }).map((n) => `/v1/members/${'a'.repeat(n)}/`),
        unicodeText.map((t) => `/v1/${t}`),
      ),
      auth: authArb(),
      body: fc.option(bodyArb(apiRoutes[0] as Route), { nil: undefined, freq: 2 }),
      type: contentType,
    })
    .map(
      ({ method, path, auth, body, type }): Req => ({
        family: 'odd path',
        method,
        path,
        query: '',
        headers: headersWith(auth, type),
        auth,
        ...(body ? { body } : {}),
      }),
    );

/** PATCH of one field of a real member or campaign: odd values that pass validation get stored. */
const singleFieldPatch = (): fc.Arbitrary<Req> =>
  fc
    .record({
      member: fc.boolean(),
      i: fc.nat(),
      value: weirdValue,
      memberField: fc.constantFrom(...(FIELDS.UpdateMember as string[])),
      campaignField: fc.constantFrom(...(FIELDS.UpdateCampaign as string[])),
    })
    .map(({ member, i, value, memberField, campaignField }): Req => {
      const auth: Auth = { header: `Bearer ${A.key}`, valid: true };
      const path = member ? `/v1/members/${A.members[i % A.members.length]?.id}/` : `/v1/campaigns/${A.campaigns[i % A.campaigns.length]}/`;
      const body: RawBody = { kind: 'one field', body: JSON.stringify({ [member ? memberField : campaignField]: value }) };
      return {
        family: 'patch',
        method: 'PATCH',
        path,
        query: '',
        headers: headersWith(auth, JSON_TYPE),
        auth,
        body,
        expect: bodyStatus(body, JSON_TYPE),
      };
    });

/** PATCH of a real member's campaign or subscription reference with an odd object (an empty id, say). */
const referencePatch = (): fc.Arbitrary<Req> =>
  fc
    .record({
      i: fc.nat(),
      field: fc.constantFrom('campaign', 'subscription'),
      value: fc.oneof(
        { arbitrary: objectLike, weight: 3 },
        { arbitrary: fc.constantFrom<unknown>({ id: '' }, { id: ' ' }, { id: '\t' }, { id: 0 }, { id: '0' }), weight: 1 },
        { arbitrary: meaningful, weight: 1 },
        { arbitrary: oddScalar, weight: 1 },
      ),
    })
    .map(({ i, field, value }): Req => {
      const auth: Auth = { header: `Bearer ${A.key}`, valid: true };
      const body: RawBody = { kind: 'reference', body: JSON.stringify({ [field]: value }) };
      return {
        family: 'patch',
        method: 'PATCH',
        path: `/v1/members/${A.members[i % A.members.length]?.id}/`,
        query: '',
        headers: headersWith(auth, JSON_TYPE),
        auth,
        body,
      };
    });

/** Built once the fixtures exist (the generators use their ids and keys). */
/** The member portal's API: A's member's portal session, or credentials it must refuse (API keys, garbage). */
const portalRoutes = routes.filter((r) => r.auth === 'portal');
const portalAuthArb = (): fc.Arbitrary<Auth> =>
  fc.oneof(
    { arbitrary: fc.constant<Auth>({ header: `Bearer ${portalToken}`, valid: true }), weight: 6 },
    {
      arbitrary: fc
        .oneof(
          fc.constantFrom<string | undefined>(
            undefined,
            '',
            'Bearer',
            `Bearer ${A.key}`,
            `Token ${portalToken}`,
            `Bearer ${A.publishableKey}`,
            `Bearer ${portalToken}x`,
            `Bearer rps_${'A'.repeat(43)}`,
            `Bearer rpl_${'A'.repeat(43)}`,
          ),
          unicodeText.map((t) => `Bearer ${t}`),
        )
        .map((header): Auth => ({ header, valid: false })),
      weight: 3,
    },
  );
function portalRequestOf(route: Route): fc.Arbitrary<Req> {
  return fc
    .record({
      body:
        route.method === 'PATCH'
          ? bodyArb(route).map((b): RawBody | undefined => b)
          : fc.option(bodyArb(route), { nil: undefined, freq: 8 }),
      type: contentType,
      auth: portalAuthArb(),
      query: fc.constantFrom(
        '',
        'interval=day',
        'interval=year',
        'interval=',
        'page_size=0',
        'page_size=100',
        'cursor=x',
        `cursor=${A.cursors[0] ?? 'x'}`,
        'page_size=1&page_size=2',
      ),
      slash: fc.boolean(),
    })
    .map(({ body, type, auth, query, slash }): Req => {
      const path = slash ? route.path : route.path.replace(/\/$/, '');
      const req: Req = {
        family: `portal ${route.name}`,
        method: route.method,
        path,
        query,
        headers: headersWith(auth, type),
        auth,
        ...(body ? { body } : {}),
      };
      if (!auth.valid) req.expect = 401;
      else if (route.method === 'PATCH') req.expect = bodyStatus(body, type);
      return req;
    });
}
/** Opening a portal link: generated bodies (never a known token), from a few IPs. */
const portalOpenRequest = (): fc.Arbitrary<Req> => {
  const route = routes.find((r) => r.name === 'OpenPortalSession') as Route;
  return fc
    .record({ body: bodyArb(route), type: contentType, sourceIp: fc.constantFrom('198.51.100.71', '2001:db8::71') })
    .map(({ body, type, sourceIp }): Req => {
      const auth: Auth = { header: undefined, valid: false };
      const req: Req = {
        family: 'portal OpenPortalSession',
        method: 'POST',
        path: route.path,
        query: '',
        headers: headersWith(auth, type),
        auth,
        body,
        sourceIp,
      };
      const status = bodyStatus(body, type);
      if (status !== undefined) req.expect = status;
      return req;
    });
};
/**
 * An affiliate's login doors (docs/portal.md "Affiliate login"): asking for a login link (A's or B's slug,
 * garbage, known and unknown addresses: always 202 or a 4xx for the body), opening one (never a known
 * token) and logging out (garbage cookies, with and without this site's Origin).
 */
const portalDoorsRequest = (): fc.Arbitrary<Req> => {
  const named = (name: string) => routes.find((r) => r.name === name) as Route;
  const loginLinks = named('CreatePortalLoginLink');
  const loginBody = fc.oneof(
    { arbitrary: bodyArb(loginLinks), weight: 4 },
    {
      arbitrary: fc
        .record({
          account: fc.constantFrom(A.slug, B.slug, A.accountId, 'v1', 'nope', 'x'.repeat(101)),
          email: fc.oneof(unicodeText, fc.emailAddress()),
        })
        .map((v): RawBody => ({ kind: 'object', body: JSON.stringify(v) })),
      weight: 2,
    },
  );
  const post = (route: Route, body: fc.Arbitrary<RawBody>) =>
    fc
      .record({ body, type: contentType, sourceIp: fc.constantFrom('198.51.100.72', '2001:db8::72') })
      .map(({ body: b, type, sourceIp }): Req => {
        const auth: Auth = { header: undefined, valid: false };
        const req: Req = {
          family: `portal ${route.name}`,
          method: 'POST',
          path: route.path,
          query: '',
          headers: headersWith(auth, type),
          auth,
          body: b,
          sourceIp,
        };
        const status = bodyStatus(b, type);
        if (status !== undefined) req.expect = status;
        return req;
      });
  const end = named('EndPortalSession');
  const logout = fc
    .record({
      cookie: fc.option(
        fc.oneof(
          fc.constantFrom(
            'refloop_portal=',
            'refloop_portal=x',
            `refloop_portal=rps_${'A'.repeat(43)}`,
            `refloop_session=${'A'.repeat(43)}`,
          ),
          unicodeText.map((t) => `refloop_portal=${t}`),
        ),
        { nil: undefined },
      ),
      origin: fc.option(fc.constantFrom('https://api.test', 'https://evil.example', 'null'), { nil: undefined }),
    })
    .map(({ cookie, origin }): Req => {
      const auth: Auth = { header: undefined, valid: false };
      return {
        family: 'portal EndPortalSession',
        method: 'DELETE',
        path: end.path,
        query: '',
        headers: { ...(cookie !== undefined ? { cookie } : {}), ...(origin !== undefined ? { origin } : {}) },
        auth,
        // None of these cookies is a live session: the 204 of logging out of nothing writes nothing.
        harmlessSuccess: true,
      };
    });
  return fc.oneof(post(loginLinks, loginBody), post(named('OpenPortalLoginSession'), bodyArb(named('OpenPortalLoginSession'))), logout);
};

const portalRequest = (): fc.Arbitrary<Req> => fc.oneof(...portalRoutes.map(portalRequestOf), portalOpenRequest(), portalDoorsRequest());

/**
 * The affiliate programme's public doors (docs/affiliates.md): the join page, the form's endpoint (JSON or the
 * page's urlencoded form) and the confirmation link, on A's and B's slugs (their campaigns are closed: a
 * valid application is a silent 202 that stores nothing) or garbage, with unknown tokens. Pages answer HTML.
 */
const FORM_TYPE = 'application/x-www-form-urlencoded';
const slugSegment = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(A.slug, B.slug, ...A.campaignSlugs, ...B.campaignSlugs, 'v1', 'confirm', 'x'.repeat(41)),
    idSegment('campaign', false),
  );
const joinRequest = (): fc.Arbitrary<Req> => {
  const submit = routes.find((r) => r.name === 'SubmitApplication') as Route;
  const formBody = fc
    .dictionary(
      fc.oneof(
        fc.constantFrom('email', 'name', 'country', 'payout_email', 'accepted_terms', 'answers[q]', 'answers[__proto__]', 'answers[]'),
        unicodeText,
      ),
      fc.oneof(unicodeText, longText, fc.constantFrom('on', 'a@b.co', 'GB', '')),
      { maxKeys: 6 },
    )
    .map(
      (fields): RawBody => ({
        kind: 'form',
        body: new URLSearchParams(
          Object.entries(fields).map(([k, v]): [string, string] => [k.replace(/[\ud800-\udfff]/g, ''), v.replace(/[\ud800-\udfff]/g, '')]),
        ).toString(),
      }),
    );
  return fc.oneof(
    fc
      .record({
        account: slugSegment(),
        campaign: slugSegment(),
        form: fc.boolean(),
        json: bodyArb(submit),
        formBody: fc.oneof(
          formBody,
          hugeText.map((t): RawBody => ({ kind: 'huge form', body: `name=${t}` })),
        ),
        type: contentType,
        sourceIp: fc.constantFrom('198.51.100.81', '2001:db8::81'),
      })
      .map(({ account, campaign, form, json, formBody, type, sourceIp }): Req => {
        const body = form ? formBody : json;
        const contentTypeSent = form ? FORM_TYPE : type;
        const auth: Auth = { header: undefined, valid: false };
        const req: Req = {
          family: 'join SubmitApplication',
          method: 'POST',
          path: `/join/v1/${account}/${campaign}/applications/`,
          query: '',
          headers: headersWith(auth, contentTypeSent),
          auth,
          body,
          sourceIp,
          harmlessSuccess: true,
        };
        const media = (contentTypeSent ?? '').split(';')[0]?.trim().toLowerCase();
        const match = findRoute('POST', req.path);
        if (match && 'route' in match && match.route.name === 'SubmitApplication') {
          if (media === FORM_TYPE) req.expect = byteLength(body.body) > MAX_BODY ? 413 : undefined;
          else req.expect = bodyStatus(body, contentTypeSent);
        }
        return req;
      }),
    fc
      .record({
        method: fc.constantFrom('GET', 'POST'),
        token: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), idSegment('referral', false)),
        page: fc.boolean(),
        account: slugSegment(),
        campaign: slugSegment(),
        query: fc.constantFrom('', 'sent=1', 'sent=', 'utm_source=x'),
      })
      .map(({ method, token, page, account, campaign, query }): Req => {
        const auth: Auth = { header: undefined, valid: false };
        return {
          family: page ? 'join JoinPage' : 'join ConfirmApplication',
          method: page ? 'GET' : method,
          path: page ? `/join/${account}/${campaign}/` : `/join/confirm/${token}/`,
          query: page ? query : '',
          headers: {},
          auth,
          harmlessSuccess: true,
        };
      }),
  );
};

const requestArb = (): fc.Arbitrary<Req> =>
  fc.oneof(
    { arbitrary: portalRequest(), weight: 2 },
    { arbitrary: joinRequest(), weight: 2 },
    { arbitrary: routeRequest(), weight: 10 },
    { arbitrary: conversionRequest(), weight: 2 },
    { arbitrary: webhookRequest(), weight: 2 },
    { arbitrary: railIntakeRequest(), weight: 2 },
    { arbitrary: oddPathRequest(), weight: 2 },
    { arbitrary: jsRequest(), weight: 2 },
    { arbitrary: sessionRequest(), weight: 2 },
    { arbitrary: loginRequest(), weight: 2 },
  );

/**
 * The fraud routes with bodies and queries shaped like theirs (docs/fraud.md): the rules' PATCH (known and
 * unknown rules, each with generated settings: unknown thresholds, wrong types, out of range), the preview,
 * the queue's filters, a resolution's `{note}` (on another account's or an unknown flag: the body is checked
 * first) and a reward's release by an id that names no reward. Answered 200 (a valid PATCH, preview or
 * list), 400 in the contract's shape or 404, never anything else.
 */
function fraudRequest(): fc.Arbitrary<Req> {
  const ruleName = fc.oneof(
    { arbitrary: fc.constantFrom<string>(...FRAUD_RULES), weight: 4 },
    { arbitrary: fc.constantFrom('self-referral', 'DUPLICATE_IP', 'fraud', '__proto__', 'constructor', '', ' velocity'), weight: 1 },
    { arbitrary: unicodeText, weight: 1 },
  );
  const setting = fc.oneof({ arbitrary: fraudSetting, weight: 5 }, { arbitrary: weirdValue, weight: 1 });
  const rulesBody = fc.oneof(
    { arbitrary: fc.dictionary(ruleName, setting, { maxKeys: 3 }), weight: 6 },
    { arbitrary: weirdValue, weight: 1 },
  );
  const previewBody = fc.oneof(
    {
      arbitrary: fc.record(
        {
          rule: fc.oneof(ruleName, weirdValue),
          action: fc.oneof(fc.constantFrom<unknown>('off', 'flag', 'hold', 'block'), weirdValue),
          thresholds: setting,
        },
        { requiredKeys: [] },
      ),
      weight: 6,
    },
    { arbitrary: weirdValue, weight: 1 },
  );
  const noteBody = fc.oneof(
    {
      arbitrary: fc.record({ note: fc.oneof(weirdValue, fc.constantFrom<unknown>('x'.repeat(501), 'é'.repeat(501), 'ok', null)) }),
      weight: 6,
    },
    { arbitrary: weirdValue, weight: 1 },
  );
  const json = (v: unknown): RawBody => ({ kind: 'fraud', body: JSON.stringify(v) ?? 'null' });
  const req = (method: string, path: string, body?: unknown, query = ''): Req => ({
    family: `fraud ${method} ${path.replace(/(ff_)?[0-9a-f]{32}/gi, '{id}')}`,
    method,
    path,
    query,
    headers: headersWith({ header: `Bearer ${A.key}`, valid: true }, JSON_TYPE),
    auth: { header: `Bearer ${A.key}`, valid: true },
    ...(body === undefined ? {} : { body: json(body) }),
  });
  const notOurs = fc.constantFrom(...B.flags, `ff_${'0'.repeat(32)}`, `ff_${'f'.repeat(32)}`);
  const enc = (v: unknown) => {
    try {
      return encodeURIComponent(String(v));
    } catch {
      return 'x';
    }
  };
  const query = fc
    .array(
      fc.oneof(
        fc.tuple(fc.constantFrom('rule', 'status', 'member'), fc.oneof(ruleName, weirdValue.map(asText))).map(([k, v]) => `${k}=${enc(v)}`),
        fc.constantFrom('status=open', 'status=reviewed', 'rule=velocity', `member=${A.members[0]?.id}`, `member=${B.members[0]?.id}`),
      ),
      { maxLength: 3 },
    )
    .map((ps) => ps.join('&'));
  return fc.oneof(
    rulesBody.map((b) => req('PATCH', '/v1/fraud-rules/', b)),
    previewBody.map((b) => req('POST', '/v1/fraud-rules/preview/', b)),
    fc
      .tuple(notOurs, fc.constantFrom('release', 'void', 'review'), noteBody)
      .map(([id, action, b]) => req('POST', `/v1/fraud-flags/${id}/${action}/`, b)),
    query.map((q) => req('GET', '/v1/fraud-flags/', undefined, q)),
    fc.constantFrom(...A.flags, ...B.flags).map((id) => req('GET', `/v1/fraud-flags/${id}/`)),
    fc
      .constantFrom(...A.referrals.map((r) => r.id), ...A.flags, 'x', '0'.repeat(32))
      .map((id) => req('POST', `/v1/rewards/${id}/release/`)),
  );
}

// ---- checks -------------------------------------------------------------------------------------

function describeReq(req: Req): string {
  const body = req.body === undefined ? '' : typeof req.body.body === 'string' ? req.body.body : `<${req.body.body.length} bytes>`;
  const shown = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}... (${s.length} chars)` : s);
  return `[${req.family}] ${JSON.stringify(req.method)} ${JSON.stringify(shown(req.path + (req.query ? `?${req.query}` : '')))} headers=${shown(JSON.stringify(req.headers))} body(${req.body?.kind ?? 'none'})=${shown(JSON.stringify(body))}`;
}

/** Every problem with one answer, as text; empty when it is fine. */
function problems(req: Req, res: ApiResponse): string[] {
  const out: string[] = [];
  if (res.status >= 500) out.push(`status ${res.status}`);
  if (!res.headers['x-request-id']) out.push('no X-Request-Id');
  // The join doors' pages answer HTML (the form's post a 303 to its page); their errors in JSON are checked as the others'.
  const page = req.family.startsWith('join') && (res.status === 303 || res.headers['content-type'] === 'text/html; charset=utf-8');
  if (page) {
    if (res.status === 303 && !/^\/join\/[^/]+\/[^/]+\/\?sent=1$/.test(res.headers.location ?? '')) out.push('303 to an unexpected place');
    if (res.status !== 303 && !res.headers['content-security-policy']?.includes("default-src 'none'")) out.push('page without its CSP');
  } else if (res.status === 204) {
    if (res.text !== '') out.push('204 with a body');
  } else if (res.status === 200 && req.family === 'session ExportTaxDetails') {
    // The tax export answers its CSV to an owner's session (its errors are JSON like every other answer's).
    if (!res.headers['content-type']?.startsWith('text/csv')) out.push(`content-type ${res.headers['content-type']}`);
  } else {
    if (res.headers['content-type'] !== JSON_TYPE) out.push(`content-type ${res.headers['content-type']}`);
    if (res.body === null || typeof res.body !== 'object' || Array.isArray(res.body)) out.push('body is not a JSON object');
  }
  if (res.status >= 400 && res.status < 500 && !page) {
    const body = res.body as Record<string, unknown> | null;
    const keys = body && typeof body === 'object' ? Object.keys(body) : [];
    const detailShape = keys.length === 1 && keys[0] === 'detail' && typeof body?.detail === 'string' && body.detail.length > 0;
    const fieldShape =
      keys.length > 0 &&
      !keys.includes('detail') &&
      keys.every(
        (k) =>
          k.length > 0 &&
          Array.isArray(body?.[k]) &&
          (body?.[k] as unknown[]).length > 0 &&
          (body?.[k] as unknown[]).every((m) => typeof m === 'string' && m.length > 0),
      );
    if (!detailShape && !fieldShape) out.push('4xx body is neither {detail: string} nor {field: [string, ...]}');
  }
  if (res.status === 405 && !res.headers.allow) out.push('405 without Allow');
  if (res.status === 401 && res.headers['www-authenticate'] !== 'Bearer' && !req.cookieOnly)
    out.push('401 without WWW-Authenticate: Bearer');
  // The dashboard's refusals, word for word.
  if (res.status === 403 && req.family.startsWith('session ')) {
    const detail = (res.body as { detail?: unknown } | null)?.detail;
    if (![SESSION_ONLY, CROSS_SITE_REFUSED, PERMISSION_DENIED].includes(detail as string) && !/plan|at most/i.test(String(detail)))
      out.push(`unexpected 403 detail ${JSON.stringify(detail)}`);
  }
  if (req.expect !== undefined && res.status !== req.expect) out.push(`expected ${req.expect}`);
  if (req.family === 'conversion' && res.status < 400) out.push('a conversion on an account without a provider succeeded');
  if (req.family.startsWith('fraud ') && ![200, 400, 404].includes(res.status))
    out.push('a fraud route answered other than 200, 400 or 404');
  return out;
}

function send(req: Req): Promise<ApiResponse> {
  const path = req.query ? `${req.path}?${req.query}` : req.path;
  return api(req.method, path, {
    headers: req.headers,
    ...(req.body !== undefined ? { rawBody: req.body.body } : {}),
    ...(req.sourceIp ? { sourceIp: req.sourceIp } : {}),
  });
}

// ---- the property -------------------------------------------------------------------------------

interface Tally {
  sent: number;
  checkedBatches: number;
  statuses: Record<string, number>;
  families: Record<string, number>;
}

/**
 * Sends `runs` generated batches (concurrently within a batch) and checks every answer. B must never
 * change; A must not change across a batch in which no write was accepted.
 */
async function fuzz(arb: fc.Arbitrary<Req>, runs: number, batchSize: number, tally: Tally): Promise<void> {
  const [initialA = [], beforeB = []] = await snapshot([A.accountId, B.accountId]);
  let beforeA = initialA;
  await fc.assert(
    fc.asyncProperty(fc.array(arb, { minLength: batchSize, maxLength: batchSize }), async (batch) => {
      const answers = await Promise.all(batch.map(send));
      tally.sent += batch.length;
      const report: string[] = [];
      let wrote = false;
      batch.forEach((req, i) => {
        const res = answers[i] as ApiResponse;
        const family = req.family.split(' ')[0] as string;
        tally.statuses[res.status] = (tally.statuses[res.status] ?? 0) + 1;
        tally.families[family] = (tally.families[family] ?? 0) + 1;
        if (res.status < 300 && req.method.toUpperCase() !== 'GET' && !req.harmlessSuccess) wrote = true;
        const found = problems(req, res);
        if (found.length > 0)
          report.push(`${describeReq(req)}\n  -> ${res.status} ${res.text.slice(0, 300)}\n  problems: ${found.join('; ')}`);
      });
      if (report.length > 0) throw new Error(`bad answers:\n${report.join('\n')}`);

      const [afterA = [], afterB = []] = await snapshot([A.accountId, B.accountId]);
      // B is never written by anything here (A's key, unverifiable alerts).
      expect(afterB).toEqual(beforeB);
      if (!wrote) {
        // Nothing was accepted: nothing may have changed.
        tally.checkedBatches++;
        if (JSON.stringify(afterA) !== JSON.stringify(beforeA)) {
          const gone = beforeA.filter((i) => !afterA.includes(i));
          const added = afterA.filter((i) => !beforeA.includes(i));
          throw new Error(
            `rejected requests changed data\nremoved/changed: ${gone.join('\n')}\nadded/changed: ${added.join('\n')}\nbatch:\n${batch.map(describeReq).join('\n')}`,
          );
        }
      }
      beforeA = afterA;
    }),
    { numRuns: runs },
  );
}

const newTally = (): Tally => ({ sent: 0, checkedBatches: 0, statuses: {}, families: {} });

/**
 * Chargebee's connection bodies (POST /v1/account/provider/ with kind chargebee), on an account of their own
 * (a 200 connects it): each field absent, valid, nearly valid (a site with a space or a path, a short webhook
 * password, a username with ':') or odd. Every answer is a 200 or a 400 naming fields; a body with a field
 * known to be wrong names at least that field; a fully valid body connects; no answer holds a secret.
 */
async function chargebeeConnectionBodies(runs: number) {
  const { accountId } = await newAccount();
  const admin = await loginAs(accountId, 'admin');
  const KEY = 'test_badinputChargebee0001';
  const PASSWORD = 'bad-input-chargebee-password-0001';
  // `wrong`: true when the value alone is refused, false when it is fine, null when this test does not decide.
  type Pick = { value: unknown; wrong: boolean | null } | undefined;
  const field = (valid: unknown[], wrong: unknown[]): fc.Arbitrary<Pick> =>
    fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 1 },
      { arbitrary: fc.constantFrom(...valid).map((value) => ({ value, wrong: false })), weight: 3 },
      { arbitrary: fc.constantFrom(...wrong).map((value) => ({ value, wrong: true })), weight: 2 },
      { arbitrary: weirdValue.map((value) => ({ value, wrong: null })), weight: 1 },
    );
  const body = fc.record({
    site: field(
      ['acme', 'acme-test', 'Acme-Test.chargebee.com', ' acme '],
      ['acme test', 'acme/api', '-acme', 'a'.repeat(70), '', 'acme.example.com'],
    ),
    api_key: field([KEY, 'live_AbC123xyz_0987'], ['short', 'key with space', '', 'x'.repeat(201)]),
    webhook_username: field(['refloop', 'hooks-01'], ['a:b', 'with space', 'u'.repeat(65)]),
    webhook_password: field([PASSWORD, 'p'.repeat(200)], ['short', 'x'.repeat(23), 'p'.repeat(201), 'tab\tinside-the-password-000', '']),
    api_url: fc.oneof(
      { arbitrary: fc.constant<Pick>(undefined), weight: 6 },
      {
        arbitrary: fc
          .constantFrom<unknown>('http://127.0.0.1:12141', 'https://acme.chargebee.com', 'javascript:alert(1)')
          .map((value) => ({ value, wrong: true })),
        weight: 1,
      },
    ),
  });
  const statuses: Record<number, number> = {};
  await fc.assert(
    fc.asyncProperty(body, async (picked) => {
      const sent: Record<string, unknown> = { kind: 'chargebee' };
      for (const [k, p] of Object.entries(picked)) if (p !== undefined) sent[k] = p.value;
      const res = await api('POST', '/v1/account/provider/', { headers: admin.headers, body: sent });
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const what = { sent, status: res.status, body: res.body };
      expect({ ...what, allowed: [200, 400].includes(res.status) }).toEqual({ ...what, allowed: true });
      expect(res.text).not.toContain(KEY);
      expect(res.text).not.toContain(PASSWORD);
      const missing = ['site', 'api_key', 'webhook_password'].filter((k) => picked[k as keyof typeof picked] === undefined);
      const wrong = Object.values(picked).filter((p) => p?.wrong === true).length;
      const undecided = Object.values(picked).some((p) => p?.wrong === null);
      if (res.status === 400) {
        const keys = Object.keys(res.body ?? {});
        const shaped =
          keys.length > 0 && keys.every((k) => Array.isArray(res.body[k]) && res.body[k].every((m: unknown) => typeof m === 'string' && m));
        expect({ ...what, shaped }).toEqual({ ...what, shaped: true });
      }
      if (missing.length > 0) {
        expect(what).toMatchObject({ status: 400 });
        // Every missing field at once when the others are fine (a wrong type or a blank is reported first).
        if (wrong === 0 && !undecided)
          for (const k of missing) expect({ k, body: res.body }).toEqual({ k, body: expect.objectContaining({ [k]: expect.any(Array) }) });
      } else if (wrong > 0) {
        expect(what).toMatchObject({ status: 400 });
      } else if (!undecided) {
        expect(what).toMatchObject({ status: 200, body: { kind: 'chargebee', connected: true } });
      }
    }),
    { numRuns: runs },
  );
  return statuses;
}

describe('generated bad input', () => {
  it('POST /v1/account/provider/ with kind chargebee: 200, or 400 naming the fields (bad site, short webhook password, missing API key), never a 5xx', async () => {
    const statuses = await chargebeeConnectionBodies(120);
    expect(statuses[400] ?? 0).toBeGreaterThan(30);
    expect(statuses[200] ?? 0).toBeGreaterThan(0);
  }, 60_000);

  it('never a 5xx, always the contract shape, and rejected requests change nothing', async () => {
    const tally = newTally();
    const started = Date.now();
    await fuzz(requestArb(), RUNS, BATCH, tally);
    // The tally is printed on request only (TEST_REPORTS=1), so a green run stays short.
    if (process.env.TEST_REPORTS === '1')
      console.log(
        `bad input: ${tally.sent} requests in ${Date.now() - started} ms; ${tally.checkedBatches}/${RUNS} batches entirely rejected, data checked unchanged`,
        tally,
      );
    expect(tally.sent).toBeGreaterThanOrEqual(2000);
    // Most batches must be fully rejected, or the "unchanged" check proves little. About 0.6% of the requests
    // are accepted writes, so about 86% of the batches are checked (70 of 81, a standard deviation of 3):
    // 70% is four deviations below, not a coin a random seed can lose.
    expect(tally.checkedBatches).toBeGreaterThanOrEqual(RUNS * 0.7);
  }, 300_000);

  it("the fraud routes' own bodies and filters: 200, 400 in the contract's shape or 404, never a 5xx", async () => {
    const tally = newTally();
    await fuzz(fraudRequest(), 16, BATCH, tally);
    expect(tally.sent).toBe(16 * BATCH);
    // Most of them are refused (400): the generated shapes are wrong far more often than right.
    expect(tally.statuses['400'] ?? 0).toBeGreaterThan(tally.sent / 3);
    // Whatever the PATCHes stored, the rules still answer, and A's flags are as they were (open).
    expect((await api('GET', '/v1/fraud-rules/', { key: A.key })).status).toBe(200);
    const open = await api('GET', '/v1/fraud-flags/?status=open', { key: A.key });
    expect([open.status, open.body.count]).toEqual([200, A.flags.length]);
  }, 120_000);

  it('odd values that pass validation are stored harmlessly: the account keeps working', async () => {
    const tally = newTally();
    const started = Date.now();
    await fuzz(fc.oneof(singleFieldPatch(), referencePatch()), PATCH_RUNS, 10, tally);
    if (process.env.TEST_REPORTS === '1')
      console.log(`odd accepted values: ${tally.sent} PATCH requests in ${Date.now() - started} ms`, tally.statuses);

    // Every member can be read and can refer a new user, and the lists answer with the real counts.
    const raw = await rawItems(A.accountId);
    const live = (type: string) => raw.filter((i) => i.type === type && i.deleted_at === undefined).length;
    const health: Record<string, unknown> = {};
    const want: Record<string, unknown> = {};
    for (const [list, type] of [
      ['campaigns', 'Campaign'],
      ['members', 'Member'],
      ['referrals', 'Referral'],
    ] as const) {
      const res = await api('GET', `/v1/${list}/`, { key: A.key });
      health[list] = [res.status, res.body?.count];
      want[list] = [200, live(type)];
    }
    for (const [n, m] of A.members.entries()) {
      const got = await api('GET', `/v1/members/${m.id}/`, { key: A.key });
      health[`GET member ${n}`] = got.status;
      want[`GET member ${n}`] = 200;
      const referral = await api('POST', '/v1/referrals/', {
        key: A.key,
        body: { user_identifier: `after-fuzz-${n}`, member_code: got.body?.code },
      });
      health[`referral by member ${n}`] = [referral.status, referral.text.slice(0, 200)];
      want[`referral by member ${n}`] = [200, referral.text.slice(0, 200)];
    }
    expect(health).toEqual(want);
  }, 120_000);
});
