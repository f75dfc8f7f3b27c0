// Applications to an affiliate programme (docs/affiliates.md "Applications") through the real handlers,
// DynamoDB Local and the local SQS (no email worker runs: the messages it would get are read off the
// member-emails queue, and the confirmation link is issued as the worker issues it).
//
// The public page and its form (JSON and no-JS), the one 202 whatever happens and which email each case
// queues, the limits (dropped silently), the confirmation (a GET changes nothing; the POST creates once,
// replays create nothing), automatic approval, the operator's list (filters, exact counts, cursors), get,
// approve and reject (twice, racing each other), and another account's ids.
import { adminInProcess } from '../support/admin-cli';
import { randomBytes } from 'node:crypto';
import { issueJoinConfirmation } from '../../shared/flows/applications';
import { getItem } from '../../shared/store/ops';
import { applicationKeys, keys } from '../../shared/store/table';
import { eventId } from '../../shared/domain/events';
import { api, type ApiResponse } from '../support/api';
import { loginAs } from '../support/dashboard';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;

beforeAll(async () => {
  queues = await startTestQueues();
});

afterAll(async () => {
  await queues?.stop();
});

const run = randomBytes(3).toString('hex');
let serial = 0;
const unique = (p: string) => `${p}-${run}-${++serial}`;
const email = (p = 'applicant') => `${unique(p)}@creator.example`;
/** A client address of its own per use: the limits count per address across the shared test table. */
const freshIp = () => `2001:db8:${run.slice(0, 4)}::${(++serial).toString(16)}`;

interface Tenant {
  accountId: string;
  key: string;
  slug: string;
}

async function tenant(): Promise<Tenant> {
  const { accountId, apiKey } = await newAccount('unlimited');
  const account = await api('GET', '/v1/account/', { key: apiKey });
  expect(account.status).toBe(200);
  return { accountId, key: apiKey, slug: account.body.slug };
}

const QUESTIONS = [
  { id: 'audience', label: 'Where is your audience?', type: 'choice', required: true, options: ['YouTube', 'Blog'] },
  { id: 'site', label: 'Your website', type: 'url', required: false },
];

async function campaign(t: Tenant, signup: Record<string, unknown> = {}): Promise<{ id: string; slug: string }> {
  const res = await api('POST', '/v1/campaigns/', {
    key: t.key,
    body: {
      name: unique('Creators'),
      allows_commission: true,
      commission_type: 'percentage',
      commission_percent: '20',
      signup: { enabled: true, approval: 'manual', terms_url: 'https://acme.example/terms', questions: QUESTIONS, ...signup },
    },
  });
  expect(res.status).toBe(201);
  return { id: res.body.id, slug: res.body.slug };
}

const applyPath = (t: Tenant, c: { slug: string }) => `/join/v1/${t.slug}/${c.slug}/applications/`;
const body = (address: string, extra: Record<string, unknown> = {}) => ({
  email: address,
  name: 'Casey Van Jones',
  country: 'gb',
  payout_email: null,
  answers: { audience: 'YouTube', site: 'https://casey.example' },
  accepted_terms: true,
  ...extra,
});

const ACCEPTED = { detail: 'Check your email to continue.' };

/** Messages read off member-emails so far, by recipient (or member) as the tests look for them. */
const inbox: Record<string, unknown>[] = [];
async function drainEmails(): Promise<void> {
  for (const m of await queues.receiveAll('member-emails')) inbox.push(m.json as Record<string, unknown>);
}
async function messageFor(match: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  return pollUntil(async () => {
    await drainEmails();
    return inbox.find(match) ?? null;
  });
}
/** No message for `address` arrives within a short wait (after the request answered, its send is done). */
async function noMessageFor(address: string): Promise<void> {
  await drainEmails();
  expect(inbox.filter((m) => m.email === address)).toEqual([]);
}

async function submit(
  t: Tenant,
  c: { slug: string },
  address: string,
  ip = freshIp(),
  extra: Record<string, unknown> = {},
): Promise<ApiResponse> {
  return api('POST', applyPath(t, c), { body: body(address, extra), sourceIp: ip });
}

