// Members' tax details through the real handlers (docs/portal.md "Tax details"): PUT and GET
// /portal/v1/tax-details/ (validated, stored encrypted, answered masked, each member only their own), the
// member marker the portal's page reads, and GET /v1/exports/tax-details.csv/ (decrypted; owner and finance
// sessions only: admin, viewer and API keys 403).
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { approveReward } from '../../shared/flows/lifecycle';
import { getPayout, TAX_DETAILS_MISSING } from '../../shared/store/payouts';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { db, tableName } from '../../shared/store/client';
import { getItem } from '../../shared/store/ops';
import { taxKeys } from '../../shared/store/tax-details';
import { keys } from '../../shared/store/table';
import { api } from '../support/api';
import { loginAs } from '../support/dashboard';
import { newAccount } from '../support/fixtures';

let seq = 0;
const unique = (p: string) => `${p}-${++seq}-${Date.now().toString(36)}`;
type Tenant = { accountId: string; apiKey: string };

async function requireTaxDetails(t: Tenant, on = true): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.account(t.accountId),
      UpdateExpression: 'SET tax_details_required = :on',
      ExpressionAttributeValues: { ':on': on },
    }),
  );
}

async function member(t: Tenant): Promise<{ id: string; email: string }> {
  const who = unique('tax');
  const res = await api('POST', '/v1/members/', { key: t.apiKey, body: { identifier: who, email: `${who}@example.com` } });
  expect(res.status).toBe(201);
  return res.body;
}

/** A portal session token (the embedded flow) for the member. */
async function session(t: Tenant, memberId: string): Promise<string> {
  const link = await api('POST', `/v1/members/${memberId}/portal-sessions/`, { key: t.apiKey, body: {} });
  const opened = await api('POST', '/portal/v1/sessions/', { body: { token: new URL(link.body.url).hash.replace('#token=', '') } });
  expect(opened.status).toBe(201);
  return opened.body.token;
}

const US = {
  legal_name: 'Ada Lovelace',
  country: 'us',
  address: '1 Main Street, Springfield, IL 62701',
  us: { tin: '123-45-6789', w9_certified: true },
};
const W8 = {
  legal_name: 'Grace Hopper',
  country: 'DE',
  address: 'Hauptstrasse 5, 10115 Berlin',
  w8ben: {
    name: 'Grace Hopper',
    country_of_citizenship: 'de',
    permanent_address: 'Hauptstrasse 5, 10115 Berlin',
    foreign_tin: 'DE12345678901',
    date_of_birth: '1980-02-29',
    treaty_country: 'DE',
    certified: true,
  },
};

