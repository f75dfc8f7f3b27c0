// The dashboard's login, sessions, roles, team, API keys and account settings (docs/dashboard.md
// "Logging in", "Roles"), through the local gateway over real HTTP (startGateway on port 0, fetch), with the
// member-emails worker behind a poller on the local SQS writing .eml files to this file's own outbox.
//
// The gateway serves http://127.0.0.1:<port>: the session cookie has no Secure there (loopback http), and
// the Origin a browser on this site sends is that URL. The Secure case is shared/domain/team.ts's
// sessionCookie with an https base URL (and test/unit/team.test.ts).
//
// Logins are rate limited per IP (30 per 15 minutes, for all of the run's files from 127.0.0.1): this file
// opens the role sessions through the store (test/support/dashboard.ts) and keeps its own HTTP logins few.
import { generateKeyPairSync } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { routes, type Route } from '../../functions/routes';
import { workers } from '../../functions/workers';
import { startGateway, type Gateway } from '../../infra/local/gateway';
import type { Pollers } from '../../infra/local/pollers';
import { LOCAL_SECRETS } from '../../infra/local/start';
import { readConfig, resetConfig } from '../../shared/config';
import {
  CROSS_SITE_REFUSED,
  PERMISSION_DENIED,
  SESSION_ONLY,
  sessionCookie,
  tokenHash,
  type Role,
  SESSION_MAX_SECONDS,
} from '../../shared/domain/team';
import { LOGIN_EMAIL_BURST, LOGIN_EMAIL_GAP, loginEmailAllowed } from '../../shared/email/login-links';
import { memberEmailHandler } from '../../shared/email/member-emails';
import { outboxSender } from '../../shared/email/outbox-sender';
import { approveReward } from '../../shared/flows/lifecycle';
import { DEFAULT_FRAUD_SETTINGS, FRAUD_RULES, type FraudAction, type FraudSettings } from '../../shared/domain/fraud';
import { recordFinding } from '../../shared/flows/fraud-flags';
import { createBatch } from '../../shared/flows/payouts';
import { SESSION_ENDED } from '../../shared/http/auth';
import { db, tableName } from '../../shared/store/client';
import { getItem, nowSeconds } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys, providerRegistryKeys } from '../../shared/store/table';
import { counterKey } from '../../shared/store/shards';
import * as ops from '../../shared/store/ops';
import {
  addTeamMember,
  issueLoginToken,
  LINK_REFUSED,
  listTeam,
  openSession,
  removeTeamMember,
  setTeamRole,
  teamKeys,
} from '../../shared/store/team';
import { freshEmail, loginAs, type DashboardLogin } from '../support/dashboard';
import { recordDynamoCalls, verificationClient, closeVerificationClient } from '../support/dynamo-calls';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';
import { useOwnTable } from '../support/own-table';
import { putProcessingRailBatch, putUnclaimedPaypalPayout } from '../support/rail-deliveries';

// This file Scans the table to check what requests wrote: a table of its own keeps those Scans small.
beforeAll(useOwnTable);

const LINK_SENT = { detail: 'If this address belongs to a team, a login link is on its way. It works once, for 15 minutes.' };
const LAST_OWNER = 'An account needs at least one owner: make someone else owner first.';
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

let gateway: Gateway;
let queues: TestQueues;
let pollers: Pollers;
let outbox: string;
const previous = { outbox: process.env.EMAIL_OUTBOX_DIR, loopback: process.env.WEBHOOK_ALLOW_LOOPBACK };
/** Accounts connected to a provider here: taken off the background-sync registry afterwards (their URLs are the real providers'). */
const connected: string[] = [];

beforeAll(async () => {
  outbox = mkdtempSync(join(tmpdir(), 'refloop-dashboard-'));
  process.env.EMAIL_OUTBOX_DIR = outbox;
  delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  resetConfig();
  queues = await startTestQueues();
  // Only the member-emails worker (login links and invitations are its `login-link` messages), writing .eml files.
  pollers = startTestPollers(queues, {
    workers: workers.filter((w) => w.queue === 'member-emails'),
    handlers: { MemberEmails: memberEmailHandler(() => outboxSender(outbox)) },
  });
  gateway = await startGateway({ port: 0 });
});

afterAll(async () => {
  for (const id of connected) await db().send(new DeleteCommand({ TableName: tableName(), Key: providerRegistryKeys.providerAccount(id) }));
  await gateway?.close();
  await pollers?.stop();
  await queues?.stop();
  closeVerificationClient();
  rmSync(outbox, { recursive: true, force: true });
  for (const [name, value] of [
    ['EMAIL_OUTBOX_DIR', previous.outbox],
    ['WEBHOOK_ALLOW_LOOPBACK', previous.loopback],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetConfig();
});

// ---- HTTP through the gateway ---------------------------------------------------------------------

interface Res {
  status: number;
  headers: Headers;
  /** Parsed JSON, or null. */
  body: any;
  text: string;
  setCookies: string[];
}

interface Options {
  body?: unknown;
  /** A secret API key, as `Authorization: Bearer`. */
  key?: string;
  /** A dashboard session: its token (or its login) as the `refloop_session` cookie. */
  session?: string | DashboardLogin;
  /** The Origin header; default: this site's on a request with a session, none otherwise; null: none. */
  origin?: string | null;
  headers?: Record<string, string>;
}

const site = () => gateway.url;

async function http(method: string, path: string, o: Options = {}): Promise<Res> {
  const token = typeof o.session === 'string' ? o.session : o.session?.token;
  const origin = o.origin === undefined ? (token ? site() : null) : o.origin;
  const headers: Record<string, string> = {
    ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(o.key ? { authorization: `Bearer ${o.key}` } : {}),
    ...(token ? { cookie: `refloop_session=${token}` } : {}),
    ...(origin ? { origin } : {}),
    ...o.headers,
  };
  const res = await fetch(`${site()}${path}`, {
    method,
    headers,
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
    redirect: 'manual',
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: res.status, headers: res.headers, body, text, setCookies: res.headers.getSetCookie() };
}

/**
 * A request whose Host (and X-Forwarded-*) headers say what an attacker wants: fetch will not send a
 * forged Host, so this goes through node:http. Answers [status, parsed JSON body].
 */
function forgedHost(
  method: string,
  path: string,
  host: string,
  o: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<[number, any]> {
  const url = new URL(site());
  const data = o.body === undefined ? undefined : JSON.stringify(o.body);
  const headers: Record<string, string> = {
    host,
    'x-forwarded-proto': 'https',
    'x-forwarded-host': host,
    ...(data !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(data)) } : {}),
    ...o.headers,
  };
  return new Promise((ok, fail) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.once('end', () => ok([res.statusCode ?? 0, text === '' ? null : JSON.parse(text)]));
    });
    req.once('error', fail);
    req.end(data);
  });
}

async function must(res: Promise<Res>, status: number): Promise<any> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r.body;
}

/** [status, body] of an answer, for one-line expectations. */
const answer = async (res: Promise<Res>) => {
  const r = await res;
  return [r.status, r.body];
};

// ---- the outbox -----------------------------------------------------------------------------------

interface Mail {
  file: string;
  to: string;
  subject: string;
  text: string;
  /** The token of the login link in it. */
  token: string | null;
  link: string | null;
}

function mails(): Mail[] {
  return readdirSync(outbox)
    .filter((f) => f.endsWith('.eml'))
    .map((file) => {
      const text = readFileSync(join(outbox, file), 'utf8');
      const link = /(\S+\/app\/login#token=([A-Za-z0-9_-]+))/.exec(text);
      return {
        file,
        to: /^To: (.*)$/m.exec(text)?.[1]?.trim() ?? '',
        subject: /^Subject: (.*)$/m.exec(text)?.[1]?.trim() ?? '',
        text,
        link: link?.[1] ?? null,
        token: link?.[2] ?? null,
      };
    });
}

const mailsTo = (address: string) => mails().filter((m) => m.to === address);

/** Waits until the member-emails queue is empty (every queued link handled). */
const drained = () => queues.drained(['member-emails']);

/** Waits for `n` emails to an address. */
const awaitMails = (address: string, n = 1) =>
  pollUntil(() => (mailsTo(address).length >= n ? mailsTo(address) : null), { timeoutMs: 15_000 });

// ---- store helpers --------------------------------------------------------------------------------

/** Moves an item's `expires_at` (a login link's or a session's) into the past: TTL deletion is lazy. */
async function expire(key: { pk: string; sk: string }): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'SET expires_at = :past',
      ExpressionAttributeValues: { ':past': nowSeconds() - 1 },
    }),
  );
}

/** The account's items (`A#<acct>...`) as canonical JSON, rate-limit windows left out: compared before and after refused requests. */
async function snapshot(accountId: string): Promise<string[]> {
  const out: string[] = [];
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
    for (const item of page.Items ?? []) if (item.type !== 'RateWindow') out.push(JSON.stringify(item, Object.keys(item).sort()));
    start = page.LastEvaluatedKey;
  } while (start);
  return out.sort();
}

/** A fresh account with a campaign, a member with a payout email and a referral (through its API key). */
async function tenant() {
  const { accountId, apiKey } = await newAccount('unlimited');
  const name = String((await getItem(keys.account(accountId)))?.name);
  return { accountId, apiKey, name };
}

