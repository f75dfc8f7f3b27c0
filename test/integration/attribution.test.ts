// Sub-ids and the attribution setting through the real handlers (docs/attribution.md): `sub` recorded on
// clicks (the member's sub-id report buckets), on referrals made by the API and by the browser endpoint
// (their view, their event, the `sub` filter of the list and the export, the CSV's column), kept by the
// conversion (its event and its bucket), the timeseries and the portal's stats cut by sub, the field
// errors, and the click's answer carrying the account's attribution model and days.
import { eventId } from '../../shared/domain/events';
import { attributeFromHints } from '../../shared/flows/attribution';
import { recordReferralCoupon } from '../../shared/store/coupons';
import { getItem } from '../../shared/store/ops';
import { getReferralOrThrow, markReferralConverted } from '../../shared/store/referrals';
import { saveSubscription } from '../../shared/store/subscriptions';
import { keys } from '../../shared/store/table';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';
import { startTestQueues } from '../support/queues';

const afterAllStops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of afterAllStops) await stop();
});

type Tenant = { accountId: string; apiKey: string; publishableKey: string };
let seq = 0;
const unique = (p: string) => `${p}-${++seq}-${Date.now().toString(36)}`;
let subscriptionIds = 880_000 + (Date.now() % 100_000);

async function member(t: Tenant): Promise<{ id: string; code: string }> {
  const who = unique('m');
  const res = await api('POST', '/v1/members/', { key: t.apiKey, body: { identifier: who, email: `${who}@example.com` } });
  expect(res.status).toBe(201);
  return res.body;
}

const click = (t: Tenant, body: Record<string, unknown>, sourceIp = '10.1.2.3') =>
  api('POST', '/js/v1/clicks/', { key: t.publishableKey, body, sourceIp });

async function series(t: Tenant, query: string): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  const res = await api('GET', `/v1/reports/timeseries/?from=${now - 86_400}&to=${now}&${query}`, { key: t.apiKey });
  expect(res.status).toBe(200);
  return res.body.buckets.reduce((a: number, b: { value: number }) => a + b.value, 0);
}

