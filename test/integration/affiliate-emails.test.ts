// Emails to affiliates and applicants (docs/affiliate-emails.md) on real parts: DynamoDB Local, the local
// SQS with the real member-emails worker behind a poller, writing the outbox (.eml files, as under `npm
// start`) through a sender that counts its calls. The messages come from the real triggers where this
// part owns them (mark-paid, referral creation, the monthly job) and are published as the application
// flows publish them otherwise. Also GET /v1/email-templates/ (route ListEmailTemplates), the previews.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workers } from '../../functions/workers';
import type { Pollers } from '../../infra/local/pollers';
import { resetConfig } from '../../shared/config';
import { affiliateEmailAllowed } from '../../shared/email/affiliate-emails';
import { applyEmailEvent } from '../../shared/email/email-events';
import { startMonthlySummaries } from '../../shared/email/affiliate-summary';
import { memberEmailHandler } from '../../shared/email/member-emails';
import { outboxFileName, outboxSender } from '../../shared/email/outbox-sender';
import type { EmailSender, OutgoingEmail } from '../../shared/email/sender';
import { approveReward } from '../../shared/flows/lifecycle';
import { publish } from '../../shared/queue/publish';
import type { AffiliateEmailMessage } from '../../shared/queue/queues';
import { getEmailMarker, setAccountSender } from '../../shared/store/emails';
import { getItem } from '../../shared/store/ops';
import { monthOf } from '../../shared/store/reports';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys } from '../../shared/store/table';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let pollers: Pollers;
let outbox: string;
const previousOutbox = process.env.EMAIL_OUTBOX_DIR;
const sent: OutgoingEmail[] = [];

const sender: EmailSender = {
  async send(email) {
    const result = await outboxSender(outbox).send(email);
    sent.push(email);
    return result;
  },
};

beforeAll(async () => {
  outbox = mkdtempSync(join(tmpdir(), 'refloop-affiliate-emails-'));
  process.env.EMAIL_OUTBOX_DIR = outbox;
  resetConfig();
  queues = await startTestQueues();
  // Only the email worker: the other queues' messages (webhook events, coupons) stay where they are.
  pollers = startTestPollers(queues, {
    workers: workers.filter((w) => w.name === 'MemberEmails'),
    handlers: { MemberEmails: memberEmailHandler(() => sender) },
  });
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  rmSync(outbox, { recursive: true, force: true });
  process.env.EMAIL_OUTBOX_DIR = previousOutbox;
  resetConfig();
});

interface Tenant {
  accountId: string;
  key: string;
}

let n = 0;
const unique = (p: string) => `${p}-${Date.now().toString(36)}-${++n}`;
const call = (t: Tenant, method: string, path: string, body?: unknown) =>
  api(method, path, { key: t.key, ...(body === undefined ? {} : { body }) });
const drained = () => queues.drained(['member-emails'], 20_000);
const sendsFor = (key: string) => sent.filter((e) => e.key === key).length;
const sentTo = (address: string) => sent.filter((e) => e.to === address);
const readEml = (key: string) => readFileSync(join(outbox, outboxFileName(key)), 'utf8');
const message = (m: Omit<AffiliateEmailMessage, 'kind'>): AffiliateEmailMessage => ({ kind: 'affiliate-email', ...m });
const markerState = async (t: Tenant, key: string) => (await getEmailMarker(t.accountId, key))?.state;

async function tenant(settings?: { new_referral?: boolean; monthly_summary?: boolean }): Promise<Tenant> {
  const { accountId, apiKey } = await newAccount();
  expect(await setAccountSender(accountId, { address: 'partners@acme.example', name: 'Acme Partners' })).toBe(true);
  const t = { accountId, key: apiKey };
  if (settings) {
    const res = await call(t, 'PATCH', '/v1/account/', { affiliate_emails: settings });
    expect(res.status).toBe(200);
    expect(res.body.affiliate_emails).toMatchObject(settings);
  }
  return t;
}