/** Runs `fn` with WEBHOOK_ALLOW_LOOPBACK on (as under npm start): loopback webhook URLs, emulator API URLs. */
async function withLoopback<T>(fn: () => Promise<T>): Promise<T> {
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  resetConfig();
  try {
    return await fn();
  } finally {
    delete process.env.WEBHOOK_ALLOW_LOOPBACK;
    resetConfig();
  }
}

let serial = 0;
const unique = (p: string) => `${p}-${++serial}-${Date.now().toString(36)}`;

/** A pending commission of 4.00 (as the reward worker records it) for a new member with a payout email; approved and batched when asked. */
async function commission(t: { accountId: string; apiKey: string }, o: { approve?: boolean; batch?: boolean } = {}) {
  const campaign = await must(
    http('POST', '/v1/campaigns/', {
      key: t.apiKey,
      body: { name: unique('Money'), allows_commission: true, commission_amount: '4.00', hold_days: 0 },
    }),
    201,
  );
  const who = unique('payee');
  const member = await must(
    http('POST', '/v1/members/', {
      key: t.apiKey,
      body: { identifier: who, email: `${who}@example.com`, campaign: { id: campaign.id }, payout_email: `${who}@pay.example.com` },
    }),
    201,
  );
  const referral = await must(
    http('POST', '/v1/referrals/', { key: t.apiKey, body: { user_identifier: unique('user'), member_code: member.code } }),
    200,
  );
  const stored = toReferral(await getItem(keys.referral(t.accountId, referral.id)));
  if (!stored) throw new Error('fixture referral missing');
  const rewardId = (
    await recordRewards(
      t.accountId,
      stored,
      [{ payment_id: Date.now() * 100 + ++serial, type: 'commission', amount: 400, currency: 'USD' }],
      false,
      true,
    )
  ).rewards[0]!.id;
  const ids = {
    campaignId: campaign.id as string,
    memberId: member.id as string,
    referralId: referral.id as string,
    rewardId,
    payoutId: undefined as string | undefined,
    batchId: undefined as string | undefined,
  };
  if (!o.approve) return ids;
  ids.payoutId = (await approveReward(t.accountId, rewardId)).payout_id!;
  if (o.batch) ids.batchId = (await createBatch(t.accountId, { format: 'csv', currency: 'USD', payout_ids: [ids.payoutId] })).id;
  return ids;
}

/**
 * A duplicate_ip flag on a new commission's referral, recorded by the real flow (as the FraudScreen worker
 * records a finding): holding that pending commission, unless `action` is `flag`.
 */
async function fraudFlag(t: { accountId: string; apiKey: string }, action: FraudAction = 'hold') {
  const c = await commission(t);
  const settings = Object.fromEntries(
    FRAUD_RULES.map((rule) => [rule, { ...DEFAULT_FRAUD_SETTINGS[rule], action }]),
  ) as unknown as FraudSettings;
  const flag = await recordFinding(
    t.accountId,
    {
      rule: 'duplicate_ip',
      subject: { type: 'referral', id: c.referralId },
      member_id: c.memberId,
      detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
      evidence: { referral_ids: [c.referralId], figures: { referrals: 4 } },
      dedupe_key: `duplicate_ip#referral#${c.referralId}`,
    },
    settings,
  );
  if (!flag) throw new Error('fixture flag not recorded');
  return { ...c, flagId: flag.id };
}

// ---- login links and sessions ---------------------------------------------------------------------

describe('login links', () => {
  it('202 with the same body for a team address and an unknown one; only the team address gets a link, and it opens a session', async () => {
    const t = await tenant();
    const dana = freshEmail('dana');
    await addTeamMember(t.accountId, dana, 'owner');
    const stranger = freshEmail('stranger');

    // The unknown address first: once the team address's mail is out and the queue is empty, both were handled.
    const unknown = await http('POST', '/auth/login-links/', { body: { email: stranger } });
    const known = await http('POST', '/auth/login-links/', { body: { email: dana.toUpperCase() } });
    for (const r of [unknown, known]) {
      expect([r.status, r.body]).toEqual([202, LINK_SENT]);
      expect(r.setCookies).toEqual([]);
    }
    expect(known.text).toBe(unknown.text);

    const [mail] = await awaitMails(dana);
    await drained();
    expect(mailsTo(stranger)).toEqual([]);
    expect(mailsTo(dana)).toHaveLength(1);
    expect(mail!.subject).toBe(`Your Refloop login link for ${t.name}`);
    expect(mail!.link).toBe(`${site()}/app/login#token=${mail!.token}`);
    expect(mail!.token).toMatch(TOKEN);
    // Stored as a digest only: the item is keyed by it and holds no token.
    const link = await getItem(teamKeys.login(tokenHash(mail!.token!)));
    expect(link).toMatchObject({ type: 'LoginLink', account_id: t.accountId });
    expect(JSON.stringify(link)).not.toContain(mail!.token!);

    const opened = await http('POST', '/auth/sessions/', { body: { token: mail!.token } });
    expect(opened.status).toBe(201);
    expect(opened.body).toEqual({
      account_id: t.accountId,
      account_name: t.name,
      email: dana,
      role: 'owner',
      expires_at: expect.any(Number),
    });
    expect(Math.abs(opened.body.expires_at - (nowSeconds() + 12 * 3600))).toBeLessThanOrEqual(5);
    expect(opened.headers.get('cache-control')).toBe('no-store');
    expect(opened.setCookies).toHaveLength(1);
    const [cookie] = opened.setCookies;
    // Loopback http: no Secure (a browser would not send it back); everywhere else Secure.
    expect(cookie).toMatch(/^refloop_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    const token = /^refloop_session=([^;]+)/.exec(cookie!)![1]!;
    expect(token).not.toBe(mail!.token);
    expect(sessionCookie(token, 'https://refloop.example')).toBe(`refloop_session=${token}; Path=/; HttpOnly; SameSite=Strict; Secure`);
    expect(sessionCookie(token, site())).toBe(cookie);

    // The cookie authenticates /v1/ reads, and the current session answers who is logged in.
    expect((await http('GET', '/v1/campaigns/', { session: token })).status).toBe(200);
    const current = await http('GET', '/auth/sessions/current/', { session: token });
    expect([current.status, current.body]).toEqual([200, opened.body]);
    expect(current.headers.get('cache-control')).toBe('no-store');

    // Single use: the same token again is refused.
    expect(await answer(http('POST', '/auth/sessions/', { body: { token: mail!.token } }))).toEqual([401, { detail: LINK_REFUSED }]);
    expect(await getItem(teamKeys.login(tokenHash(mail!.token!)))).toBeUndefined();
  });

  it('an address in two teams gets one link per team, each opening its own account', async () => {
    const [a, b] = [await tenant(), await tenant()];
    const sam = freshEmail('sam');
    await addTeamMember(a.accountId, sam, 'viewer');
    await addTeamMember(b.accountId, sam, 'finance');
    expect((await http('POST', '/auth/login-links/', { body: { email: sam } })).status).toBe(202);
    const two = await awaitMails(sam, 2);
    expect(two.map((m) => m.subject).sort()).toEqual(
      [`Your Refloop login link for ${a.name}`, `Your Refloop login link for ${b.name}`].sort(),
    );
    const sessions = [];
    for (const m of two) sessions.push(await must(http('POST', '/auth/sessions/', { body: { token: m.token } }), 201));
    expect(sessions.map((s) => [s.account_id, s.role]).sort()).toEqual(
      [
        [a.accountId, 'viewer'],
        [b.accountId, 'finance'],
      ].sort(),
    );
  });

  it('an expired link, a malformed token (refused without a read) and bad bodies', async () => {
    const t = await tenant();
    const member = await addTeamMember(t.accountId, freshEmail('late'), 'admin');
    const { token } = await issueLoginToken(t.accountId, member.id);
    await expire(teamKeys.login(tokenHash(token)));
    expect(await answer(http('POST', '/auth/sessions/', { body: { token } }))).toEqual([401, { detail: LINK_REFUSED }]);

    // No queued link is being handled meanwhile: every call recorded is this request's.
    await drained();
    const recording = recordDynamoCalls();
    const malformed = await http('POST', '/auth/sessions/', { body: { token: `${token.slice(0, 40)}!!!` } }).finally(() =>
      recording.stop(),
    );
    expect([malformed.status, malformed.body]).toEqual([401, { detail: LINK_REFUSED }]);
    // Only the per-IP rate-limit window is counted; no item is read.
    expect(recording.calls.map((c) => c.command)).toEqual(['UpdateItem']);

    expect(await answer(http('POST', '/auth/sessions/', { body: {} }))).toEqual([400, { token: ['This field is required.'] }]);
    // A number is text to the field (as everywhere in the API), and not a token.
    expect(await answer(http('POST', '/auth/sessions/', { body: { token: 5 } }))).toEqual([401, { detail: LINK_REFUSED }]);
    expect((await http('POST', '/auth/sessions/', { body: { token: ['x'] } })).status).toBe(400);
    expect(await answer(http('POST', '/auth/login-links/', { body: { email: 'not-an-address' } }))).toEqual([
      400,
      { email: ['Enter a valid email address.'] },
    ]);
    expect((await http('POST', '/auth/login-links/', { body: {} })).status).toBe(400);
    const notJson = await http('POST', '/auth/login-links/', { headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(notJson.status).toBe(415);
  });
});

describe('sessions', () => {
  it('log out (with Origin) ends the session: the cookie is cleared and then refused; logging out twice is fine', async () => {
    const t = await tenant();
    const owner = await loginAs(t.accountId, 'owner');
    expect((await http('GET', '/v1/members/', { session: owner })).status).toBe(200);

    // Without this site's Origin the logout is refused, and the session lives on.
    expect(await answer(http('DELETE', '/auth/sessions/current/', { session: owner, origin: 'http://evil.example' }))).toEqual([
      403,
      { detail: CROSS_SITE_REFUSED },
    ]);
    expect(await answer(http('DELETE', '/auth/sessions/current/', { session: owner, origin: null }))).toEqual([
      403,
      { detail: CROSS_SITE_REFUSED },
    ]);
    expect((await http('GET', '/auth/sessions/current/', { session: owner })).status).toBe(200);

    const out = await http('DELETE', '/auth/sessions/current/', { session: owner });
    expect([out.status, out.text]).toEqual([204, '']);
    expect(out.setCookies).toEqual(['refloop_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0']);
    expect(await answer(http('GET', '/v1/members/', { session: owner }))).toEqual([401, { detail: SESSION_ENDED }]);
    expect(await answer(http('GET', '/auth/sessions/current/', { session: owner }))).toEqual([401, { detail: SESSION_ENDED }]);
    expect(await getItem(teamKeys.session(owner.session.hash))).toBeUndefined();
    // Twice, and without any cookie: 204.
    expect((await http('DELETE', '/auth/sessions/current/', { session: owner })).status).toBe(204);
    expect((await http('DELETE', '/auth/sessions/current/')).status).toBe(204);
    // No cookie at all on the session endpoint: 401.
    expect(await answer(http('GET', '/auth/sessions/current/'))).toEqual([
      401,
      { detail: 'Authentication credentials were not provided.' },
    ]);
  });

  it('an expired session (its item still there: TTL is lazy) is refused; a used one slides its expiry at most every 300 s', async () => {
    const t = await tenant();
    const gone = await loginAs(t.accountId, 'admin');
    await expire(teamKeys.session(gone.session.hash));
    expect(await getItem(teamKeys.session(gone.session.hash))).toBeDefined();
    expect(await answer(http('GET', '/v1/campaigns/', { session: gone }))).toEqual([401, { detail: SESSION_ENDED }]);
    expect(await answer(http('GET', '/auth/sessions/current/', { session: gone }))).toEqual([401, { detail: SESSION_ENDED }]);

    const used = await loginAs(t.accountId, 'viewer');
    const key = teamKeys.session(used.session.hash);
    // Last slid 301 s ago, expiring in an hour: the next request moves the expiry to 12 hours from now.
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET slid_at = :s, expires_at = :e',
        ExpressionAttributeValues: { ':s': nowSeconds() - 301, ':e': nowSeconds() + 3600 },
      }),
    );
    const slid = await must(http('GET', '/auth/sessions/current/', { session: used }), 200);
    expect(Math.abs(slid.expires_at - (nowSeconds() + 12 * 3600))).toBeLessThanOrEqual(5);
    expect((await getItem(key))?.expires_at).toBe(slid.expires_at);
    // Within 300 s of that slide, requests read the session and write nothing.
    await must(http('GET', '/auth/sessions/current/', { session: used }), 200);
    const recording = recordDynamoCalls({ filter: (c) => c.command === 'UpdateItem' && (c.table ?? '') !== '' });
    await must(http('GET', '/auth/sessions/current/', { session: used }), 200).finally(() => recording.stop());
    expect(recording.calls).toEqual([]);

    // However much it is used, a session ends 7 days after its login: the slide stops there, and then it is refused.
    const weekOld = nowSeconds() - SESSION_MAX_SECONDS + 600;
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET created_at = :c, slid_at = :s',
        ExpressionAttributeValues: { ':c': weekOld, ':s': nowSeconds() - 301 },
      }),
    );
    const capped = await must(http('GET', '/auth/sessions/current/', { session: used }), 200);
    expect(capped.expires_at).toBe(weekOld + SESSION_MAX_SECONDS);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET expires_at = :e',
        ExpressionAttributeValues: { ':e': nowSeconds() - 1 },
      }),
    );
    expect((await http('GET', '/auth/sessions/current/', { session: used })).status).toBe(401);
  });

  it("a cookie and an API key together: the request is the key's", async () => {
    const t = await tenant();
    const viewer = await loginAs(t.accountId, 'viewer');
    // A viewer may not create a campaign; the key may, with no Origin needed.
    expect((await http('POST', '/v1/campaigns/', { session: viewer, body: { name: 'by viewer' } })).status).toBe(403);
    expect((await http('POST', '/v1/campaigns/', { session: viewer, key: t.apiKey, origin: null, body: { name: 'by key' } })).status).toBe(
      201,
    );
  });
});