/** Applies and confirms: the application's confirmation page answer and the created application. */
async function applied(t: Tenant, c: { slug: string }, address = email()): Promise<{ page: ApiResponse; application: any; token: string }> {
  const res = await submit(t, c, address);
  expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: ACCEPTED });
  const confirm = await messageFor((m) => m.email === address && m.template === 'application-confirm');
  const url = await issueJoinConfirmation(t.accountId, String(confirm.join_request_id));
  expect(url).toMatch(/\/join\/confirm\/[A-Za-z0-9_-]{43}\/$/);
  const token = new URL(url as string).pathname.split('/')[3] as string;
  const page = await api('POST', `/join/confirm/${token}/`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: '',
  });
  const list = await api('GET', `/v1/applications/?page_size=100`, { key: t.key });
  const application = list.body.results.find((a: { email: string }) => a.email === address);
  return { page, application, token };
}

const count = async (t: Tenant, query = '') =>
  (await api('GET', `/v1/applications/?page_size=1${query}`, { key: t.key })).body.count as number;

describe('the public page', () => {
  let t: Tenant;
  let open: { id: string; slug: string };
  beforeAll(async () => {
    t = await tenant();
    open = await campaign(t);
  });

  it('shows the terms, the fields, the questions and the terms checkbox, with a CSP that allows its script by hash', async () => {
    const res = await api('GET', `/join/${t.slug}/${open.slug}/`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const html = res.text;
    expect(html).toContain('Earn 20% of what they pay');
    expect(html).toContain(`action="/join/v1/${t.slug}/${open.slug}/applications/"`);
    for (const name of ['email', 'name', 'country', 'payout_email', 'answers[audience]', 'answers[site]', 'accepted_terms'])
      expect(html).toContain(`name="${name}"`);
    expect(html).toMatch(/<option value="GB">United Kingdom<\/option>/);
    expect(html).toContain('href="https://acme.example/terms"');
    expect(html).toContain('<label for="f-q-audience">Where is your audience? <span class="hint">(required)</span></label>');
  });

  it('answers a 404 page for an unknown account or campaign and a closed campaign; ?sent=1 says to check the email', async () => {
    const closed = await campaign(t, { enabled: false });
    for (const path of [`/join/${t.slug}/${closed.slug}/`, `/join/${t.slug}/nope-${run}/`, `/join/nobody-${run}/${open.slug}/`]) {
      const res = await api('GET', path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.text).toContain('This programme is not taking applications');
    }
    const sent = await api('GET', `/join/${t.slug}/${open.slug}/?sent=1`);
    expect(sent.status).toBe(200);
    expect(sent.text).toContain('Check your email');
  });

  it('asks for the terms to be accepted only when the campaign links them (terms_url)', async () => {
    const plain = await campaign(t, { terms_url: null });
    const page = await api('GET', `/join/${t.slug}/${plain.slug}/`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('name="accepted_terms"');
    const address = email('no-terms');
    const res = await submit(t, plain, address, freshIp(), { accepted_terms: undefined });
    expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: ACCEPTED });
    expect(await messageFor((m) => m.email === address)).toMatchObject({ template: 'application-confirm', campaign_id: plain.id });
  });

  it('takes the no-JS form post: 303 to ?sent=1, or the page again with its errors beside their fields', async () => {
    const address = email('form');
    const form = new URLSearchParams({
      email: address,
      name: 'Form Person',
      country: 'DE',
      payout_email: '',
      'answers[audience]': 'Blog',
      'answers[site]': '',
      accepted_terms: 'on',
    }).toString();
    const ok = await api('POST', applyPath(t, open), {
      rawBody: form,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      sourceIp: freshIp(),
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe(`/join/${t.slug}/${open.slug}/?sent=1`);
    const message = await messageFor((m) => m.email === address);
    expect(message).toMatchObject({
      kind: 'affiliate-email',
      template: 'application-confirm',
      account_id: t.accountId,
      campaign_id: open.id,
    });

    const bad = await api('POST', applyPath(t, open), {
      rawBody: new URLSearchParams({ email: 'not-an-email', name: 'X', country: 'ZZ', 'answers[audience]': 'TikTok' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      sourceIp: freshIp(),
    });
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(bad.text).toMatch(/id="f-email" data-field="email" aria-describedby="f-email-error" aria-invalid="true"/);
    expect(bad.text).toContain('<p class="error" id="f-email-error">Enter a valid email address.</p>');
    expect(bad.text).toContain('id="f-q-audience-error">Choose one of the options.</p>');
    expect(bad.text).toContain('Accept the programme&#39;s terms to apply.');
    expect(bad.text).toContain('value="not-an-email"');
  });
});

describe('the public endpoint', () => {
  let t: Tenant;
  let open: { id: string; slug: string };
  beforeAll(async () => {
    t = await tenant();
    open = await campaign(t);
  });

  it('answers the same 202 for a new address, a member and a pending application, and queues the email that fits', async () => {
    const fresh = email('new');
    const member = email('member');
    expect((await api('POST', '/v1/members/', { key: t.key, body: { identifier: unique('m'), email: member } })).status).toBe(201);
    const pending = (await applied(t, open)).application;
    expect(pending.status).toBe('pending');

    const answers = await Promise.all([submit(t, open, fresh), submit(t, open, member.toUpperCase()), submit(t, open, pending.email)]);
    for (const res of answers) expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: ACCEPTED });

    expect(await messageFor((m) => m.email === fresh)).toMatchObject({
      template: 'application-confirm',
      join_request_id: expect.stringMatching(/^app_[0-9a-f]{32}$/),
    });
    expect(await messageFor((m) => String(m.email).toLowerCase() === member && m.template !== 'application-confirm')).toMatchObject({
      template: 'member-exists',
      account_id: t.accountId,
    });
    expect(await messageFor((m) => m.email === pending.email && m.template === 'application-exists')).toMatchObject({
      application_id: pending.id,
    });
    // Nothing is an application before its email is confirmed.
    expect(await count(t)).toBe(1);
  });

  it('refuses malformed input with field errors (an answer keyed answers.<id>) and changes nothing', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ email: 'x' }, { email: ['Enter a valid email address.'] }],
      [{ country: 'XX' }, { country: [expect.any(String)] }],
      [{ accepted_terms: false }, { accepted_terms: ["Accept the programme's terms to apply."] }],
      [{ answers: { audience: 'TikTok' } }, { 'answers.audience': ['Choose one of the options.'] }],
      [
        { answers: { site: 'javascript:alert(1)' } },
        { 'answers.audience': ['This field is required.'], 'answers.site': [expect.any(String)] },
      ],
    ];
    for (const [extra, errors] of cases) {
      const address = email('bad');
      const res = await submit(t, open, address, freshIp(), extra);
      expect({ extra, status: res.status, body: res.body }).toEqual({ extra, status: 400, body: errors });
    }
    const missing = await api('POST', `/join/v1/${t.slug}/${open.slug}/applications/`, { body: { email: email() }, sourceIp: freshIp() });
    expect(missing.status).toBe(400);
    // Every error at once: the body's, and the open campaign's terms and required answer.
    expect(Object.keys(missing.body).sort()).toEqual(['accepted_terms', 'answers.audience', 'country', 'name']);
  });

  it('answers a silent 202 for a closed or unknown campaign', async () => {
    const closed = await campaign(t, { enabled: false });
    const address = email('closed');
    for (const path of [applyPath(t, closed), `/join/v1/${t.slug}/nope-${run}/applications/`, `/join/v1/nobody-${run}/x/applications/`]) {
      const res = await api('POST', path, { body: body(address), sourceIp: freshIp() });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 202, body: ACCEPTED });
    }
    await noMessageFor(address);
  });

  it('drops silently past 5 requests an hour per address and 20 per client address', async () => {
    const address = email('limited');
    for (let i = 1; i <= 6; i++) {
      const res = await submit(t, open, address);
      expect({ i, status: res.status, body: res.body }).toEqual({ i, status: 202, body: ACCEPTED });
    }
    await pollUntil(async () => {
      await drainEmails();
      return inbox.filter((m) => m.email === address).length >= 5;
    });
    await drainEmails();
    expect(inbox.filter((m) => m.email === address)).toHaveLength(5);

    const ip = freshIp();
    const addresses = Array.from({ length: 21 }, () => email('same-ip'));
    for (const a of addresses) expect((await submit(t, open, a, ip)).status).toBe(202);
    await pollUntil(async () => {
      await drainEmails();
      return inbox.filter((m) => addresses.includes(String(m.email))).length >= 20;
    });
    await drainEmails();
    expect(inbox.filter((m) => addresses.includes(String(m.email)))).toHaveLength(20);
    expect(inbox.some((m) => m.email === addresses[20])).toBe(false);
  });
});