async function campaign(t: Tenant): Promise<{ id: string; name: string }> {
  const res = await call(t, 'POST', '/v1/campaigns/', {
    name: unique('Partners'),
    allows_commission: true,
    commission_amount: '4.00',
    hold_days: 0,
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function member(t: Tenant, campaignId: string, extra: Record<string, unknown> = {}) {
  const name = unique('aff');
  const res = await call(t, 'POST', '/v1/members/', {
    identifier: name,
    email: `${name}@example.com`,
    first_name: 'Alex',
    campaign: { id: campaignId },
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; code: string; email: string };
}

async function referral(t: Tenant, code: string) {
  const user = unique('user');
  const res = await call(t, 'POST', '/v1/referrals/', { user_identifier: user, member_code: code });
  expect(res.status).toBe(200);
  return { id: res.body.id as string, user };
}

/** A member's due payout of 4.00 USD (a commission recorded and approved). */
async function duePayout(t: Tenant, m: { code: string }): Promise<string> {
  const r = await referral(t, m.code);
  const stored = toReferral(await getItem(keys.referral(t.accountId, r.id)));
  if (!stored) throw new Error('referral missing');
  const recorded = await recordRewards(
    t.accountId,
    stored,
    [{ payment_id: Date.now() + n++, type: 'commission', amount: 400, currency: 'USD' }],
    false,
    true,
  );
  const approved = await approveReward(t.accountId, recorded.rewards[0]!.id);
  expect(approved.payout_id).toBeTruthy();
  return approved.payout_id!;
}

const UNSUBSCRIBE = /^List-Unsubscribe: <(https:\/\/api\.test\/unsubscribe\/[A-Za-z0-9_-]{43}\/)>\r$/m;

describe('emails to affiliates', () => {
  it('payout-sent after mark-paid: once per payout, with the amount, currency and where; one-click unsubscribe', async () => {
    const t = await tenant();
    const c = await campaign(t);
    const m = await member(t, c.id, { payout_email: 'alex@pay.example' });
    const payoutId = await duePayout(t, m);
    const paid = await call(t, 'POST', `/v1/payouts/${payoutId}/mark-paid/`, { reference: 'WISE-77' });
    expect(paid.status).toBe(200);
    const key = `payout-sent-${payoutId}`;
    await pollUntil(async () => (await markerState(t, key)) === 'sent', { timeoutMs: 15_000 });

    const eml = readEml(key);
    expect(eml).toContain('From: "Acme Partners" <partners@acme.example>\r\n');
    expect(eml).toContain(`To: ${m.email}\r\n`);
    expect(eml).toContain('Subject: Your payout of 4.00 USD is on its way\r\n');
    expect(eml).toContain('We have sent you 4.00 USD, to alex@pay.example.');
    expect(eml).toContain('Its reference: WISE-77.');
    expect(eml).toMatch(UNSUBSCRIBE);
    expect(eml).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n');
    expect(eml).toContain(`X-Refloop-member-id: ${m.id}\r\n`);

    // Exactly once: the mark-paid repeated (it queues again) and copies of the message send nothing more.
    expect((await call(t, 'POST', `/v1/payouts/${payoutId}/mark-paid/`, {})).status).toBe(200);
    const copy = message({ template: 'payout-sent', account_id: t.accountId, key, payout_id: payoutId, member_id: m.id });
    await Promise.all([publish('member-emails', copy), publish('member-emails', copy), publish('member-emails', copy)]);
    await drained();
    expect(sendsFor(key)).toBe(1);
  });

  it("honours the member's opt-out and a bounced address; a payout not paid sends nothing", async () => {
    const t = await tenant();
    const c = await campaign(t);
    const quiet = await member(t, c.id, { payout_email: 'quiet@pay.example' });
    expect((await call(t, 'PATCH', `/v1/members/${quiet.id}/`, { email_opt_out: true })).status).toBe(200);
    const quietPayout = await duePayout(t, quiet);
    expect((await call(t, 'POST', `/v1/payouts/${quietPayout}/mark-paid/`, {})).status).toBe(200);
    await pollUntil(async () => (await markerState(t, `payout-sent-${quietPayout}`)) === 'skipped', { timeoutMs: 15_000 });
    expect(await getEmailMarker(t.accountId, `payout-sent-${quietPayout}`)).toMatchObject({ reason: 'member opted out' });

    // What SES publishes (through EventBridge) for a hard bounce of an email to the member.
    const bouncy = await member(t, c.id, { payout_email: 'bouncy@pay.example' });
    expect(
      await applyEmailEvent({
        source: 'aws.ses',
        'detail-type': 'Email Bounced',
        detail: {
          eventType: 'Bounce',
          bounce: { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: bouncy.email }] },
          mail: { tags: { account_id: [t.accountId], member_id: [bouncy.id] } },
        },
      }),
    ).toBe('suppressed');
    const bouncyPayout = await duePayout(t, bouncy);
    expect((await call(t, 'POST', `/v1/payouts/${bouncyPayout}/mark-paid/`, {})).status).toBe(200);
    await pollUntil(async () => (await markerState(t, `payout-sent-${bouncyPayout}`)) === 'skipped', { timeoutMs: 15_000 });
    expect(await getEmailMarker(t.accountId, `payout-sent-${bouncyPayout}`)).toMatchObject({ reason: 'address bounced or complained' });

    const due = await member(t, c.id, { payout_email: 'due@pay.example' });
    const duePayoutId = await duePayout(t, due);
    await publish('member-emails', message({ template: 'payout-sent', account_id: t.accountId, payout_id: duePayoutId }));
    await pollUntil(async () => (await markerState(t, `payout-sent-${duePayoutId}`)) === 'skipped', { timeoutMs: 15_000 });
    expect(await getEmailMarker(t.accountId, `payout-sent-${duePayoutId}`)).toMatchObject({ reason: 'payout is due' });
    expect(sentTo(quiet.email).length + sentTo(bouncy.email).length + sentTo(due.email).length).toBe(0);
  });

  it('new-referral: only when the account turned it on, once per referral, never naming the referred user', async () => {
    const on = await tenant({ new_referral: true });
    const c = await campaign(on);
    const m = await member(on, c.id);
    const quiet = await member(on, c.id);
    expect((await call(on, 'PATCH', `/v1/members/${quiet.id}/`, { email_opt_out: true })).status).toBe(200);
    const r = await referral(on, m.code);
    const rq = await referral(on, quiet.code);
    const key = `new-referral-${r.id}`;
    await pollUntil(async () => (await markerState(on, key)) === 'sent', { timeoutMs: 15_000 });
    await pollUntil(async () => (await markerState(on, `new-referral-${rq.id}`)) === 'skipped', { timeoutMs: 15_000 });
    const eml = readEml(key);
    expect(eml).toContain('Subject: Someone signed up through your link\r\n');
    expect(eml).toContain(`(code ${m.code})`);
    expect(eml).not.toContain(r.user);
    expect(eml).toMatch(UNSUBSCRIBE);
    // A replayed create is not a new referral; a copy of the message sends nothing more.
    expect((await call(on, 'POST', '/v1/referrals/', { user_identifier: r.user, member_code: m.code })).status).toBe(200);
    await publish(
      'member-emails',
      message({ template: 'new-referral', account_id: on.accountId, key, member_id: m.id, referral_id: r.id }),
    );
    await drained();
    expect(sendsFor(key)).toBe(1);

    // Off (the default): nothing is queued, and a message that arrives anyway is skipped.
    const off = await tenant();
    const offCampaign = await campaign(off);
    const offMember = await member(off, offCampaign.id);
    const offReferral = await referral(off, offMember.code);
    await drained();
    expect(await getEmailMarker(off.accountId, `new-referral-${offReferral.id}`)).toBeUndefined();
    await publish(
      'member-emails',
      message({ template: 'new-referral', account_id: off.accountId, member_id: offMember.id, referral_id: offReferral.id }),
    );
    await pollUntil(async () => (await markerState(off, `new-referral-${offReferral.id}`)) === 'skipped', { timeoutMs: 15_000 });
    expect(sentTo(offMember.email)).toEqual([]);
  });

  it('portal-login: a login link for a member, nothing for an unknown address, paced per address', async () => {
    const t = await tenant();
    const c = await campaign(t);
    const m = await member(t, c.id);
    await publish('member-emails', message({ template: 'portal-login', account_id: t.accountId, email: m.email.toUpperCase() }));
    const stranger = `${unique('nobody')}@example.com`;
    await publish('member-emails', message({ template: 'portal-login', account_id: t.accountId, email: stranger }));
    const [login] = await pollUntil(async () => (sentTo(m.email).length === 1 ? sentTo(m.email) : null), { timeoutMs: 15_000 });
    expect(login!.subject).toMatch(/^Your login link for /);
    expect(login!.text).toMatch(/Log in to your portal: https:\/\/api\.test\/portal\/[^/]+\/login\/#token=[A-Za-z0-9_-]+/);
    expect(login!.headers?.['List-Unsubscribe']).toBeUndefined();
    expect(readEml(login!.key)).not.toContain('List-Unsubscribe');
    await drained();
    expect(sentTo(stranger)).toEqual([]);

    // Five asks for one address at once: the first two go out, then one per 5-minute window.
    const paced = await member(t, c.id);
    for (let i = 0; i < 5; i++)
      await publish('member-emails', message({ template: 'portal-login', account_id: t.accountId, email: paced.email }));
    await drained();
    await pollUntil(async () => (sentTo(paced.email).length >= 2 ? true : null), { timeoutMs: 10_000 });
    // 3 unless a window boundary passed meanwhile (then at most one more per window).
    expect(sentTo(paced.email).length).toBeGreaterThanOrEqual(2);
    expect(sentTo(paced.email).length).toBeLessThan(5);

    // The pacing itself, at fixed times: 2 at once, then 1 per 5 minutes.
    const start = Math.floor(Date.now() / 900_000) * 900_000 + 3_600_000 * 24 * 365;
    const address = `${unique('pace')}@example.com`;
    const allowed: boolean[] = [];
    for (let i = 0; i < 4; i++) allowed.push(await affiliateEmailAllowed(t.accountId, address, start + i * 1000));
    expect(allowed).toEqual([true, true, true, false]);
    expect(await affiliateEmailAllowed(t.accountId, address, start + 300_000)).toBe(true);
    expect(await affiliateEmailAllowed(t.accountId, address, start + 301_000)).toBe(false);
  });

  it('member-exists sends a login link; the approval a welcome with a login link and no unsubscribe, once', async () => {
    const t = await tenant();
    const c = await campaign(t);
    const m = await member(t, c.id);
    await publish('member-emails', message({ template: 'member-exists', account_id: t.accountId, campaign_id: c.id, email: m.email }));
    const [exists] = await pollUntil(async () => (sentTo(m.email).length === 1 ? sentTo(m.email) : null), { timeoutMs: 15_000 });
    expect(exists!.subject).toBe(`You are already in ${c.name}`);
    expect(exists!.text).toMatch(/Log in to your portal: https:\/\/api\.test\/portal\/[^/]+\/login\/#token=/);
    expect(exists!.headers?.['List-Unsubscribe']).toBeUndefined();

    const key = `approved-app_${unique('x')}`;
    const approved = message({ template: 'application-approved', account_id: t.accountId, key, campaign_id: c.id, member_id: m.id });
    await Promise.all([publish('member-emails', approved), publish('member-emails', approved)]);
    await pollUntil(async () => (await markerState(t, key)) === 'sent', { timeoutMs: 15_000 });
    await drained();
    expect(sendsFor(key)).toBe(1);
    const eml = readEml(key);
    expect(eml).toContain(`Subject: Welcome to ${c.name}\r\n`);
    expect(eml).toContain('Hi Alex,');
    expect(eml).toMatch(/Log in to your portal: https:\/\/api\.test\/portal\/[^/]+\/login\/#token=/);
    expect(eml).toMatch(/login page: https:\/\/api\.test\/portal\/[^/]+\/login\/\r\n/);
    expect(eml).not.toContain('List-Unsubscribe');
    expect(eml.toLowerCase()).not.toContain('unsubscribe');
  });

  it('a rejection: neutral, no reason, with a one-click unsubscribe that stops the next applicant email to the address', async () => {
    const t = await tenant();
    const c = await campaign(t);
    const email = `${unique('applicant')}@example.com`;
    const key = `rejected-app_${unique('r')}`;
    await publish('member-emails', message({ template: 'application-rejected', account_id: t.accountId, key, campaign_id: c.id, email }));
    await pollUntil(async () => (await markerState(t, key)) === 'sent', { timeoutMs: 15_000 });
    const eml = readEml(key);
    expect(eml).toContain(`Subject: Your application to ${c.name}\r\n`);
    expect(eml).toContain('not able to accept it at this time');
    expect(eml).not.toMatch(/reason/i);
    const [, url] = UNSUBSCRIBE.exec(eml)!;
    const path = new URL(url!).pathname;
    const page = await api('GET', path);
    expect(page.status).toBe(200);
    expect(page.text).toContain('to this address about applications');
    const done = await api('POST', path, {
      rawBody: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(done.status).toBe(200);
    expect(done.text).toContain('no more emails about applications');

    const again = `rejected-app_${unique('r')}`;
    await publish(
      'member-emails',
      message({ template: 'application-rejected', account_id: t.accountId, key: again, campaign_id: c.id, email }),
    );
    await pollUntil(async () => (await markerState(t, again)) === 'skipped', { timeoutMs: 15_000 });
    expect(await getEmailMarker(t.accountId, again)).toMatchObject({ reason: 'address opted out' });
    expect(sentTo(email)).toHaveLength(1);
  });

  it('application-confirm for a join request that is gone sends nothing', async () => {
    const t = await tenant();
    const email = `${unique('late')}@example.com`;
    await publish(
      'member-emails',
      message({ template: 'application-confirm', account_id: t.accountId, email, join_request_id: 'app_0000' }),
    );
    await drained();
    expect(sentTo(email)).toEqual([]);
  });

  it('monthly summary: the job queues one per member of an account that turned it on; figures from the report buckets; a quiet month sends nothing', async () => {
    const on = await tenant({ monthly_summary: true });
    const c = await campaign(on);
    const busy = await member(on, c.id);
    const idle = await member(on, c.id);
    await referral(on, busy.code);
    await referral(on, busy.code);
    const off = await tenant();
    const offMember = await member(off, (await campaign(off)).id);
    await referral(off, offMember.code);

    const month = monthOf(Math.floor(Date.now() / 1000));
    const run = await startMonthlySummaries({ month });
    expect(run.members).toBeGreaterThanOrEqual(2);
    const key = `monthly-summary-${busy.id}-${month}`;
    await pollUntil(async () => (await markerState(on, key)) === 'sent', { timeoutMs: 20_000 });
    await pollUntil(async () => (await markerState(on, `monthly-summary-${idle.id}-${month}`)) === 'skipped', { timeoutMs: 20_000 });
    const eml = readEml(key);
    expect(eml).toContain('0 clicks, 2 referrals and 0 conversions.');
    expect(eml).toMatch(UNSUBSCRIBE);
    expect(await getEmailMarker(off.accountId, `monthly-summary-${offMember.id}-${month}`)).toBeUndefined();

    // A second run (a retried job) sends nothing twice; outside the 1st of a month the job does nothing.
    await startMonthlySummaries({ month });
    await drained();
    expect(sendsFor(key)).toBe(1);
    expect(await startMonthlySummaries({ nowMs: Date.UTC(2026, 5, 2) })).toEqual({ accounts: 0, members: 0 });
  });

  it('the whole way from the public form: the confirmation email confirms, auto-approval welcomes, then an existing member or a pending application gets its own email', async () => {
    const t = await tenant();
    const slug = (await call(t, 'GET', '/v1/account/')).body.slug as string;
    const open = async (approval: 'auto' | 'manual') => {
      const res = await call(t, 'POST', '/v1/campaigns/', { name: unique('Creators'), signup: { enabled: true, approval, questions: [] } });
      expect(res.status).toBe(201);
      return res.body as { id: string; name: string; slug: string };
    };
    const apply = async (c: { slug: string }, address: string) => {
      const res = await api('POST', `/join/v1/${slug}/${c.slug}/applications/`, {
        body: { email: address, name: 'Casey Jones', country: 'GB', answers: {}, accepted_terms: true },
        sourceIp: `2001:db8:aff::${(++n).toString(16)}`,
      });
      expect(res.status).toBe(202);
    };
    const mail = (address: string, subject: string) =>
      pollUntil(async () => sentTo(address).find((e) => e.subject === subject) ?? null, { timeoutMs: 15_000 });

    const auto = await open('auto');
    const casey = `${unique('casey')}@example.com`;
    await apply(auto, casey);
    const confirm = await mail(casey, `Confirm your email to apply to ${auto.name}`);
    expect(confirm.headers?.['List-Unsubscribe']).toBeUndefined();
    const link = /Confirm my email: (https:\/\/api\.test(\/join\/confirm\/[A-Za-z0-9_-]+\/))/.exec(confirm.text);
    expect(link).not.toBeNull();
    expect((await api('GET', link![2]!)).status).toBe(200);
    expect((await api('POST', link![2]!)).status).toBe(200);
    const welcome = await mail(casey, `Welcome to ${auto.name}`);
    expect(welcome.text).toMatch(/Log in to your portal: https:\/\/api\.test\/portal\/[^/]+\/login\/#token=/);
    expect(welcome.headers?.['List-Unsubscribe']).toBeUndefined();

    // The same address applies again: already a member, so a login link instead of a second application.
    await apply(auto, casey);
    const exists = await mail(casey, `You are already in ${auto.name}`);
    expect(exists.text).toMatch(/Log in to your portal: https:\/\/api\.test\/portal\/[^/]+\/login\/#token=/);

    // A pending application (manual approval) applied for again: "it is being reviewed".
    const manual = await open('manual');
    const dana = `${unique('dana')}@example.com`;
    await apply(manual, dana);
    const danaConfirm = await mail(dana, `Confirm your email to apply to ${manual.name}`);
    const danaLink = /Confirm my email: https:\/\/api\.test(\/join\/confirm\/[A-Za-z0-9_-]+\/)/.exec(danaConfirm.text);
    expect((await api('POST', danaLink![1]!)).status).toBe(200);
    await apply(manual, dana);
    const pending = await mail(dana, `Your application to ${manual.name}`);
    expect(pending.text).toContain('your application is being reviewed');
    expect(sentTo(dana)).toHaveLength(2);
  });

  it('GET /v1/email-templates/ (ListEmailTemplates): every template rendered with the account sender, read-only', async () => {
    const t = await tenant();
    const res = await call(t, 'GET', '/v1/email-templates/');
    expect(res.status).toBe(200);
    const results = res.body.results as { name: string; transactional: boolean; subject: string; text: string; html: string }[];
    expect(results.map((r) => r.name)).toEqual([
      'application-confirm',
      'application-exists',
      'member-exists',
      'application-approved',
      'application-rejected',
      'portal-login',
      'payout-sent',
      'new-referral',
      'monthly-summary',
    ]);
    for (const r of results) {
      expect(r.text).toContain('-- Acme Partners');
      expect(r.html).toContain('<!doctype html>');
      expect(r.text.includes('Unsubscribe from these emails')).toBe(!r.transactional);
    }
    expect((await api('GET', '/v1/email-templates/')).status).toBe(401);
  });
});