describe("CSRF: a session's writes need this site's Origin", () => {
  it("a foreign Origin or none: 403 and nothing written; this site's Origin: the write happens", async () => {
    const t = await tenant();
    const owner = await loginAs(t.accountId, 'owner');
    const before = await snapshot(t.accountId);
    for (const origin of ['http://evil.example', null, `${site()}.evil.example`, site().replace('127.0.0.1', 'localhost'), 'null']) {
      for (const [method, path, body] of [
        ['POST', '/v1/campaigns/', { name: 'csrf' }],
        ['PATCH', '/v1/account/', { name: 'csrf' }],
        ['POST', '/v1/api-keys/', { name: 'csrf' }],
        ['POST', '/v1/team/', { email: freshEmail('csrf'), role: 'owner' }],
      ] as const) {
        const res = await http(method, path, { session: owner, origin, body });
        expect({ origin, path, status: res.status, body: res.body }).toEqual({
          origin,
          path,
          status: 403,
          body: { detail: CROSS_SITE_REFUSED },
        });
      }
    }
    expect(await snapshot(t.accountId)).toEqual(before);
    // Reads need no Origin.
    expect((await http('GET', '/v1/campaigns/', { session: owner, origin: null })).status).toBe(200);
    expect((await http('POST', '/v1/campaigns/', { session: owner, body: { name: 'same site' } })).status).toBe(201);
  });
});

// ---- roles ----------------------------------------------------------------------------------------