describe('the confirmation link', () => {
  let t: Tenant;
  let manual: { id: string; slug: string };
  beforeAll(async () => {
    t = await tenant();
    manual = await campaign(t);
  });

  it('GET shows a button and changes nothing; the POST creates the application once; replays create nothing', async () => {
    const address = email('confirm');
    expect((await submit(t, manual, address)).status).toBe(202);
    const confirm = await messageFor((m) => m.email === address);
    const joinRequestId = String(confirm.join_request_id);
    const url = (await issueJoinConfirmation(t.accountId, joinRequestId)) as string;
    const path = new URL(url).pathname;

    const page = await api('GET', path);
    expect(page.status).toBe(200);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.text).toContain(`<form method="post" action="${path}"><button type="submit">Confirm my email</button></form>`);
    expect(await count(t)).toBe(0);

    const first = await api('POST', path);
    expect(first.status).toBe(200);
    expect(first.text).toContain('Your application is in');
    const replays = await Promise.all([api('POST', path), api('POST', path), api('GET', path)]);
    for (const r of replays) {
      expect(r.status).toBe(200);
      expect(r.text).toContain('Your application is in');
    }
    expect(await count(t)).toBe(1);
    expect(await count(t, '&status=pending')).toBe(1);
    const list = await api('GET', '/v1/applications/', { key: t.key });
    expect(list.body.results).toEqual([
      {
        id: joinRequestId,
        campaign_id: manual.id,
        email: address,
        name: 'Casey Van Jones',
        country: 'GB',
        payout_email: null,
        answers: { audience: 'YouTube', site: 'https://casey.example' },
        status: 'pending',
        member_id: null,
        created_at: expect.any(Number),
        decided_at: null,
        reason: null,
        fraud_flags: [],
      },
    ]);
    // The join request is gone (it became the application); its event is in the outbox, once.
    expect(await getItem(applicationKeys.joinRequest(t.accountId, joinRequestId))).toBeUndefined();
    expect(await issueJoinConfirmation(t.accountId, joinRequestId)).toBeNull();
    const event = await getItem(keys.event(t.accountId, eventId('application.created', joinRequestId)));
    expect(event?.event_type).toBe('application.created');

    const unknown = await api('GET', `/join/confirm/${'A'.repeat(43)}/`);
    expect(unknown.status).toBe(404);
    expect((await api('POST', '/join/confirm/not-a-token/')).status).toBe(404);
  });

  it('a second confirmation for the same address creates nothing: "already applied", or "already a member" once it became one', async () => {
    const address = email('twice');
    // Two join requests before either is confirmed (two submissions: the second finds no application yet).
    expect((await submit(t, manual, address)).status).toBe(202);
    expect((await submit(t, manual, address)).status).toBe(202);
    const requests = await pollUntil(async () => {
      await drainEmails();
      const found = inbox.filter((m) => m.email === address && m.template === 'application-confirm');
      return found.length >= 2 ? found : null;
    });
    const paths: string[] = [];
    for (const m of requests) paths.push(new URL((await issueJoinConfirmation(t.accountId, String(m.join_request_id))) as string).pathname);
    const before = await count(t);
    expect((await api('POST', paths[0] as string)).text).toContain('Your application is in');
    const second = await api('POST', paths[1] as string);
    expect(second.status).toBe(200);
    expect(second.text).toContain('You already applied');
    expect(await count(t)).toBe(before + 1);

    // An address that became a member between applying and confirming, in a campaign that approves at once.
    const auto = await campaign(t, { approval: 'auto' });
    const late = email('late');
    expect((await submit(t, auto, late)).status).toBe(202);
    const confirm = await messageFor((m) => m.email === late);
    const path = new URL((await issueJoinConfirmation(t.accountId, String(confirm.join_request_id))) as string).pathname;
    expect((await api('POST', '/v1/members/', { key: t.key, body: { identifier: unique('m'), email: late } })).status).toBe(201);
    const members = (await api('GET', '/v1/members/?page_size=1', { key: t.key })).body.count;
    const page = await api('POST', path);
    expect(page.status).toBe(200);
    expect(page.text).toContain('You are already a member');
    expect(page.text).toContain(`/portal/${t.slug}/login/`);
    expect(await count(t)).toBe(before + 1);
    expect((await api('GET', '/v1/members/?page_size=1', { key: t.key })).body.count).toBe(members);
  });

  it('approves at once with approval "auto": the member is created (source signup, the name split) and the approval email queued', async () => {
    const auto = await campaign(t, { approval: 'auto' });
    const members = (await api('GET', '/v1/members/?page_size=1', { key: t.key })).body.count;
    const { page, application } = await applied(t, auto);
    expect(page.status).toBe(200);
    expect(page.text).toContain('You are approved');
    expect(application).toMatchObject({
      status: 'approved',
      member_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      decided_at: expect.any(Number),
    });
    const member = await api('GET', `/v1/members/${application.member_id}/`, { key: t.key });
    expect(member.body).toMatchObject({
      identifier: `signup:${application.id}`,
      email: application.email,
      first_name: 'Casey',
      last_name: 'Van Jones',
      campaign: { id: auto.id },
    });
    expect((await getItem(keys.member(t.accountId, application.member_id)))?.source).toBe('signup');
    expect((await api('GET', '/v1/members/?page_size=1', { key: t.key })).body.count).toBe(members + 1);
    expect(await messageFor((m) => m.application_id === application.id)).toMatchObject({
      template: 'application-approved',
      key: `approved-${application.id}`,
      member_id: application.member_id,
    });
    expect(await count(t, `&campaign=${auto.id}&status=approved`)).toBe(1);
    // The pending-email claim was never written: the address can be sent a "member exists" email now.
    expect(await getItem(applicationKeys.applicationEmailClaim(t.accountId, application.email))).toBeUndefined();
  });
});

