// GET/PATCH /v1/fraud-rules/ and POST /v1/fraud-rules/preview/ through the real handlers (the local
// gateway's dispatch) on DynamoDB Local: the defaults, a PATCH merged into them (concurrent PATCHes of
// different settings both kept), bad input as 400 field errors (never a 500), roles, another account's
// settings untouched; the preview's counts and examples on seeded facts (referrals through the real
// browser-script endpoint, the rest written as the store writes them), its thresholds checked, and
// `partial` when a read cap is reached.
import { DEFAULT_FRAUD_SETTINGS } from '../../shared/domain/fraud';
import { previewRule } from '../../shared/flows/fraud-preview';
import { dayOf } from '../../shared/store/reports';
import { api } from '../support/api';
import { loginAs } from '../support/dashboard';
import { newAccount } from '../support/fixtures';
import { DAY, nowS, putApplication, putMemberDay, putReferral } from '../support/fraud-facts';

type Account = Awaited<ReturnType<typeof newAccount>>;

const rules = (a: Account, method = 'GET', body?: unknown) =>
  api(method, '/v1/fraud-rules/', { key: a.apiKey, ...(body === undefined ? {} : { body }) });
const preview = (a: Account, body: unknown) => api('POST', '/v1/fraud-rules/preview/', { key: a.apiKey, body });