describe('roles', () => {
  let t: Awaited<ReturnType<typeof tenant>>;
  let logins: Record<Role, DashboardLogin>;

  beforeAll(async () => {
    t = await tenant();
    logins = {} as Record<Role, DashboardLogin>;
    for (const role of ['owner', 'admin', 'finance', 'viewer'] as const) logins[role] = await loginAs(t.accountId, role);
  });

  it("a viewer is refused every write of every API-key and session route (403, this site's Origin), and nothing changes", async () => {
    const money = await commission(t, { approve: true, batch: true });
    const held = await fraudFlag(t);
    const hook = await withLoopback(() =>
      must(http('POST', '/v1/webhook-endpoints/', { key: t.apiKey, body: { url: 'http://127.0.0.1:9/hook' } }), 201),
    );
    const keyRecord = (await must(http('GET', '/v1/api-keys/', { session: logins.owner }), 200)).results[0];
    const ids: Record<string, string> = {
      referrals: money.referralId,
      campaigns: money.campaignId,
      members: money.memberId,
      rewards: money.rewardId,
      payouts: money.payoutId!,
      'payout-batches': money.batchId!,
      'webhook-endpoints': hook.id,
      team: logins.admin.member.id,
      'api-keys': keyRecord.id,
      // Refused before any lookup: an application id of the right shape is enough.
      applications: `app_${'0'.repeat(32)}`,
      // /v1/account/payout-rails/{kind}/: a rail's kind.
      account: 'paypal',
      'fraud-flags': held.flagId,
    };
    const bodies: Record<string, unknown> = {
      CreateReferral: { user_identifier: 'by-viewer', member_code: 'X' },
      ConvertReferral: { subscription_id: 1 },
      ConvertReferralV1: { subscription_id: 1 },
      CreateCampaign: { name: 'by viewer' },
      UpdateCampaign: { name: 'by viewer' },
      CreateMember: { identifier: 'by-viewer', email: 'v@example.com' },
      UpdateMember: { first_name: 'Mallory' },
      CreateWebhookEndpoint: { url: 'https://hooks.example/v' },
      UpdateWebhookEndpoint: { enabled: false },
      VoidReward: { reason: 'viewer' },
      MarkPayoutPaid: { reference: 'viewer' },
      MarkPayoutFailed: { reason: 'viewer' },
      CancelPayout: { reason: 'viewer' },
      CreatePayoutBatch: { format: 'csv', currency: 'USD' },
      MarkPayoutBatchPaid: {},
      InviteTeamMember: { email: freshEmail('by-viewer'), role: 'owner' },
      UpdateTeamMember: { role: 'viewer' },
      CreateApiKey: { name: 'by viewer' },
      UpdateAccount: { name: 'by viewer', embed_origins: ['https://evil.example'] },
      SetProviderConnection: { kind: 'stripe', secret_key: 'sk_test_byviewer123', webhook_secret: 'whsec_byviewer123' },
      SetPayoutRail: { client_id: 'by-viewer', client_secret: 'by-viewer', webhook_id: 'by-viewer' },
      CreateMemberLink: { slug: 'by-viewer' },
      RejectApplication: { reason: 'viewer' },
      UpdateFraudRules: { duplicate_ip: { action: 'off' } },
      PreviewFraudRule: { rule: 'duplicate_ip' },
      ReleaseFraudFlag: { note: 'viewer' },
      VoidFraudFlag: {},
      ReviewFraudFlag: {},
    };
    const writes = routes.filter((r) => ['api-key', 'session'].includes(r.auth ?? 'api-key') && !['GET', 'OPTIONS'].includes(r.method));
    expect(writes.length).toBeGreaterThanOrEqual(27);
    const path = (r: Route) =>
      r.path.replace(/\{(\w+)\}/g, () => {
        const resource = r.path.startsWith('/referrals/') ? 'referrals' : (r.path.split('/')[2] as string);
        // A reward's release: the held one.
        const id = r.name === 'ReleaseReward' ? held.rewardId : ids[resource];
        if (!id) throw new Error(`no id for ${r.name}`);
        return id;
      });
    const before = await snapshot(t.accountId);
    const refused: string[] = [];
    for (const r of writes) {
      const res = await http(r.method, path(r), {
        session: logins.viewer,
        ...(bodies[r.name] !== undefined ? { body: bodies[r.name] } : {}),
      });
      expect({ route: r.name, status: res.status, body: res.body }).toEqual({
        route: r.name,
        status: 403,
        body: { detail: PERMISSION_DENIED },
      });
      refused.push(r.name);
    }
    expect(refused).toEqual(
      expect.arrayContaining([
        'CreateCampaign',
        'ApproveReward',
        'CreatePayoutBatch',
        'InviteTeamMember',
        'CreateApiKey',
        'RevokeApiKey',
        'UpdateAccount',
        'SetProviderConnection',
        'SetPayoutRail',
        'DeletePayoutRail',
        'DeleteReferral',
        'ResendPayout',
        'ReconcilePayoutBatch',
        'UpdateFraudRules',
        'PreviewFraudRule',
        'ReleaseFraudFlag',
        'VoidFraudFlag',
        'ReviewFraudFlag',
        'ReleaseReward',
      ]),
    );
    expect(await snapshot(t.accountId)).toEqual(before);
    // The same viewer reads everything an API key reads, the account's settings included.
    for (const p of [
      '/v1/campaigns/',
      '/v1/rewards/',
      '/v1/payouts/',
      `/v1/payout-batches/${money.batchId}/`,
      '/v1/reports/overview/',
      '/v1/account/',
      '/v1/fraud-rules/',
      '/v1/fraud-flags/?status=open',
      `/v1/fraud-flags/${held.flagId}/`,
    ]) {
      expect({ p, status: (await http('GET', p, { session: logins.viewer })).status }).toEqual({ p, status: 200 });
    }
    // But not the team or the keys (owner only).
    expect(await answer(http('GET', '/v1/team/', { session: logins.viewer }))).toEqual([403, { detail: PERMISSION_DENIED }]);
    // Nor the payout rails' connections (owner or admin).
    expect(await answer(http('GET', '/v1/account/payout-rails/', { session: logins.viewer }))).toEqual([
      403,
      { detail: PERMISSION_DENIED },
    ]);
  });

  it('finance approves and voids rewards and acts on payouts and batches, but may not create a campaign', async () => {
    const as = logins.finance;
    const a = await commission(t);
    const approved = await must(http('POST', `/v1/rewards/${a.rewardId}/approve/`, { session: as }), 200);
    expect(approved).toMatchObject({ id: a.rewardId, status: 'approved', payout_id: expect.any(String) });
    const v = await commission(t);
    expect(await must(http('POST', `/v1/rewards/${v.rewardId}/void/`, { session: as, body: { reason: 'duplicate' } }), 200)).toMatchObject({
      status: 'voided',
    });
    expect(
      await must(http('POST', `/v1/payouts/${approved.payout_id}/mark-paid/`, { session: as, body: { reference: 'WISE-1' } }), 200),
    ).toMatchObject({ status: 'paid' });

    const b = await commission(t, { approve: true });
    const batch = await must(
      http('POST', '/v1/payout-batches/', { session: as, body: { format: 'csv', currency: 'USD', payout_ids: [b.payoutId] } }),
      201,
    );
    expect(await must(http('POST', `/v1/payout-batches/${batch.id}/mark-paid/`, { session: as, body: {} }), 200)).toMatchObject({
      status: 'paid',
    });
    const c = await commission(t, { approve: true, batch: true });
    expect(
      await must(http('POST', `/v1/payouts/${c.payoutId}/mark-failed/`, { session: as, body: { reason: 'bounced' } }), 200),
    ).toMatchObject({ status: 'failed' });
    const d = await commission(t, { approve: true, batch: true });
    expect((await http('POST', `/v1/payouts/${d.payoutId}/cancel/`, { session: as, body: { reason: 'not sent' } })).status).toBe(200);
    // The payout rails' money routes: an unclaimed PayPal payout sent again, a processing rail batch reconciled.
    const unclaimed = await putUnclaimedPaypalPayout(t.accountId);
    expect(await must(http('POST', `/v1/payouts/${unclaimed.id}/resend/`, { session: as }), 202)).toMatchObject({
      id: unclaimed.id,
      status: 'processing',
    });
    const railBatch = await putProcessingRailBatch(t.accountId);
    expect(await must(http('POST', `/v1/payout-batches/${railBatch}/reconcile/`, { session: as }), 202)).toEqual({
      batch_id: railBatch,
      queued: true,
    });

    for (const [method, path, body] of [
      ['POST', '/v1/campaigns/', { name: 'by finance' }],
      ['PATCH', `/v1/members/${a.memberId}/`, { first_name: 'F' }],
      ['PATCH', '/v1/account/', { name: 'by finance' }],
      ['POST', '/v1/webhook-endpoints/', { url: 'https://hooks.example/f' }],
    ] as const) {
      expect({ path, answer: await answer(http(method, path, { session: as, body })) }).toEqual({
        path,
        answer: [403, { detail: PERMISSION_DENIED }],
      });
    }
    expect((await http('GET', '/v1/payouts/summary/', { session: as })).status).toBe(200);
  });

  it('fraud: finance resolves flags and releases held rewards (money) and reads the rules, but may neither change nor preview them', async () => {
    const as = logins.finance;
    const released = await fraudFlag(t);
    expect(
      await must(http('POST', `/v1/fraud-flags/${released.flagId}/release/`, { session: as, body: { note: 'checked' } }), 200),
    ).toMatchObject({ id: released.flagId, status: 'released', held_count: 0, note: 'checked' });
    // hold_days 0: released past its hold, approved at once.
    expect((await must(http('GET', `/v1/rewards/${released.rewardId}/`, { session: as }), 200)).status).toBe('approved');
    const voided = await fraudFlag(t);
    expect(await must(http('POST', `/v1/fraud-flags/${voided.flagId}/void/`, { session: as, body: {} }), 200)).toMatchObject({
      status: 'voided',
      held_count: 0,
    });
    expect((await must(http('GET', `/v1/rewards/${voided.rewardId}/`, { session: as }), 200)).status).toBe('voided');
    const reviewed = await fraudFlag(t, 'flag');
    expect(await must(http('POST', `/v1/fraud-flags/${reviewed.flagId}/review/`, { session: as, body: {} }), 200)).toMatchObject({
      status: 'reviewed',
    });
    const single = await fraudFlag(t);
    expect(await must(http('POST', `/v1/rewards/${single.rewardId}/release/`, { session: as }), 200)).toMatchObject({
      id: single.rewardId,
      status: 'approved',
    });
    expect((await http('GET', '/v1/fraud-rules/', { session: as })).status).toBe(200);
    expect((await http('GET', '/v1/fraud-flags/', { session: as })).status).toBe(200);
    for (const [method, path, body] of [
      ['PATCH', '/v1/fraud-rules/', { duplicate_ip: { action: 'off' } }],
      ['POST', '/v1/fraud-rules/preview/', { rule: 'duplicate_ip' }],
    ] as const) {
      expect({ path, answer: await answer(http(method, path, { session: as, body })) }).toEqual({
        path,
        answer: [403, { detail: PERMISSION_DENIED }],
      });
    }
  });

  it('fraud: admin and owner change and preview the rules and resolve flags; an API key does too', async () => {
    for (const as of [logins.admin, logins.owner]) {
      const patched = await must(http('PATCH', '/v1/fraud-rules/', { session: as, body: { disposable_email: { action: 'hold' } } }), 200);
      expect(patched.disposable_email).toEqual({ action: 'hold' });
      expect(await must(http('POST', '/v1/fraud-rules/preview/', { session: as, body: { rule: 'disposable_email' } }), 200)).toMatchObject({
        would_flag: expect.any(Number),
      });
      const f = await fraudFlag(t);
      expect((await must(http('POST', `/v1/fraud-flags/${f.flagId}/release/`, { session: as, body: {} }), 200)).status).toBe('released');
    }
    expect(
      (await must(http('PATCH', '/v1/fraud-rules/', { key: t.apiKey, body: { disposable_email: { action: 'flag' } } }), 200))
        .disposable_email,
    ).toEqual({
      action: 'flag',
    });
    expect((await http('POST', '/v1/fraud-rules/preview/', { key: t.apiKey, body: { rule: 'velocity' } })).status).toBe(200);
    const f = await fraudFlag(t);
    expect((await must(http('POST', `/v1/rewards/${f.rewardId}/release/`, { key: t.apiKey }), 200)).status).toBe('approved');
    expect((await must(http('POST', `/v1/fraud-flags/${f.flagId}/review/`, { key: t.apiKey, body: {} }), 200)).status).toBe('reviewed');
  });

  it('admin does everything but the team and the API keys', async () => {
    const as = logins.admin;
    expect((await http('POST', '/v1/campaigns/', { session: as, body: { name: 'by admin' } })).status).toBe(201);
    const a = await commission(t);
    expect((await http('POST', `/v1/rewards/${a.rewardId}/approve/`, { session: as })).status).toBe(200);
    expect((await http('PATCH', '/v1/account/', { session: as, body: { js_referrals: 'confirm' } })).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', '/v1/team/', undefined],
      ['POST', '/v1/team/', { email: freshEmail('by-admin'), role: 'viewer' }],
      ['PATCH', `/v1/team/${logins.viewer.member.id}/`, { role: 'owner' }],
      ['DELETE', `/v1/team/${logins.viewer.member.id}/`, undefined],
      ['GET', '/v1/api-keys/', undefined],
      ['POST', '/v1/api-keys/', { name: 'by admin' }],
    ] as const) {
      expect({ method, path, answer: await answer(http(method, path, { session: as, ...(body ? { body } : {}) })) }).toEqual({
        method,
        path,
        answer: [403, { detail: PERMISSION_DENIED }],
      });
    }
  });

  it('owner does all of it', async () => {
    const as = logins.owner;
    expect((await http('POST', '/v1/campaigns/', { session: as, body: { name: 'by owner' } })).status).toBe(201);
    const a = await commission(t);
    expect((await http('POST', `/v1/rewards/${a.rewardId}/approve/`, { session: as })).status).toBe(200);
    const team = await must(http('GET', '/v1/team/', { session: as }), 200);
    // Oldest first (then by address, for members added in the same second).
    expect(team.results.map((m: { email: string; role: string }) => [m.email, m.role]).sort()).toEqual(
      (['owner', 'admin', 'finance', 'viewer'] as const).map((role) => [logins[role].member.email, role]).sort(),
    );
    expect(team).toMatchObject({ count: 4, next: null, previous: null });
    expect((await http('GET', '/v1/api-keys/', { session: as })).status).toBe(200);
    expect((await http('PATCH', '/v1/account/', { session: as, body: { js_referrals: 'open' } })).status).toBe(200);
  });
});