describe('the operator API', () => {
  let t: Tenant;
  let c: { id: string; slug: string };
  beforeAll(async () => {
    t = await tenant();
    c = await campaign(t);
  });

  it('approves (twice: 200, the member created once), rejects (twice), and refuses the other decision with 409', async () => {
    const a = (await applied(t, c)).application;
    const membersBefore = (await api('GET', '/v1/members/?page_size=1', { key: t.key })).body.count;
    const first = await api('POST', `/v1/applications/${a.id}/approve/`, { key: t.key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: a.id, status: 'approved', member_id: expect.any(String), decided_at: expect.any(Number) });
    const again = await api('POST', `/v1/applications/${a.id}/approve/`, { key: t.key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await api('GET', '/v1/members/?page_size=1', { key: t.key })).body.count).toBe(membersBefore + 1);
    const rejectApproved = await api('POST', `/v1/applications/${a.id}/reject/`, { key: t.key, body: { reason: 'late' } });
    expect(rejectApproved.status).toBe(409);
    const approvals = await pollUntil(async () => {
      await drainEmails();
      const found = inbox.filter((m) => m.application_id === a.id);
      return found.length >= 2 ? found : null;
    });
    // The same email twice at most: its key makes the worker send it once.
    expect(new Set(approvals.map((m) => `${m.template}:${m.key}`))).toEqual(new Set([`application-approved:approved-${a.id}`]));

    const b = (await applied(t, c)).application;
    const rejected = await api('POST', `/v1/applications/${b.id}/reject/`, { key: t.key, body: { reason: 'No audience in our market' } });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'rejected', reason: 'No audience in our market', member_id: null });
    const twice = await api('POST', `/v1/applications/${b.id}/reject/`, { key: t.key, body: {} });
    expect(twice.status).toBe(200);
    expect(twice.body).toEqual(rejected.body);
    expect((await api('POST', `/v1/applications/${b.id}/approve/`, { key: t.key })).status).toBe(409);
    const rejection = await messageFor((m) => m.application_id === b.id);
    expect(rejection).toMatchObject({ template: 'application-rejected', key: `rejected-${b.id}`, email: b.email });
    expect(JSON.stringify(rejection)).not.toContain('No audience');

    expect(await count(t, '&status=approved')).toBe(1);
    expect(await count(t, '&status=rejected')).toBe(1);
    expect(await count(t, '&status=pending')).toBe(0);
    // A rejected applicant may apply again (no pending application holds the address).
    expect(await getItem(applicationKeys.applicationEmailClaim(t.accountId, b.email))).toBeUndefined();
  });

  it('approve racing reject: exactly one wins, the other answers 409; the member is created at most once and the counts add up', async () => {
    for (let round = 0; round < 3; round++) {
      const a = (await applied(t, c)).application;
      const membersBefore = (await api('GET', '/v1/members/?page_size=1', { key: t.key })).body.count;
      const [approve, reject] = await Promise.all([
        api('POST', `/v1/applications/${a.id}/approve/`, { key: t.key }),
        api('POST', `/v1/applications/${a.id}/reject/`, { key: t.key, body: { reason: 'race' } }),
      ]);
      expect([approve.status, reject.status].sort()).toEqual([200, 409]);
      const final = await api('GET', `/v1/applications/${a.id}/`, { key: t.key });
      const won = approve.status === 200 ? 'approved' : 'rejected';
      expect(final.body.status).toBe(won);
      const members = (await api('GET', '/v1/members/?page_size=1', { key: t.key })).body.count;
      expect(members).toBe(membersBefore + (won === 'approved' ? 1 : 0));
    }
    const [all, pending, approved, rejected] = await Promise.all([
      count(t),
      count(t, '&status=pending'),
      count(t, '&status=approved'),
      count(t, '&status=rejected'),
    ]);
    expect(pending).toBe(0);
    expect(approved + rejected).toBe(all);
  });

  it('lists newest first with filters, exact counts and cursors; gets one; another account sees 404', async () => {
    const other = await campaign(t);
    const mine = [(await applied(t, other)).application, (await applied(t, other)).application, (await applied(t, other)).application];
    await api('POST', `/v1/applications/${mine[0].id}/reject/`, { key: t.key, body: {} });

    const page1 = await api('GET', `/v1/applications/?campaign=${other.id}&page_size=2`, { key: t.key });
    expect(page1.status).toBe(200);
    expect(page1.body.count).toBe(3);
    expect(page1.body.results.map((a: { id: string }) => a.id)).toEqual([mine[2].id, mine[1].id]);
    const page2 = await api('GET', new URL(page1.body.next).pathname + new URL(page1.body.next).search, { key: t.key });
    expect(page2.body.results.map((a: { id: string }) => a.id)).toEqual([mine[0].id]);
    expect(page2.body.next).toBeNull();
    const pendingHere = await api('GET', `/v1/applications/?campaign=${other.id}&status=pending`, { key: t.key });
    expect({ count: pendingHere.body.count, ids: pendingHere.body.results.map((a: { id: string }) => a.id) }).toEqual({
      count: 2,
      ids: [mine[2].id, mine[1].id],
    });
    const rejectedAll = await api('GET', '/v1/applications/?status=rejected', { key: t.key });
    expect(rejectedAll.body.results.every((a: { status: string }) => a.status === 'rejected')).toBe(true);
    expect(rejectedAll.body.count).toBe(rejectedAll.body.results.length);
    expect((await api('GET', '/v1/applications/?status=maybe', { key: t.key })).status).toBe(400);
    expect((await api('GET', '/v1/applications/?campaign=zzz', { key: t.key })).body).toMatchObject({ count: 0, results: [] });

    const got = await api('GET', `/v1/applications/${mine[1].id}/`, { key: t.key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(mine[1]);

    const stranger = await tenant();
    for (const [method, path] of [
      ['GET', `/v1/applications/${mine[1].id}/`],
      ['POST', `/v1/applications/${mine[1].id}/approve/`],
      ['POST', `/v1/applications/${mine[1].id}/reject/`],
    ] as const) {
      const res = await api(method, path, { key: stranger.key, ...(method === 'POST' ? { body: {} } : {}) });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: { detail: 'Not found.' } });
    }
    expect((await api('GET', '/v1/applications/', { key: stranger.key })).body.count).toBe(0);
    expect((await api('GET', `/v1/applications/${mine[1].id}/`, { key: t.key })).body.status).toBe('pending');
    expect((await api('GET', '/v1/applications/app_nope/', { key: t.key })).status).toBe(404);
  });

  it('decisions are member writes: a viewer is refused, an admin may', async () => {
    const a = (await applied(t, c)).application;
    const viewer = await loginAs(t.accountId, 'viewer');
    const refused = await api('POST', `/v1/applications/${a.id}/approve/`, { headers: viewer.headers });
    expect(refused.status).toBe(403);
    expect((await api('GET', `/v1/applications/${a.id}/`, { headers: viewer.headers })).status).toBe(200);
    const admin = await loginAs(t.accountId, 'admin');
    expect((await api('POST', `/v1/applications/${a.id}/approve/`, { headers: admin.headers })).status).toBe(200);
  });
});