describe('PUT and GET /portal/v1/tax-details/', () => {
  it('stores the details encrypted and answers them masked; the member sees only their own', async () => {
    const t = await newAccount();
    await requireTaxDetails(t);
    const [ada, grace] = await Promise.all([member(t), member(t)]);
    const [adaToken, graceToken] = await Promise.all([session(t, ada.id), session(t, grace.id)]);

    const before = await api('GET', '/portal/v1/tax-details/', { key: adaToken });
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      required: true,
      provided: false,
      form: null,
      legal_name: null,
      country: null,
      address: null,
      tin: null,
      updated_at: null,
    });
    expect((await api('GET', '/portal/v1/me/', { key: adaToken })).body.tax_details).toEqual({ required: true, provided: false });

    const put = await api('PUT', '/portal/v1/tax-details/', { key: adaToken, body: US });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      required: true,
      provided: true,
      form: 'w9',
      legal_name: 'Ada Lovelace',
      country: 'US',
      address: '1 Main•••',
      tin: '•••••6789',
      updated_at: expect.any(Number),
    });
    expect((await api('GET', '/portal/v1/tax-details/', { key: adaToken })).body).toEqual(put.body);
    expect((await api('GET', '/portal/v1/me/', { key: adaToken })).body.tax_details).toEqual({ required: true, provided: true });
    // Stored sealed: neither the TIN nor the address is readable in the item.
    const item = await getItem(taxKeys.item(t.accountId, ada.id));
    expect(item).toMatchObject({ pk: `A#${t.accountId}#TAX#DETAILS`, type: 'TaxDetails', form: 'w9', country: 'US' });
    expect(JSON.stringify(item)).not.toMatch(/123456789|123-45-6789|Main Street/);
    expect(String(item?.sealed)).toMatch(/^(local|kms):v1:/);
    // Grace sees nothing of Ada's.
    expect((await api('GET', '/portal/v1/tax-details/', { key: graceToken })).body.provided).toBe(false);

    const w8 = await api('PUT', '/portal/v1/tax-details/', { key: graceToken, body: W8 });
    expect(w8.status).toBe(200);
    expect(w8.body).toMatchObject({ form: 'w8ben', country: 'DE', tin: '•••••8901' });
    // Replacing works (one item per member).
    const again = await api('PUT', '/portal/v1/tax-details/', {
      key: adaToken,
      body: { ...US, us: { tin: '987654321', w9_certified: true } },
    });
    expect(again.body.tin).toBe('•••••4321');
  });

  it('400 with the field named (nested with a dot) for a bad body; nothing stored', async () => {
    const t = await newAccount();
    const m = await member(t);
    const token = await session(t, m.id);
    const cases: [unknown, string][] = [
      [{ ...US, us: { tin: '12345', w9_certified: true } }, 'us.tin'],
      [{ ...US, us: { tin: '123456789', w9_certified: false } }, 'us.w9_certified'],
      [{ ...US, us: undefined }, 'us'],
      [{ ...US, country: 'XX' }, 'country'],
      [{ ...US, legal_name: '' }, 'legal_name'],
      [{ ...W8, w8ben: { ...W8.w8ben, date_of_birth: '1980-02-30' } }, 'w8ben.date_of_birth'],
      [{ ...W8, w8ben: { ...W8.w8ben, certified: 'no' } }, 'w8ben.certified'],
      [{ ...W8, w8ben: undefined }, 'w8ben'],
      [{ ...US, w8ben: W8.w8ben }, 'non_field_errors'],
      [{ ...US, address: ['x'] }, 'address'],
    ];
    for (const [body, field] of cases) {
      const res = await api('PUT', '/portal/v1/tax-details/', { key: token, body });
      expect({ field, status: res.status, fields: Object.keys(res.body ?? {}) }).toEqual({ field, status: 400, fields: [field] });
    }
    expect(
      (await api('PUT', '/portal/v1/tax-details/', { key: token, rawBody: '{nope', headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(400);
    expect(await getItem(taxKeys.item(t.accountId, m.id))).toBeUndefined();
    // No session: 401.
    expect((await api('PUT', '/portal/v1/tax-details/', { body: US })).status).toBe(401);
    expect((await api('GET', '/portal/v1/tax-details/', { key: t.apiKey })).status).toBe(401);
  });
});

describe('GET /v1/exports/tax-details.csv/', () => {
  it('owner and finance sessions get the details in full, one row per member; admin, viewer and API keys get 403', async () => {
    const t = await newAccount();
    await requireTaxDetails(t);
    const [ada, grace, none] = await Promise.all([member(t), member(t), member(t)]);
    expect((await api('PUT', '/portal/v1/tax-details/', { key: await session(t, ada.id), body: US })).status).toBe(200);
    expect((await api('PUT', '/portal/v1/tax-details/', { key: await session(t, grace.id), body: W8 })).status).toBe(200);

    for (const role of ['owner', 'finance'] as const) {
      const who = await loginAs(t.accountId, role);
      const res = await api('GET', '/v1/exports/tax-details.csv/', { headers: who.headers });
      expect({ role, status: res.status }).toEqual({ role, status: 200 });
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.headers['cache-control']).toBe('no-store');
      const lines = res.text.trim().split('\r\n');
      expect(lines[0]).toMatch(/^member_id,form,legal_name,country,address,tin,/);
      expect(lines).toHaveLength(3);
      const adaRow = lines.find((l) => l.startsWith(ada.id)) as string;
      expect(adaRow).toContain('w9,Ada Lovelace,US,"1 Main Street, Springfield, IL 62701",123456789,true');
      expect(lines.find((l) => l.startsWith(grace.id))).toContain('DE12345678901,1980-02-29,DE,true');
      expect(res.text).not.toContain(none.id);
    }
    for (const role of ['admin', 'viewer'] as const) {
      const who = await loginAs(t.accountId, role);
      const res = await api('GET', '/v1/exports/tax-details.csv/', { headers: who.headers });
      expect({ role, status: res.status }).toEqual({ role, status: 403 });
      expect(res.text).not.toContain('123456789');
    }
    const byKey = await api('GET', '/v1/exports/tax-details.csv/', { key: t.apiKey });
    expect(byKey.status).toBe(403);
    expect((await api('GET', '/v1/exports/tax-details.csv/')).status).toBe(401);
    // Another account's owner sees none of these rows.
    const other = await newAccount();
    const stranger = await loginAs(other.accountId, 'owner');
    const theirs = await api('GET', '/v1/exports/tax-details.csv/', { headers: stranger.headers });
    expect(theirs.status).toBe(200);
    expect(theirs.text.trim().split('\r\n')).toHaveLength(1);
  });

  it('pages with Link rel="next" and the header row on the first page only', async () => {
    const t = await newAccount();
    const members = await Promise.all([member(t), member(t), member(t)]);
    for (const m of members)
      expect((await api('PUT', '/portal/v1/tax-details/', { key: await session(t, m.id), body: US })).status).toBe(200);
    const owner = await loginAs(t.accountId, 'owner');
    const rows: string[] = [];
    let path: string | null = '/v1/exports/tax-details.csv/?page_size=2';
    let pages = 0;
    while (path) {
      const res = await api('GET', path, { headers: owner.headers });
      expect(res.status).toBe(200);
      const lines = res.text.split('\r\n').filter(Boolean);
      rows.push(...(pages === 0 ? lines.slice(1) : lines));
      const next = /<([^>]+)>; rel="next"/.exec(res.headers.link ?? '');
      path = next ? new URL(next[1] as string).pathname + new URL(next[1] as string).search : null;
      pages++;
    }
    expect(pages).toBe(2);
    expect(rows.map((r) => r.split(',')[0]).sort()).toEqual(members.map((m) => m.id).sort());
    expect((await api('GET', '/v1/exports/tax-details.csv/?page_size=0', { headers: owner.headers })).status).toBe(400);
    expect((await api('GET', '/v1/exports/tax-details.csv/?status=x', { headers: owner.headers })).status).toBe(400);
  });
});

describe('payouts wait for required tax details', () => {
  it('a payout that would be due stays open with the reason until the member gives them; then it is due', async () => {
    const t = await newAccount();
    await requireTaxDetails(t);
    const m = await member(t);
    expect((await api('PATCH', `/v1/members/${m.id}/`, { key: t.apiKey, body: { payout_email: 'ada@pay.example' } })).status).toBe(200);
    const referral = await api('POST', '/v1/referrals/', {
      key: t.apiKey,
      body: { user_identifier: unique('u'), member_code: (await api('GET', `/v1/members/${m.id}/`, { key: t.apiKey })).body.code },
    });
    expect(referral.status).toBeLessThan(300);
    const stored = toReferral(await getItem(keys.referral(t.accountId, referral.body.id)));
    if (!stored) throw new Error('fixture referral missing');
    const [commission] = (
      await recordRewards(
        t.accountId,
        stored,
        [{ payment_id: Date.now() * 100 + ++seq, type: 'commission', amount: 2500, currency: 'USD' }],
        false,
        true,
      )
    ).rewards;
    const payoutId = (await approveReward(t.accountId, commission!.id)).payout_id as string;
    const waiting = await getPayout(t.accountId, payoutId);
    expect({ status: waiting?.status, reason: waiting?.failure_reason }).toEqual({ status: 'open', reason: TAX_DETAILS_MISSING });
    const listed = await api('GET', `/v1/payouts/${payoutId}/`, { key: t.apiKey });
    expect(listed.body).toMatchObject({ status: 'open', failure_reason: TAX_DETAILS_MISSING });

    expect((await api('PUT', '/portal/v1/tax-details/', { key: await session(t, m.id), body: US })).status).toBe(200);
    const due = await getPayout(t.accountId, payoutId);
    expect({ status: due?.status, reason: due?.failure_reason }).toEqual({ status: 'due', reason: null });
  });

  it('without the requirement, the same payout is due at once', async () => {
    const t = await newAccount();
    const m = await member(t);
    await api('PATCH', `/v1/members/${m.id}/`, { key: t.apiKey, body: { payout_email: 'ada@pay.example' } });
    const code = (await api('GET', `/v1/members/${m.id}/`, { key: t.apiKey })).body.code;
    const referral = await api('POST', '/v1/referrals/', { key: t.apiKey, body: { user_identifier: unique('u'), member_code: code } });
    const stored = toReferral(await getItem(keys.referral(t.accountId, referral.body.id)));
    const [commission] = (
      await recordRewards(
        t.accountId,
        stored!,
        [{ payment_id: Date.now() * 100 + ++seq, type: 'commission', amount: 2500, currency: 'USD' }],
        false,
        true,
      )
    ).rewards;
    const payoutId = (await approveReward(t.accountId, commission!.id)).payout_id as string;
    expect((await getPayout(t.accountId, payoutId))?.status).toBe('due');
  });
});