// ---- the team -------------------------------------------------------------------------------------

describe('team', () => {
  it('invite: 201, and the invitee gets a login link for that account; a duplicate address is a 400 on email', async () => {
    const t = await tenant();
    const owner = await loginAs(t.accountId, 'owner');
    const sam = freshEmail('sam');
    const invited = await http('POST', '/v1/team/', { session: owner, body: { email: sam, role: 'finance' } });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({
      id: expect.stringMatching(/^tm_[0-9a-f]{24}$/),
      email: sam,
      role: 'finance',
      created_at: expect.any(Number),
      last_login_at: null,
    });

    const [mail] = await awaitMails(sam);
    expect(mail!.subject).toBe(`You are invited to ${t.name} on Refloop`);
    expect(mail!.text).toContain(`${owner.member.email} invited you to run the ${t.name} referral programme on Refloop.`);
    expect(mail!.link).toBe(`${site()}/app/login#token=${mail!.token}`);
    const session = await must(http('POST', '/auth/sessions/', { body: { token: mail!.token } }), 201);
    expect(session).toMatchObject({ account_id: t.accountId, email: sam, role: 'finance' });
    const listed = await must(http('GET', '/v1/team/', { session: owner }), 200);
    expect(listed.results.find((m: { id: string }) => m.id === invited.body.id)).toMatchObject({ last_login_at: expect.any(Number) });

    for (const email of [sam, sam.replace(/^sam/, 'SAM'), ` ${sam}`]) {
      expect({ email, answer: await answer(http('POST', '/v1/team/', { session: owner, body: { email, role: 'viewer' } })) }).toEqual({
        email,
        answer: [400, { email: ['This address is already in the team.'] }],
      });
    }
    expect(await answer(http('POST', '/v1/team/', { session: owner, body: { email: freshEmail(), role: 'boss' } }))).toEqual([
      400,
      { role: ['"boss" is not a valid choice.'] },
    ]);
  });

  it("a role change reaches the member's open session at once; a removal ends all their sessions", async () => {
    const t = await tenant();
    const owner = await loginAs(t.accountId, 'owner');
    const viewer = await loginAs(t.accountId, 'viewer');
    const second = await openSession((await issueLoginToken(t.accountId, viewer.member.id)).token);

    expect((await http('POST', '/v1/campaigns/', { session: viewer, body: { name: 'before' } })).status).toBe(403);
    expect(await must(http('PATCH', `/v1/team/${viewer.member.id}/`, { session: owner, body: { role: 'admin' } }), 200)).toMatchObject({
      id: viewer.member.id,
      role: 'admin',
    });
    // The very next request has the new role, in both of the member's sessions.
    expect((await http('POST', '/v1/campaigns/', { session: viewer, body: { name: 'after' } })).status).toBe(201);
    expect((await must(http('GET', '/auth/sessions/current/', { session: second.token }), 200)).role).toBe('admin');

    expect((await http('DELETE', `/v1/team/${viewer.member.id}/`, { session: owner })).status).toBe(204);
    for (const token of [viewer.token, second.token]) {
      expect(await answer(http('GET', '/v1/campaigns/', { session: token }))).toEqual([401, { detail: SESSION_ENDED }]);
    }
    expect((await must(http('GET', '/v1/team/', { session: owner }), 200)).results.map((m: { id: string }) => m.id)).toEqual([
      owner.member.id,
    ]);
    // Gone: unknown ids, and another account's member ids, are 404.
    expect(await answer(http('DELETE', `/v1/team/${viewer.member.id}/`, { session: owner }))).toEqual([404, { detail: 'Not found.' }]);
    expect(await answer(http('PATCH', `/v1/team/${viewer.member.id}/`, { session: owner, body: { role: 'viewer' } }))).toEqual([
      404,
      { detail: 'Not found.' },
    ]);
    const other = await tenant();
    const stranger = await loginAs(other.accountId, 'viewer');
    expect(await answer(http('PATCH', `/v1/team/${stranger.member.id}/`, { session: owner, body: { role: 'owner' } }))).toEqual([
      404,
      { detail: 'Not found.' },
    ]);
    expect(await answer(http('DELETE', `/v1/team/${stranger.member.id}/`, { session: owner }))).toEqual([404, { detail: 'Not found.' }]);
    expect((await http('GET', '/v1/campaigns/', { session: stranger })).status).toBe(200);
  });

  it('the last owner can be neither demoted (400 on role) nor removed (409); with a second owner both work', async () => {
    const t = await tenant();
    const owner = await loginAs(t.accountId, 'owner');
    expect(await answer(http('PATCH', `/v1/team/${owner.member.id}/`, { session: owner, body: { role: 'admin' } }))).toEqual([
      400,
      { role: [LAST_OWNER] },
    ]);
    expect(await answer(http('DELETE', `/v1/team/${owner.member.id}/`, { session: owner }))).toEqual([409, { detail: LAST_OWNER }]);
    expect((await must(http('GET', '/auth/sessions/current/', { session: owner }), 200)).role).toBe('owner');

    const other = await loginAs(t.accountId, 'admin');
    expect(await must(http('PATCH', `/v1/team/${other.member.id}/`, { session: owner, body: { role: 'owner' } }), 200)).toMatchObject({
      role: 'owner',
    });
    expect(await must(http('PATCH', `/v1/team/${owner.member.id}/`, { session: owner, body: { role: 'admin' } }), 200)).toMatchObject({
      role: 'admin',
    });
    // Demoted at once: the team is no longer theirs to see.
    expect((await http('GET', '/v1/team/', { session: owner })).status).toBe(403);
    expect(await answer(http('DELETE', `/v1/team/${other.member.id}/`, { session: other }))).toEqual([409, { detail: LAST_OWNER }]);
    expect((await http('DELETE', `/v1/team/${owner.member.id}/`, { session: other })).status).toBe(204);
  });

  /** The owners the team lists, and the owners counter the last-owner guard conditions on. */
  async function owners(accountId: string, owner: DashboardLogin): Promise<{ listed: number; counter: number }> {
    const team = await must(http('GET', '/v1/team/', { session: owner }), 200);
    const counter = await getItem(counterKey(accountId, 'owners', 0));
    return { listed: team.results.filter((m: { role: string }) => m.role === 'owner').length, counter: Number(counter?.n ?? 0) };
  }

  it("the interleavings that broke the guard, made certain: a role change commits between a removal's read and its write", async () => {
    /** Runs `between` once, right before the removal's transaction (the one deleting `memberId`) is sent. */
    function interleave(memberId: string, between: () => Promise<unknown>) {
      const real = ops.transact;
      let done = false;
      return jest.spyOn(ops, 'transact').mockImplementation(async (items, attempts) => {
        const first = items[0] as { Delete?: { Key?: { sk?: string } } } | undefined;
        if (!done && first?.Delete?.Key?.sk === memberId) {
          done = true;
          await between();
        }
        return real(items, attempts);
      });
    }
    const state = async (accountId: string) => {
      const counter = Number((await getItem(counterKey(accountId, 'owners', 0)))?.n ?? 0);
      return {
        owners: (await listTeam(accountId))
          .filter((m) => m.role === 'owner')
          .map((m) => m.id)
          .sort(),
        counter,
      };
    };

    // Promoted to owner while being removed: the removal read "admin", and must not delete an owner uncounted.
    {
      const t = await tenant();
      const owner = await addTeamMember(t.accountId, freshEmail('owner'), 'owner');
      const promoted = await addTeamMember(t.accountId, freshEmail('promoted'), 'admin');
      const spy = interleave(promoted.id, () => setTeamRole(t.accountId, promoted.id, 'owner'));
      try {
        await removeTeamMember(t.accountId, promoted.id).catch((err: unknown) => err);
      } finally {
        spy.mockRestore();
      }
      const after = await state(t.accountId);
      expect(after.counter).toBe(after.owners.length);
      // The only owner left cannot demote themself.
      if (after.owners.length === 1) await expect(setTeamRole(t.accountId, owner.id, 'admin')).rejects.toThrow();
      expect((await state(t.accountId)).owners).toContain(owner.id);
    }
    // Demoted while being removed: the removal read "owner", and must not take a second owner off the counter.
    {
      const t = await tenant();
      await addTeamMember(t.accountId, freshEmail('owner'), 'owner');
      const demoted = await addTeamMember(t.accountId, freshEmail('demoted'), 'owner');
      const spy = interleave(demoted.id, () => setTeamRole(t.accountId, demoted.id, 'admin'));
      try {
        await removeTeamMember(t.accountId, demoted.id).catch((err: unknown) => err);
      } finally {
        spy.mockRestore();
      }
      const after = await state(t.accountId);
      expect(after).toEqual({ owners: [expect.any(String)], counter: 1 });
    }
  });

  it('races: promoting someone to owner while removing them, and demoting and removing an owner, keep the counter equal to the owners (at least one)', async () => {
    const t = await tenant();
    const owner = await loginAs(t.accountId, 'owner');
    const PAIRS = 4;
    const statuses = new Set<number>();
    /** One person's role change and removal sent together (in either order), for PAIRS people at once. */
    async function race(from: Role, to: Role, round: number): Promise<void> {
      const people = await Promise.all(Array.from({ length: PAIRS }, () => addTeamMember(t.accountId, freshEmail(`${from}-${to}`), from)));
      const answers = await Promise.all(
        people.flatMap((p, i) => {
          const change = () => http('PATCH', `/v1/team/${p.id}/`, { session: owner, body: { role: to } });
          const removal = () => http('DELETE', `/v1/team/${p.id}/`, { session: owner });
          return i % 2 === 0 ? [change(), removal()] : [removal(), change()];
        }),
      );
      for (const a of answers) statuses.add(a.status);
      expect(answers.map((a) => a.status).filter((s) => ![200, 204, 404, 409].includes(s))).toEqual([]);
      const after = await owners(t.accountId, owner);
      expect({ round, race: `${from} -> ${to} / remove`, ...after }).toEqual({
        round,
        race: `${from} -> ${to} / remove`,
        listed: after.counter,
        counter: after.counter,
      });
      expect(after.listed).toBeGreaterThanOrEqual(1);
      // Whoever is left of this round goes, so the original owner is the only one again.
      const team = await must(http('GET', '/v1/team/', { session: owner }), 200);
      for (const m of team.results) if (m.id !== owner.member.id) await must(http('DELETE', `/v1/team/${m.id}/`, { session: owner }), 204);
      expect(await owners(t.accountId, owner)).toEqual({ listed: 1, counter: 1 });
    }
    for (let round = 1; round <= 6; round++) {
      await race('owner', 'admin', round);
      await race('admin', 'owner', round);
    }
    // The only owner left cannot demote themself.
    expect(await answer(http('PATCH', `/v1/team/${owner.member.id}/`, { session: owner, body: { role: 'admin' } }))).toEqual([
      400,
      { role: [LAST_OWNER] },
    ]);
    expect(statuses.has(204)).toBe(true);
  }, 180_000);
});