describe('the operator CLI', () => {
  /** The admin CLI's `main` in this process (test/support/admin-cli.ts): its exit code and its one JSON line. */
  async function admin(args: string[]): Promise<{ code: number | null; out: any; err: string }> {
    const { code, stdout, stderr } = await adminInProcess(args);
    let out: unknown = null;
    try {
      out = JSON.parse(stdout.trim());
    } catch {
      out = null;
    }
    return { code, out, err: stderr };
  }

  it('applications list, approve and reject: the same flows as the API, 1 for a refused decision, 2 for bad arguments', async () => {
    const t = await tenant();
    const c = await campaign(t);
    const a = (await applied(t, c)).application;
    const b = (await applied(t, c)).application;
    const listed = await admin(['applications', 'list', '--account', t.accountId, '--status', 'pending']);
    expect(listed.code).toBe(0);
    expect({ count: listed.out.count, ids: listed.out.results.map((x: { id: string }) => x.id) }).toEqual({ count: 2, ids: [b.id, a.id] });
    const approved = await admin(['applications', 'approve', '--account', t.accountId, '--application', a.id]);
    expect(approved.code).toBe(0);
    expect(approved.out).toMatchObject({ id: a.id, status: 'approved', member_id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const rejected = await admin(['applications', 'reject', '--account', t.accountId, '--application', b.id, '--reason', 'not a fit']);
    expect(rejected.out).toMatchObject({ id: b.id, status: 'rejected', reason: 'not a fit' });
    const refused = await admin(['applications', 'approve', '--account', t.accountId, '--application', b.id]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('rejected');
    expect((await admin(['applications', 'list', '--account', t.accountId, '--status', 'maybe'])).code).toBe(2);
    expect((await api('GET', `/v1/applications/${a.id}/`, { key: t.key })).body.status).toBe('approved');
  }, 120_000);
});
