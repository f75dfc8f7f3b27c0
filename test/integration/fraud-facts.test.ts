// The fraud rules' facts (shared/flows/fraud-facts.ts) on DynamoDB Local: the browser script's referral
// records the client address's digest (the API's carries none); a member's referrals come newest first and
// stop at `since`; the referred user's email and refunds read from the referral; the account's recent
// applications with their digests; a member's days with gaps as zeros. All by Query (no-scan guard).
import { ipHash } from '../../shared/domain/visitors';
import { applicationFact, memberDays, memberReferralFacts, recentApplicationFacts, referralFact } from '../../shared/flows/fraud-facts';
import { dayOf } from '../../shared/store/reports';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';
import { DAY, nowS, putApplication, putMemberDay, putReferral } from '../support/fraud-facts';

async function member(a: { apiKey: string }, code: string) {
  const res = await api('POST', '/v1/members/', {
    key: a.apiKey,
    body: { identifier: `m-${code}`, email: `${code.toLowerCase()}@example.com`, code },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; code: string };
}

describe('fraud facts', () => {
  it("records the browser script's client address digest on its referral, and none on an API referral", async () => {
    const a = await newAccount();
    const m = await member(a, `FF${Date.now().toString(36).toUpperCase()}`);
    const js = await api('POST', '/js/v1/referrals/', {
      key: a.publishableKey,
      body: { member_code: m.code, user_identifier: 'js-user@example.com' },
      sourceIp: '203.0.113.9',
    });
    expect(js.status).toBe(200);
    const viaApi = await api('POST', '/v1/referrals/', { key: a.apiKey, body: { member_code: m.code, user_identifier: 'api-user' } });
    expect(viaApi.status).toBe(200);

    expect(await referralFact(a.accountId, js.body.id)).toEqual({
      id: js.body.id,
      member_id: m.id,
      created_at: expect.any(Number),
      ip_hash: ipHash('203.0.113.9'),
      email: 'js-user@example.com',
      converted_at: null,
      refunded: false,
    });
    expect(await referralFact(a.accountId, viaApi.body.id)).toMatchObject({ ip_hash: null, email: null });
    // The digest is not part of the API object.
    const shown = await api('GET', `/v1/referrals/${js.body.id}/`, { key: a.apiKey });
    expect(shown.status).toBe(200);
    expect(shown.body).not.toHaveProperty('ip_hash');
    expect(await referralFact(a.accountId, 'f'.repeat(32))).toBeNull();
    expect(await referralFact(a.accountId, 'not-an-id')).toBeNull();
  });

  it("reads a member's referrals newest first from `since`, with emails and refunds", async () => {
    const a = await newAccount();
    const memberId = 'a'.repeat(32);
    const now = nowS();
    const old = await putReferral(a.accountId, memberId, { created_at: now - 10 * DAY });
    const refunded = await putReferral(a.accountId, memberId, {
      created_at: now - 3 * DAY,
      user: 'user-123',
      subscription_email: 'payer@example.com',
      converted_at: now - 2 * DAY,
      rewards: [{ status: 'voided', void_reason: 'refunded', voided_at: now - DAY }],
    });
    const clawedBack = await putReferral(a.accountId, memberId, {
      created_at: now - 2 * DAY,
      converted_at: now - DAY,
      rewards: [{}, { amount: -1000, reverses: 'x' }],
    });
    const plain = await putReferral(a.accountId, memberId, { created_at: now - DAY, ip_hash: 'net', user: 'someone@example.com' });
    await putReferral(a.accountId, 'b'.repeat(32), { created_at: now - DAY });

    const facts = await memberReferralFacts(a.accountId, memberId, now - 5 * DAY);
    expect(facts.map((f) => f.id)).toEqual([plain, clawedBack, refunded]);
    expect(facts.map((f) => [f.email, f.refunded, f.ip_hash])).toEqual([
      ['someone@example.com', false, 'net'],
      [null, true, null],
      ['payer@example.com', true, null],
    ]);
    expect((await memberReferralFacts(a.accountId, memberId, now - 30 * DAY)).map((f) => f.id)).toContain(old);
    expect(await memberReferralFacts(a.accountId, memberId, now + DAY)).toEqual([]);
  });

  it("reads the account's recent applications, one application, and a member's days", async () => {
    const a = await newAccount();
    const now = nowS();
    await putApplication(a.accountId, { created_at: now - 3 * DAY, email: 'old@example.com', ip_hash: 'net' });
    const recent = await putApplication(a.accountId, { created_at: now - 60, email: 'new@yopmail.com', ip_hash: 'net' });
    const apps = await recentApplicationFacts(a.accountId, now - DAY);
    expect(apps).toEqual([
      { id: recent, campaign_id: 'c0ffee00', created_at: now - 60, ip_hash: 'net', email: 'new@yopmail.com', member_id: null },
    ]);
    expect(await applicationFact(a.accountId, recent)).toEqual(apps[0]);
    expect(await applicationFact(a.accountId, 'app_nope')).toBeNull();

    const memberId = 'c'.repeat(32);
    await putMemberDay(a.accountId, memberId, dayOf(now), { link_clicks: 12, conversions: 2 });
    await putMemberDay(a.accountId, memberId, dayOf(now - 2 * DAY), { link_clicks: 5, referrals: 3 });
    await putMemberDay(a.accountId, memberId, dayOf(now - 5 * DAY), { link_clicks: 99 });
    expect(await memberDays(a.accountId, memberId, 3, now)).toEqual([
      { day: dayOf(now - 2 * DAY), link_clicks: 5, conversions: 0, referrals: 3 },
      { day: dayOf(now - DAY), link_clicks: 0, conversions: 0, referrals: 0 },
      { day: dayOf(now), link_clicks: 12, conversions: 2, referrals: 0 },
    ]);
  });
});