// ---- API keys -------------------------------------------------------------------------------------

describe('API keys', () => {
  it("create (the key once), use, list (prefix only), revoke (then 401); another account's key id is 404; an API key may not manage keys", async () => {
    const t = await tenant();
    const owner = await loginAs(t.accountId, 'owner');
    const created = await http('POST', '/v1/api-keys/', { session: owner, body: { name: 'Production backend' } });
    expect(created.status).toBe(201);
    const { key, ...record } = created.body;
    expect(key).toMatch(/^rfl_live_[A-Za-z0-9_-]+$/);
    expect(record).toEqual({
      id: expect.stringMatching(/^key_[0-9a-f]{24}$/),
      name: 'Production backend',
      prefix: `${key.slice(0, 13)}…`,
      created_at: expect.any(Number),
      revoked_at: null,
    });

    expect((await http('GET', '/v1/campaigns/', { key })).status).toBe(200);
    const listed = await http('GET', '/v1/api-keys/', { session: owner });
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(key);
    expect(listed.text).not.toContain(key.slice('rfl_live_'.length));
    expect(listed.body.results).toEqual(expect.arrayContaining([record, expect.objectContaining({ name: 'First key', revoked_at: null })]));
    expect(listed.body.results.every((r: Record<string, unknown>) => !('key' in r))).toBe(true);

    // An Idempotency-Key replay of a create does not show the key again.
    const idem = { 'idempotency-key': unique('idem') };
    const first = await http('POST', '/v1/api-keys/', { session: owner, body: { name: 'CI' }, headers: idem });
    const replay = await http('POST', '/v1/api-keys/', { session: owner, body: { name: 'CI' }, headers: idem });
    expect([first.status, typeof first.body.key, replay.status, replay.body.key, replay.body.id]).toEqual([
      201,
      'string',
      201,
      null,
      first.body.id,
    ]);

    // Another account's owner cannot revoke it.
    const other = await tenant();
    const stranger = await loginAs(other.accountId, 'owner');
    expect(await answer(http('DELETE', `/v1/api-keys/${record.id}/`, { session: stranger }))).toEqual([404, { detail: 'Not found.' }]);
    expect(await answer(http('DELETE', '/v1/api-keys/key_000000000000000000000000/', { session: owner }))).toEqual([
      404,
      { detail: 'Not found.' },
    ]);
    expect((await http('GET', '/v1/campaigns/', { key })).status).toBe(200);

    // An API key never manages keys, the team or the provider connection.
    for (const [method, path, body] of [
      ['GET', '/v1/api-keys/', undefined],
      ['POST', '/v1/api-keys/', { name: 'by key' }],
      ['DELETE', `/v1/api-keys/${record.id}/`, undefined],
      ['GET', '/v1/team/', undefined],
      ['POST', '/v1/team/', { email: freshEmail(), role: 'owner' }],
      ['PATCH', `/v1/team/${owner.member.id}/`, { role: 'viewer' }],
      ['DELETE', `/v1/team/${owner.member.id}/`, undefined],
      ['POST', '/v1/account/provider/', { kind: 'stripe', secret_key: 'sk_test_bykey12345', webhook_secret: 'whsec_bykey12345' }],
    ] as const) {
      expect({ method, path, answer: await answer(http(method, path, { key, ...(body ? { body } : {}) })) }).toEqual({
        method,
        path,
        answer: [403, { detail: SESSION_ONLY }],
      });
    }
    // And without any credential: 401.
    expect((await http('POST', '/v1/api-keys/', { body: { name: 'anonymous' } })).status).toBe(401);

    const revoked = await http('DELETE', `/v1/api-keys/${record.id}/`, { session: owner });
    expect([revoked.status, revoked.text]).toEqual([204, '']);
    expect(await answer(http('GET', '/v1/campaigns/', { key }))).toEqual([401, { detail: 'Invalid token.' }]);
    const after = await must(http('GET', '/v1/api-keys/', { session: owner }), 200);
    expect(after.results.find((r: { id: string }) => r.id === record.id)).toMatchObject({ revoked_at: expect.any(Number) });
    // Revoking twice is fine; the account's first key still works.
    expect((await http('DELETE', `/v1/api-keys/${record.id}/`, { session: owner })).status).toBe(204);
    expect((await http('GET', '/v1/campaigns/', { key: t.apiKey })).status).toBe(200);
  });
});

// ---- account settings and the provider connection -------------------------------------------------