async function portalToken(t: Tenant, memberId: string): Promise<string> {
  const link = await api('POST', `/v1/members/${memberId}/portal-sessions/`, { key: t.apiKey, body: {} });
  expect(link.status).toBe(201);
  const opened = await api('POST', '/portal/v1/sessions/', { body: { token: new URL(link.body.url).hash.replace(/^#token=/, '') } });
  expect(opened.status).toBe(201);
  return opened.body.token as string;
}

describe('sub-ids', () => {
  it('counts a click through a sub-id in the member, its sub-id bucket, and nowhere else', async () => {
    const t = await newAccount();
    const m = await member(t);
    const res = await click(t, { code: m.code, visitor_id: unique('v').replace(/-/g, '_'), sub: 'youtube' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ recorded: true, attribution: { model: 'first_click', days: 60 } });
    expect(await series(t, `metric=link_clicks&member=${m.id}&sub=youtube`)).toBe(1);
    expect(await series(t, `metric=link_clicks&member=${m.id}&sub=blog`)).toBe(0);
    expect(await series(t, `metric=link_clicks&member=${m.id}`)).toBe(1);
    // Without a sub: the member's bucket only.
    expect((await click(t, { code: m.code, visitor_id: unique('w').replace(/-/g, '_') }, '10.1.2.4')).status).toBe(200);
    expect(await series(t, `metric=link_clicks&member=${m.id}`)).toBe(2);
    expect(await series(t, `metric=link_clicks&member=${m.id}&sub=youtube`)).toBe(1);
    // A bad sub is a field error; an unknown code answers as a member's does, with the attribution.
    const bad = await click(t, { code: m.code, sub: 'Not A Slug' });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['sub']);
    expect((await click(t, { code: 'NOBODY', sub: 'x' })).body).toEqual({
      recorded: true,
      attribution: { model: 'first_click', days: 60 },
    });
  });

  it('answers the account attribution setting on every click', async () => {
    const t = await newAccount();
    const patched = await api('PATCH', '/v1/account/', { key: t.apiKey, body: { attribution_model: 'last_click', attribution_days: 7 } });
    expect(patched.status).toBe(200);
    const res = await click(t, { code: 'NOBODY' });
    expect(res.body.attribution).toEqual({ model: 'last_click', days: 7 });
  });

  it('records sub on referrals (API and browser), filters and exports by it, and the conversion keeps it', async () => {
    const t = await newAccount();
    const m = await member(t);
    const viaApi = await api('POST', '/v1/referrals/', {
      key: t.apiKey,
      body: { user_identifier: unique('u'), member_code: m.code, sub: 'youtube' },
    });
    expect(viaApi.status).toBe(200);
    expect(viaApi.body.sub).toBe('youtube');
    const plain = await api('POST', '/v1/referrals/', { key: t.apiKey, body: { user_identifier: unique('u'), member_code: m.code } });
    expect(plain.body.sub).toBeNull();
    const viaJs = await api('POST', '/js/v1/referrals/', {
      key: t.publishableKey,
      body: { user_identifier: unique('u'), member_code: m.code, sub: 'youtube' },
    });
    expect(viaJs.status).toBe(200);
    expect((await api('GET', `/v1/referrals/${viaJs.body.id}/`, { key: t.apiKey })).body).toMatchObject({ sub: 'youtube', source: 'js' });

    const bad = await api('POST', '/v1/referrals/', {
      key: t.apiKey,
      body: { user_identifier: unique('u'), member_code: m.code, sub: '-x-' },
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['sub']);

    // The event carries it.
    const created = await getItem(keys.event(t.accountId, eventId('referral.created', viaApi.body.id)));
    expect(JSON.parse(String(created?.payload)).data.sub).toBe('youtube');

    // The list's `sub` filter, with `member` only; its exact count and cursors.
    const listed = await api('GET', `/v1/referrals/?member=${m.id}&sub=youtube&page_size=1`, { key: t.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(2);
    expect(listed.body.results).toHaveLength(1);
    const next = await api('GET', listed.body.next.replace('https://api.test', ''), { key: t.apiKey });
    expect(next.body.results).toHaveLength(1);
    expect(new Set([listed.body.results[0].id, next.body.results[0].id])).toEqual(new Set([viaApi.body.id, viaJs.body.id]));
    expect((await api('GET', `/v1/referrals/?sub=youtube`, { key: t.apiKey })).status).toBe(400);
    expect((await api('GET', `/v1/referrals/?member=${m.id}&sub=Bad!`, { key: t.apiKey })).status).toBe(400);
    expect((await api('GET', `/v1/referrals/?member=${m.id}&sub=blog`, { key: t.apiKey })).body.count).toBe(0);
    expect(await series(t, `metric=referrals&member=${m.id}&sub=youtube`)).toBe(2);
    expect(await series(t, `metric=referrals&member=${m.id}`)).toBe(3);

    // The export: the `sub` column, and the filter.
    const csv = await api('GET', `/v1/exports/referrals.csv?member=${m.id}&sub=youtube`, { key: t.apiKey });
    expect(csv.status).toBe(200);
    const [header, ...rows] = csv.text.trim().split('\n');
    const column = (header ?? '').split(',').indexOf('sub');
    expect(column).toBeGreaterThan(0);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.split(',')[column]).toBe('youtube');
    expect((await api('GET', '/v1/exports/referrals.csv?sub=youtube', { key: t.apiKey })).status).toBe(400);

    // The conversion keeps the referral's sub: its event, its bucket.
    const subscription = await saveSubscription(t.accountId, {
      id: ++subscriptionIds,
      unit_price: '10.00',
      currency: 'USD',
      status: 'active',
      email: `billing-${subscriptionIds}@example.com`,
      next_bill_date: '2031-07-01',
      last_bill_date: '2031-06-01',
      plan: { id: 9001, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' },
    });
    await markReferralConverted(t.accountId, await getReferralOrThrow(t.accountId, viaApi.body.id), subscription, null);
    const converted = await api('GET', `/v1/referrals/${viaApi.body.id}/`, { key: t.apiKey });
    expect(converted.body).toMatchObject({ is_converted: true, sub: 'youtube' });
    const event = await getItem(keys.event(t.accountId, eventId('referral.converted', viaApi.body.id)));
    expect(JSON.parse(String(event?.payload)).data.sub).toBe('youtube');
    expect(await series(t, `metric=conversions&member=${m.id}&sub=youtube`)).toBe(1);

    // The portal: the referral's sub, and the stats cut by it.
    const token = await portalToken(t, m.id);
    const portalReferrals = await api('GET', '/portal/v1/referrals/', { key: token });
    expect(portalReferrals.body.results.map((r: { sub: string | null }) => r.sub).sort()).toEqual([null, 'youtube', 'youtube']);
    const stats = await api('GET', '/portal/v1/stats/?interval=day&sub=youtube', { key: token });
    expect(stats.status).toBe(200);
    const total = (k: string) => stats.body.buckets.reduce((a: number, b: Record<string, number>) => a + (b[k] ?? 0), 0);
    expect([total('referrals'), total('conversions')]).toEqual([2, 1]);

    // Deleting a referral takes it off the sub-id's count.
    expect((await api('DELETE', `/v1/referrals/${viaJs.body.id}/`, { key: t.apiKey })).status).toBe(204);
    expect((await api('GET', `/v1/referrals/?member=${m.id}&sub=youtube`, { key: t.apiKey })).body.count).toBe(1);
  });

  it('refuses sub without member, and money metrics by sub', async () => {
    const t = await newAccount();
    const m = await member(t);
    const now = Math.floor(Date.now() / 1000);
    const noMember = await api('GET', `/v1/reports/timeseries/?metric=referrals&sub=youtube&from=${now - 86_400}&to=${now}`, {
      key: t.apiKey,
    });
    expect(noMember.status).toBe(400);
    expect(Object.keys(noMember.body)).toEqual(['sub']);
    const money = await api('GET', `/v1/reports/timeseries/?metric=revenue&member=${m.id}&sub=youtube`, { key: t.apiKey });
    expect(money.status).toBe(400);
    expect(Object.keys(money.body)).toEqual(['sub']);
    const badSub = await api('GET', `/v1/reports/timeseries/?metric=referrals&member=${m.id}&sub=NO`, { key: t.apiKey });
    expect(badSub.status).toBe(400);
  });

  it("a member's coupon wins over the cookie's referral at checkout; a coupon that is no referral's leaves the cookie's", async () => {
    // A conversion queues its reward evaluation: local queues for it (nothing consumes them here).
    const queues = await startTestQueues();
    afterAllStops.push(() => queues.stop());
    const t = await newAccount();
    const m = await member(t);
    const other = await member(t);
    const byCookie = await api('POST', '/v1/referrals/', { key: t.apiKey, body: { user_identifier: unique('u'), member_code: m.code } });
    const byCoupon = await api('POST', '/v1/referrals/', {
      key: t.apiKey,
      body: { user_identifier: unique('u'), member_code: other.code },
    });
    await recordReferralCoupon(t.accountId, byCoupon.body.id, 'RFCOUPONWINS01');
    const subscription = async () =>
      saveSubscription(t.accountId, {
        id: ++subscriptionIds,
        unit_price: '10.00',
        currency: 'USD',
        status: 'active',
        email: `billing-${subscriptionIds}@example.com`,
        next_bill_date: '2031-07-01',
        last_bill_date: '2031-06-01',
        plan: { id: 9001, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' },
      });
    const first = await subscription();
    expect(await attributeFromHints(t.accountId, 'evt-coupon', { referralId: byCookie.body.id, couponCode: 'rfcouponwins01' }, first)).toBe(
      'converted',
    );
    expect((await api('GET', `/v1/referrals/${byCoupon.body.id}/`, { key: t.apiKey })).body.is_converted).toBe(true);
    expect((await api('GET', `/v1/referrals/${byCookie.body.id}/`, { key: t.apiKey })).body.is_converted).toBe(false);
    // A discount code that is no referral's coupon: the cookie's referral converts.
    const second = await subscription();
    expect(await attributeFromHints(t.accountId, 'evt-plain', { referralId: byCookie.body.id, couponCode: 'SUMMER10' }, second)).toBe(
      'converted',
    );
    expect((await api('GET', `/v1/referrals/${byCookie.body.id}/`, { key: t.apiKey })).body.is_converted).toBe(true);
  });
});