let serial = 0;
async function member(a: Account) {
  const code = `FR${Date.now().toString(36).toUpperCase()}${++serial}`;
  const res = await api('POST', '/v1/members/', {
    key: a.apiKey,
    body: { identifier: `m-${code}`, email: `${code.toLowerCase()}@example.com`, code },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; code: string };
}

describe('GET and PATCH /v1/fraud-rules/', () => {
  it('answers the defaults, merges a PATCH into them and keeps other accounts apart', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const initial = await rules(a);
    expect([initial.status, initial.body]).toEqual([200, DEFAULT_FRAUD_SETTINGS]);

    const patched = await rules(a, 'PATCH', { duplicate_ip: { action: 'hold', max_referrals: 5 }, velocity: { history_days: 14 } });
    const expected = {
      ...DEFAULT_FRAUD_SETTINGS,
      duplicate_ip: { action: 'hold', max_referrals: 5, window_hours: 24 },
      velocity: { ...DEFAULT_FRAUD_SETTINGS.velocity, history_days: 14 },
    };
    expect([patched.status, patched.body]).toEqual([200, expected]);
    expect((await rules(a)).body).toEqual(expected);
    // A later PATCH changes only what it names.
    const again = await rules(a, 'PATCH', { duplicate_ip: { window_hours: 2 }, disposable_email: { action: 'off' } });
    expect(again.body).toEqual({
      ...expected,
      duplicate_ip: { action: 'hold', max_referrals: 5, window_hours: 2 },
      disposable_email: { action: 'off' },
    });
    expect((await rules(a, 'PATCH', {})).body).toEqual(again.body);
    // Another account still has the defaults.
    expect((await rules(b)).body).toEqual(DEFAULT_FRAUD_SETTINGS);
  });

  it('keeps every field of concurrent PATCHes of different settings', async () => {
    const a = await newAccount();
    const patches = [
      { click_spam: { ratio: 900 } },
      { click_spam: { min_clicks: 2000 } },
      { click_spam: { window_days: 14 } },
      { refund_rate: { max_percent: 40 } },
      { refund_rate: { action: 'flag' } },
      { self_referral: { action: 'flag' } },
    ];
    const answers = await Promise.all(patches.map((p) => rules(a, 'PATCH', p)));
    expect(answers.map((r) => r.status)).toEqual(patches.map(() => 200));
    expect((await rules(a)).body).toEqual({
      ...DEFAULT_FRAUD_SETTINGS,
      self_referral: { action: 'flag' },
      click_spam: { action: 'flag', ratio: 900, min_clicks: 2000, window_days: 14 },
      refund_rate: { action: 'flag', max_percent: 40, min_conversions: 5, window_days: 90 },
    });
  });

  it('refuses bad input with 400 field errors and changes nothing', async () => {
    const a = await newAccount();
    const cases: [unknown, Record<string, unknown[]>][] = [
      [{ nope: { action: 'flag' } }, { nope: [expect.stringContaining('Not a fraud rule')] }],
      [{ duplicate_ip: { max: 3 } }, { duplicate_ip: ['max: not a setting of duplicate_ip (action, max_referrals, window_hours).'] }],
      [
        { duplicate_ip: { constructor: 3 } },
        { duplicate_ip: ['constructor: not a setting of duplicate_ip (action, max_referrals, window_hours).'] },
      ],
      [{ duplicate_ip: { max_referrals: 0 } }, { duplicate_ip: ['max_referrals: must be between 1 and 1000.'] }],
      [{ velocity: { multiple: 1001 } }, { velocity: ['multiple: must be between 2 and 1000.'] }],
      [{ click_spam: { ratio: '500' } }, { click_spam: ['ratio: a valid integer is required.'] }],
      [{ refund_rate: { max_percent: 30.5 } }, { refund_rate: ['max_percent: a valid integer is required.'] }],
      [{ self_referral: { ratio: 3 } }, { self_referral: ['ratio: self_referral takes only an action.'] }],
      [{ disposable_email: { action: 'block' } }, { disposable_email: ['action: "block" is not a valid choice (off, flag, hold).'] }],
      [{ duplicate_ip: 'hold' }, { duplicate_ip: [expect.stringContaining('Expected an object')] }],
      [{ duplicate_ip: null }, { duplicate_ip: [expect.stringContaining('Expected an object')] }],
    ];
    for (const [body, fields] of cases) {
      const res = await rules(a, 'PATCH', body);
      expect({ body, status: res.status, answer: res.body }).toEqual({ body, status: 400, answer: fields });
    }
    const notObject = await rules(a, 'PATCH', 'hold');
    expect(notObject.status).toBe(400);
    const notJson = await api('PATCH', '/v1/fraud-rules/', {
      key: a.apiKey,
      rawBody: '{"duplicate_ip":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect((await rules(a)).body).toEqual(DEFAULT_FRAUD_SETTINGS);
  });

  it('lets every role read, only owner and admin change or preview, and needs a credential', async () => {
    const a = await newAccount();
    const viewer = await loginAs(a.accountId, 'viewer');
    const finance = await loginAs(a.accountId, 'finance');
    const admin = await loginAs(a.accountId, 'admin');
    expect((await api('GET', '/v1/fraud-rules/', { headers: viewer.headers })).status).toBe(200);
    for (const who of [viewer, finance]) {
      const patch = await api('PATCH', '/v1/fraud-rules/', { headers: who.headers, body: { duplicate_ip: { action: 'off' } } });
      expect(patch.status).toBe(403);
      const tried = await api('POST', '/v1/fraud-rules/preview/', { headers: who.headers, body: { rule: 'duplicate_ip' } });
      expect(tried.status).toBe(403);
    }
    const patch = await api('PATCH', '/v1/fraud-rules/', { headers: admin.headers, body: { duplicate_ip: { action: 'off' } } });
    expect([patch.status, patch.body.duplicate_ip.action]).toEqual([200, 'off']);
    expect((await api('POST', '/v1/fraud-rules/preview/', { headers: admin.headers, body: { rule: 'velocity' } })).status).toBe(200);
    expect((await api('GET', '/v1/fraud-rules/')).status).toBe(401);
  });
});

describe('POST /v1/fraud-rules/preview/', () => {
  it('counts what duplicate_ip would flag on referrals made by the browser script, with examples newest first', async () => {
    const a = await newAccount();
    const m = await member(a);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api('POST', '/js/v1/referrals/', {
        key: a.publishableKey,
        body: { member_code: m.code, user_identifier: `farm-${i}@example.com` },
        sourceIp: '198.51.100.77',
      });
      expect(res.status).toBe(200);
      ids.push(res.body.id);
    }
    // Another network, and an API referral (no address): never counted.
    await api('POST', '/js/v1/referrals/', {
      key: a.publishableKey,
      body: { member_code: m.code, user_identifier: 'else' },
      sourceIp: '198.51.100.78',
    });
    await api('POST', '/v1/referrals/', { key: a.apiKey, body: { member_code: m.code, user_identifier: 'api-user' } });

    const res = await preview(a, { rule: 'duplicate_ip' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rule: 'duplicate_ip', action: 'flag', window_days: 90, would_flag: 2, would_hold: 0, partial: false });
    expect(res.body.examples.map((e: { subject_id: string }) => e.subject_id)).toEqual([ids[4], ids[3]]);
    expect(res.body.examples[0]).toEqual({
      subject_type: 'referral',
      subject_id: ids[4],
      member_id: m.id,
      detail: expect.stringMatching(/^5 referrals from one network in \d+ minutes? \(more than 3 in 24 hours\)\.$/),
      at: expect.any(Number),
    });
    const lower = await preview(a, { rule: 'duplicate_ip', action: 'hold', thresholds: { max_referrals: 1 } });
    expect(lower.body).toMatchObject({ action: 'hold', would_flag: 4, would_hold: 0 });
    expect(lower.body.examples).toHaveLength(4);
    const off = await preview(a, { rule: 'duplicate_ip', action: 'off' });
    expect(off.body).toEqual({
      rule: 'duplicate_ip',
      action: 'off',
      window_days: 90,
      would_flag: 0,
      would_hold: 0,
      examples: [],
      partial: false,
    });
    // The preview saved nothing.
    expect((await rules(a)).body).toEqual(DEFAULT_FRAUD_SETTINGS);
  });

  it('counts the unpaid commissions a hold would take, disposable addresses and applications', async () => {
    const a = await newAccount();
    const now = nowS();
    const m1 = 'a'.repeat(32);
    const flagged = await putReferral(a.accountId, m1, {
      created_at: now - 3 * DAY,
      user: 'x@mailinator.com',
      rewards: [
        { status: 'pending' },
        { status: 'approved' },
        { status: 'paid' },
        { status: 'voided', void_reason: 'manual' },
        { type: 'credit' },
      ],
    });
    await putReferral(a.accountId, m1, { created_at: now - 2 * DAY, user: 'y@example.com', rewards: [{}] });
    // Older than 90 days: outside the preview.
    await putReferral(a.accountId, m1, { created_at: now - 91 * DAY, user: 'z@yopmail.com', rewards: [{}] });
    const app = await putApplication(a.accountId, { created_at: now - DAY, email: 'applicant@yopmail.com' });
    await putApplication(a.accountId, { created_at: now - DAY, email: 'fine@example.com' });

    const hold = await preview(a, { rule: 'disposable_email', action: 'hold' });
    expect(hold.status).toBe(200);
    expect(hold.body).toMatchObject({ action: 'hold', would_flag: 2, would_hold: 2, partial: false });
    expect(hold.body.examples).toEqual([
      {
        subject_type: 'application',
        subject_id: app,
        member_id: null,
        detail: "The applicant's email address is at yopmail.com, a disposable-address service.",
        at: now - DAY,
      },
      {
        subject_type: 'referral',
        subject_id: flagged,
        member_id: m1,
        detail: "The referred user's email address is at mailinator.com, a disposable-address service.",
        at: now - 3 * DAY,
      },
    ]);
    expect((await preview(a, { rule: 'disposable_email' })).body).toMatchObject({ action: 'flag', would_flag: 2, would_hold: 0 });
  });

  it('counts the conversions self_referral flagged in the 90 days', async () => {
    const a = await newAccount();
    const now = nowS();
    const detail = "The referred subscription was paid with the same card at stripe as the referring member's own subscription.";
    const flagged = await putReferral(a.accountId, 'e'.repeat(32), {
      created_at: now - 5 * DAY,
      converted_at: now - 4 * DAY,
      rewards: [{ status: 'pending' }],
      fraud_flags: [{ rule: 'self_referral', at: now - 4 * DAY, detail }],
    });
    await putReferral(a.accountId, 'e'.repeat(32), {
      created_at: now - 100 * DAY,
      fraud_flags: [{ rule: 'self_referral', at: now - 95 * DAY, detail }],
    });
    const res = await preview(a, { rule: 'self_referral' });
    expect(res.body).toEqual({
      rule: 'self_referral',
      action: 'hold',
      window_days: 90,
      would_flag: 1,
      would_hold: 1,
      examples: [{ subject_type: 'referral', subject_id: flagged, member_id: 'e'.repeat(32), detail, at: now - 4 * DAY }],
      partial: false,
    });
  });

  it('runs member rules on the days the worker would have screened the member', async () => {
    const a = await newAccount();
    const m = await member(a);
    const now = nowS();
    // Six conversions two days ago; three refunded yesterday; two commissions still unpaid.
    const refundedAt = now - DAY;
    for (let i = 0; i < 6; i++) {
      await putReferral(a.accountId, m.id, {
        created_at: now - 10 * DAY,
        converted_at: now - 2 * DAY,
        rewards:
          i < 3
            ? [{ status: 'voided', void_reason: 'refunded', voided_at: refundedAt }]
            : i < 5
              ? [{ status: 'pending' }]
              : [{ status: 'paid' }],
      });
    }
    await putMemberDay(a.accountId, m.id, dayOf(now - 2 * DAY), { conversions: 6 });
    await putMemberDay(a.accountId, m.id, dayOf(now - 10 * DAY), { referrals: 6 });

    const res = await preview(a, { rule: 'refund_rate' });
    expect(res.status).toBe(200);
    // Screened on the conversions' day (nothing refunded yet) and on the refunds' day (3 of 6: 50%).
    expect(res.body).toMatchObject({ rule: 'refund_rate', action: 'hold', would_flag: 1, would_hold: 2, partial: false });
    expect(res.body.examples).toEqual([
      {
        subject_type: 'member',
        subject_id: m.id,
        member_id: m.id,
        detail: '3 of 6 referrals converted in the last 90 days were refunded: 50% (the limit is 30%, with at least 5 conversions).',
        at: Math.min(now, Date.parse(`${dayOf(refundedAt)}T23:59:59Z`) / 1000),
      },
    ]);
    expect((await preview(a, { rule: 'refund_rate', thresholds: { max_percent: 50 } })).body.would_flag).toBe(0);

    // Click spam: 5,000 clicks and one conversion today (7 in the 7 days).
    await putMemberDay(a.accountId, m.id, dayOf(now), { link_clicks: 5000, conversions: 1 });
    const spam = await preview(a, { rule: 'click_spam' });
    expect(spam.body).toMatchObject({ action: 'flag', would_flag: 1, would_hold: 0 });
    expect(spam.body.examples[0].detail).toBe(
      '5,000 clicks and 7 conversions in 7 days: 714.29 clicks per conversion (the limit is 500 clicks per conversion, with at least 1,000 clicks).',
    );
    expect((await preview(a, { rule: 'click_spam', thresholds: { min_clicks: 5001 } })).body.would_flag).toBe(0);
  });

  it('checks the thresholds against the rule (400 keyed thresholds) and the body', async () => {
    const a = await newAccount();
    const cases: [unknown, Record<string, string[]>][] = [
      [
        { rule: 'duplicate_ip', thresholds: { ratio: 3 } },
        { thresholds: ['ratio: not a threshold of duplicate_ip (max_referrals, window_hours).'] },
      ],
      [
        { rule: 'duplicate_ip', thresholds: { toString: 3 } },
        { thresholds: ['toString: not a threshold of duplicate_ip (max_referrals, window_hours).'] },
      ],
      [{ rule: 'duplicate_ip', thresholds: { window_hours: 169 } }, { thresholds: ['window_hours: must be between 1 and 168.'] }],
      [{ rule: 'velocity', thresholds: { mean_days: 6 } }, { thresholds: ['mean_days: must be between 7 and 90.'] }],
      [{ rule: 'self_referral', thresholds: { x: 1 } }, { thresholds: ['x: self_referral takes no thresholds.'] }],
      [{ rule: 'click_spam', thresholds: { ratio: 2.5 } }, { thresholds: ['ratio: a valid integer is required.'] }],
      [{ rule: 'click_spam', thresholds: [] }, { thresholds: ['Expected an object of thresholds.'] }],
      [{ rule: 'nope' }, { rule: ['"nope" is not a valid choice.'] }],
      [{ rule: 'velocity', action: 'block' }, { action: ['"block" is not a valid choice.'] }],
      [{}, { rule: ['This field is required.'] }],
    ];
    for (const [body, fields] of cases) {
      const res = await preview(a, body);
      expect({ body, status: res.status, answer: res.body }).toEqual({ body, status: 400, answer: fields });
    }
  });

  it('says partial when more facts existed than it reads', async () => {
    const a = await newAccount();
    const now = nowS();
    for (let i = 0; i < 4; i++)
      await putReferral(a.accountId, 'd'.repeat(32), { created_at: now - (i + 1) * 60, user: `u${i}@mailinator.com` });
    const caps = { referrals: 3, applications: 10, members: 10 };
    const capped = await previewRule(a.accountId, { rule: 'disposable_email' }, now, caps);
    expect([capped.would_flag, capped.partial]).toEqual([3, true]);
    const whole = await previewRule(a.accountId, { rule: 'disposable_email' }, now, { ...caps, referrals: 4 });
    expect([whole.would_flag, whole.partial]).toEqual([4, false]);
    expect((await preview(a, { rule: 'disposable_email' })).body).toMatchObject({ would_flag: 4, partial: false });
  });
});