describe('account settings', () => {
  it('GET /v1/account/ with an API key and with a session; PATCH embed origins, email sender (set and cleared) and js referrals', async () => {
    const t = await tenant();
    const admin = await loginAs(t.accountId, 'admin');
    const byKey = await must(http('GET', '/v1/account/', { key: t.apiKey }), 200);
    const bySession = await must(http('GET', '/v1/account/', { session: admin }), 200);
    expect(bySession).toEqual(byKey);
    // (The exact shape is the Account schema's, checked live in openapi.test.ts.)
    expect(byKey).toMatchObject({
      id: t.accountId,
      name: t.name,
      plan: 'unlimited',
      publishable_key: expect.stringMatching(/^rfl_pub_/),
      script_tag: `<script src="${site()}/js/refloop.js" data-key="${byKey.publishable_key}" async></script>`,
      js_referrals: 'open',
      email_sender: null,
      embed_origins: [],
      provider: { kind: null, connected: false, webhook_url: null, vendor_id: null, api_url: null },
    });

    for (const bad of [
      ['https://x.example/path'],
      ['http://x.example'],
      ['https://ok.example', 'javascript:alert(1)'],
      'https://x.example',
      null,
    ]) {
      const res = await http('PATCH', '/v1/account/', { session: admin, body: { embed_origins: bad } });
      expect({ bad, status: res.status, fields: Object.keys(res.body ?? {}) }).toEqual({ bad, status: 400, fields: ['embed_origins'] });
    }
    const patched = await must(
      http('PATCH', '/v1/account/', {
        session: admin,
        body: {
          embed_origins: ['https://app.acme.example/', 'http://localhost:5173', 'https://app.acme.example'],
          email_sender: { address: 'rewards@acme.example', name: 'Acme' },
          js_referrals: 'confirm',
        },
      }),
      200,
    );
    expect(patched).toMatchObject({
      embed_origins: ['https://app.acme.example', 'http://localhost:5173'],
      email_sender: { address: 'rewards@acme.example', name: 'Acme' },
      js_referrals: 'confirm',
    });
    expect(await must(http('GET', '/v1/account/', { key: t.apiKey }), 200)).toEqual(patched);
    // The API key may change them too (an ordinary /v1/ write).
    const cleared = await must(http('PATCH', '/v1/account/', { key: t.apiKey, body: { email_sender: null, embed_origins: [] } }), 200);
    expect(cleared).toMatchObject({ email_sender: null, embed_origins: [], js_referrals: 'confirm', name: t.name });
    expect(await answer(http('PATCH', '/v1/account/', { session: admin, body: { email_sender: { address: 'nope' } } }))).toEqual([
      400,
      { email_sender: ['address: Enter a valid email address.'] },
    ]);
    expect(await answer(http('PATCH', '/v1/account/', { session: admin, body: { js_referrals: 'sometimes' } }))).toEqual([
      400,
      { js_referrals: ['"sometimes" is not a valid choice.'] },
    ]);
  });

  it('POST /v1/account/provider/: an admin session connects Stripe, Paddle Classic and Paddle Billing; never a secret in an answer; an API key gets 403', async () => {
    const t = await tenant();
    connected.push(t.accountId);
    const admin = await loginAs(t.accountId, 'admin');
    const STRIPE = { secret_key: 'sk_test_51DashboardAuthTest0001', webhook_secret: 'whsec_dashboardAuthTest0001' };
    const BILLING = { api_key: 'pdl_live_apikey_dashboardAuthTest0001', webhook_secret: 'pdl_ntfset_dashboardAuthTest0001' };
    const secrets = [STRIPE.secret_key, STRIPE.webhook_secret, BILLING.api_key, BILLING.webhook_secret, 'auth-code-secret-0001'];

    // Every missing field at once.
    expect(await answer(http('POST', '/v1/account/provider/', { session: admin, body: { kind: 'paddle-classic' } }))).toEqual([
      400,
      { vendor_id: ['This field is required.'], auth_code: ['This field is required.'], public_key: ['This field is required.'] },
    ]);
    expect(await answer(http('POST', '/v1/account/provider/', { session: admin, body: { kind: 'stripe' } }))).toEqual([
      400,
      { secret_key: ['This field is required.'], webhook_secret: ['This field is required.'] },
    ]);

    const stripe = await http('POST', '/v1/account/provider/', { session: admin, body: { kind: 'stripe', ...STRIPE } });
    expect([stripe.status, stripe.body]).toEqual([
      200,
      {
        kind: 'stripe',
        connected: true,
        webhook_url: `${site()}/webhooks/stripe/${t.accountId}/`,
        vendor_id: null,
        api_url: 'https://api.stripe.com',
      },
    ]);

    // An emulator's API URL only where the service allows loopback (npm start): refused here, then allowed.
    const local = { kind: 'stripe', ...STRIPE, api_url: 'http://127.0.0.1:12111' };
    expect(await answer(http('POST', '/v1/account/provider/', { session: admin, body: local }))).toEqual([
      400,
      { api_url: ["Use the provider's own API URL (https://api.stripe.com); other URLs are for local emulators."] },
    ]);
    expect(await withLoopback(() => must(http('POST', '/v1/account/provider/', { session: admin, body: local }), 200))).toMatchObject({
      kind: 'stripe',
      api_url: 'http://127.0.0.1:12111',
    });

    // Paddle Classic: a private key PEM is refused on public_key; the public one is stored in its canonical form.
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const refused = await http('POST', '/v1/account/provider/', {
      session: admin,
      body: { kind: 'paddle-classic', vendor_id: 1234, auth_code: secrets[4], public_key: privatePem },
    });
    expect([refused.status, Object.keys(refused.body)]).toEqual([400, ['public_key']]);
    expect(refused.body.public_key[0]).toMatch(/^This is a PRIVATE key/);
    expect(
      (
        await http('POST', '/v1/account/provider/', {
          session: admin,
          body: { kind: 'paddle-classic', vendor_id: 1234, auth_code: secrets[4], public_key: 'not a key' },
        })
      ).status,
    ).toBe(400);
    const classic = await http('POST', '/v1/account/provider/', {
      session: admin,
      body: {
        kind: 'paddle-classic',
        vendor_id: '1234',
        auth_code: secrets[4],
        public_key: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      },
    });
    expect([classic.status, classic.body]).toEqual([
      200,
      {
        kind: 'paddle-classic',
        connected: true,
        webhook_url: `${site()}/webhooks/paddle/${t.accountId}/`,
        vendor_id: 1234,
        api_url: 'https://vendors.paddle.com/api',
      },
    ]);

    const billing = await http('POST', '/v1/account/provider/', { session: admin, body: { kind: 'paddle-billing', ...BILLING } });
    expect([billing.status, billing.body]).toEqual([
      200,
      {
        kind: 'paddle-billing',
        connected: true,
        webhook_url: `${site()}/webhooks/paddle-billing/${t.accountId}/`,
        vendor_id: null,
        api_url: 'https://api.paddle.com',
      },
    ]);

    // A sandbox key goes with Paddle's sandbox API by itself; a live key with the sandbox URL is refused in words.
    const sandbox = await must(
      http('POST', '/v1/account/provider/', {
        session: admin,
        body: { kind: 'paddle-billing', api_key: 'pdl_sdbx_apikey_dashboardAuthTest0001', webhook_secret: BILLING.webhook_secret },
      }),
      200,
    );
    expect(sandbox.api_url).toBe('https://sandbox-api.paddle.com');
    expect(
      await answer(
        http('POST', '/v1/account/provider/', {
          session: admin,
          body: { kind: 'paddle-billing', ...BILLING, api_url: 'https://sandbox-api.paddle.com' },
        }),
      ),
    ).toEqual([400, { api_url: ['A live key needs the API URL https://api.paddle.com.'] }]);
    const live = await must(http('POST', '/v1/account/provider/', { session: admin, body: { kind: 'paddle-billing', ...BILLING } }), 200);
    expect(live).toEqual(billing.body);

    const settings = await http('GET', '/v1/account/', { session: admin });
    expect(settings.body.provider).toEqual(billing.body);
    for (const res of [stripe, classic, billing, settings])
      for (const secret of secrets) expect({ secret, shown: res.text.includes(secret) }).toEqual({ secret, shown: false });

    // An API key never changes the provider's secrets; nor does a finance session.
    expect(await answer(http('POST', '/v1/account/provider/', { key: t.apiKey, body: { kind: 'stripe', ...STRIPE } }))).toEqual([
      403,
      { detail: SESSION_ONLY },
    ]);
    const finance = await loginAs(t.accountId, 'finance');
    expect(await answer(http('POST', '/v1/account/provider/', { session: finance, body: { kind: 'stripe', ...STRIPE } }))).toEqual([
      403,
      { detail: PERMISSION_DENIED },
    ]);
    expect((await must(http('GET', '/v1/account/', { key: t.apiKey }), 200)).provider.kind).toBe('paddle-billing');
  });
  it('POST /v1/account/provider/: an admin session connects Chargebee (site, API key, webhook Basic-auth pair); field errors in words; never a secret in an answer', async () => {
    const t = await tenant();
    connected.push(t.accountId);
    const admin = await loginAs(t.accountId, 'admin');
    const CHARGEBEE = {
      site: 'acme-test',
      api_key: 'test_dashboardAuthChargebee01',
      webhook_password: 'dashboard-auth-chargebee-password-01',
    };
    const secrets = [CHARGEBEE.api_key, CHARGEBEE.webhook_password];

    expect(await answer(http('POST', '/v1/account/provider/', { session: admin, body: { kind: 'chargebee' } }))).toEqual([
      400,
      { site: ['This field is required.'], api_key: ['This field is required.'], webhook_password: ['This field is required.'] },
    ]);
    const short = await http('POST', '/v1/account/provider/', {
      session: admin,
      body: { kind: 'chargebee', ...CHARGEBEE, webhook_password: 'short' },
    });
    expect([short.status, Object.keys(short.body)]).toEqual([400, ['webhook_password']]);
    const badSite = await http('POST', '/v1/account/provider/', {
      session: admin,
      body: { kind: 'chargebee', ...CHARGEBEE, site: 'not a site' },
    });
    expect([badSite.status, Object.keys(badSite.body)]).toEqual([400, ['site']]);
    expect(
      await answer(
        http('POST', '/v1/account/provider/', {
          session: admin,
          body: { kind: 'chargebee', ...CHARGEBEE, api_url: 'http://127.0.0.1:12141' },
        }),
      ),
    ).toEqual([400, { api_url: ['Chargebee takes no API URL; other URLs are for local emulators.'] }]);

    const chargebee = await http('POST', '/v1/account/provider/', { session: admin, body: { kind: 'chargebee', ...CHARGEBEE } });
    expect([chargebee.status, chargebee.body]).toEqual([
      200,
      {
        kind: 'chargebee',
        connected: true,
        webhook_url: `${site()}/webhooks/chargebee/${t.accountId}/`,
        vendor_id: null,
        api_url: 'https://acme-test.chargebee.com',
      },
    ]);
    const local = await withLoopback(() =>
      must(
        http('POST', '/v1/account/provider/', {
          session: admin,
          body: { kind: 'chargebee', ...CHARGEBEE, api_url: 'http://127.0.0.1:12141' },
        }),
        200,
      ),
    );
    expect(local).toMatchObject({ kind: 'chargebee', api_url: 'http://127.0.0.1:12141' });
    const settings = await http('GET', '/v1/account/', { session: admin });
    expect(settings.body.provider).toMatchObject({ kind: 'chargebee', connected: true });
    expect(settings.body.provider_options.map((o: { kind: string }) => o.kind)).toContain('chargebee');
    for (const res of [short, badSite, chargebee, settings])
      for (const secret of secrets) expect({ secret, shown: res.text.includes(secret) }).toEqual({ secret, shown: false });
  });

  it("under npm start, the dashboard connects the demo's emulators with their keys (infra/local/start.ts LOCAL_SECRETS)", async () => {
    const t = await tenant();
    connected.push(t.accountId);
    const owner = await loginAs(t.accountId, 'owner');
    await withLoopback(async () => {
      const billing = await http('POST', '/v1/account/provider/', {
        session: owner,
        body: {
          kind: 'paddle-billing',
          api_key: LOCAL_SECRETS.billingApiKey,
          webhook_secret: LOCAL_SECRETS.billingWebhookSecret,
          api_url: 'http://127.0.0.1:8026',
        },
      });
      expect([billing.status, billing.body?.api_url]).toEqual([200, 'http://127.0.0.1:8026']);
      const stripe = await http('POST', '/v1/account/provider/', {
        session: owner,
        body: {
          kind: 'stripe',
          secret_key: LOCAL_SECRETS.stripeSecretKey,
          webhook_secret: LOCAL_SECRETS.stripeWebhookSecret,
          api_url: 'http://127.0.0.1:12111',
        },
      });
      expect([stripe.status, stripe.body]).toEqual([
        200,
        {
          kind: 'stripe',
          connected: true,
          webhook_url: `${site()}/webhooks/stripe/${t.accountId}/`,
          vendor_id: null,
          api_url: 'http://127.0.0.1:12111',
        },
      ]);
    });
  });
});

// ---- links and the CSRF origin come from the configuration, never from the Host header ------------

describe('a forged Host header', () => {
  const EVIL = 'evil.example';

  it("the site is configured: PUBLIC_BASE_URL, else the local gateway on the configured port (never a request's host)", () => {
    expect(readConfig({ PUBLIC_BASE_URL: 'https://refloop.acme.example/' }).publicBaseUrl).toBe('https://refloop.acme.example');
    expect(readConfig({ PORT: '4321' }).publicBaseUrl).toBe('http://127.0.0.1:4321');
    expect(readConfig({}).publicBaseUrl).toBe('http://127.0.0.1:3000');
  });

  it('a login link asked for with a forged Host points at the configured site', async () => {
    const t = await tenant();
    const dana = freshEmail('dana');
    await addTeamMember(t.accountId, dana, 'admin');
    expect(await forgedHost('POST', '/auth/login-links/', EVIL, { body: { email: dana } })).toEqual([202, LINK_SENT]);
    const [mail] = await awaitMails(dana);
    expect(mail!.link).toBe(`${site()}/app/login#token=${mail!.token}`);
    expect(mail!.text).not.toContain(EVIL);
  });

  it("a session's write whose Origin matches the forged Host is refused (CSRF); an invitation and a portal link sent with a forged Host point at the site", async () => {
    const t = await tenant();
    const owner = await loginAs(t.accountId, 'owner');
    const cookie = `refloop_session=${owner.token}`;
    const victim = freshEmail('victim');
    // The attacker's page sends its own origin and a Host to match it: the site's origin is not theirs.
    expect(
      await forgedHost('POST', '/v1/team/', EVIL, {
        body: { email: victim, role: 'viewer' },
        headers: { cookie, origin: `https://${EVIL}` },
      }),
    ).toEqual([403, { detail: CROSS_SITE_REFUSED }]);
    expect((await must(http('GET', '/v1/team/', { session: owner }), 200)).results.map((m: { email: string }) => m.email)).not.toContain(
      victim,
    );

    // This site's Origin with a forged Host: the invitation goes out, with a link to the site.
    const [status] = await forgedHost('POST', '/v1/team/', EVIL, {
      body: { email: victim, role: 'viewer' },
      headers: { cookie, origin: site() },
    });
    expect(status).toBe(201);
    const [mail] = await awaitMails(victim);
    expect(mail!.link).toBe(`${site()}/app/login#token=${mail!.token}`);
    expect(mail!.text).not.toContain(EVIL);

    // A member portal link made with a forged Host, and the list links.
    const member = await must(
      http('POST', '/v1/members/', { key: t.apiKey, body: { identifier: unique('m'), email: `${unique('m')}@example.com` } }),
      201,
    );
    const [portalStatus, portal] = await forgedHost('POST', `/v1/members/${member.id}/portal-sessions/`, EVIL, {
      body: {},
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(portalStatus).toBe(201);
    expect(String(portal.url).startsWith(`${site()}/portal/${t.accountId}/#token=`)).toBe(true);
    const [, settings] = await forgedHost('GET', '/v1/account/', EVIL, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(JSON.stringify(settings)).not.toContain(EVIL);
  });
});

// ---- rate limits ----------------------------------------------------------------------------------

describe('rate limits', () => {
  it('asking for links to one address again and again slows its emails down, never refuses: the same 202, fewer emails, and the operator still gets in', async () => {
    const t = await tenant();
    const target = freshEmail('target');
    await addTeamMember(t.accountId, target, 'owner');
    // Anyone asks for the operator's link 6 times in a row (the old per-address limit refused the 6th with 429).
    const answers = [];
    for (let i = 1; i <= 6; i++)
      answers.push(await http('POST', '/auth/login-links/', { body: { email: i % 2 ? target : target.toUpperCase() } }));
    // Every answer is the same: nobody learns whether an email went out.
    expect(answers.map((r) => [r.status, r.text, r.headers.get('retry-after')])).toEqual(
      answers.map(() => [202, JSON.stringify(LINK_SENT), null]),
    );
    await drained();
    // Fewer emails: the burst (2), and at most one per 5-minute window after it (two if a window began meanwhile).
    const sent = mailsTo(target);
    expect(sent.length).toBeGreaterThanOrEqual(LOGIN_EMAIL_BURST.limit);
    expect(sent.length).toBeLessThanOrEqual(LOGIN_EMAIL_BURST.limit + 2);
    // The operator is not locked out: the newest link in their inbox opens a session.
    const link = sent.find((m) => m.token !== null)!;
    expect(link.token).toMatch(TOKEN);
    expect((await http('POST', '/auth/sessions/', { body: { token: link.token } })).status).toBe(201);
    // Another address is not held back by it.
    const other = freshEmail('other');
    await addTeamMember(t.accountId, other, 'viewer');
    expect((await http('POST', '/auth/login-links/', { body: { email: other } })).status).toBe(202);
    await awaitMails(other);
  });

  it('the pace per address: the burst at once, then one email per 5-minute window, a gap shorter than a link lasts', async () => {
    expect(LOGIN_EMAIL_GAP.windowSeconds).toBeLessThan(15 * 60);
    const address = freshEmail('paced');
    // A window boundary of both windows, far from now so no other test shares it.
    const t0 = (Math.ceil(Date.now() / 900_000) + 1000 + Math.floor(Math.random() * 1000)) * 900_000;
    const at = async (seconds: number, n: number) => {
      const got = [];
      for (let i = 0; i < n; i++) got.push(await loginEmailAllowed(address, t0 + seconds * 1000));
      return got;
    };
    expect(await at(0, 5)).toEqual([true, true, true, false, false]);
    expect(await at(60, 3)).toEqual([false, false, false]);
    expect(await at(300, 2)).toEqual([true, false]);
    expect(await at(600, 2)).toEqual([true, false]);
    // A new 15-minute window: the burst again.
    expect(await at(900, 4)).toEqual([true, true, true, false]);
    // Another address has its own pace.
    expect(await loginEmailAllowed(freshEmail('unpaced'), t0 + 60_000)).toBe(true);
  });
});
