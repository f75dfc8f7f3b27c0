// Duplicates and races: parallel identical requests must produce exactly one effect, and every
// counter must equal the number of items it counts afterwards.
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';

async function listAll(key: string, path: string): Promise<{ id: string }[]> {
  const all: { id: string }[] = [];
  let url: string | null = `${path}${path.includes('?') ? '&' : '?'}page_size=100`;
  while (url) {
    const res = await api('GET', url.replace('https://api.test', ''), { key });
    expect(res.status).toBe(200);
    all.push(...res.body.results);
    url = res.body.next;
  }
  return all;
}

describe('concurrency', () => {
  it('20 parallel identical create-referral requests give exactly one referral, all answering with its id', async () => {
    const { apiKey: key } = await newAccount();
    const m = await api('POST', '/v1/members/', { key, body: { identifier: 'ref', email: 'ref@example.com' } });
    const body = { user_identifier: 'racer', member_code: m.body.code };
    const results = await Promise.all(Array.from({ length: 20 }, () => api('POST', '/v1/referrals/', { key, body })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const ids = new Set(results.map((r) => r.body.id));
    expect(ids.size).toBe(1);

    const list = await api('GET', '/v1/referrals/', { key });
    expect(list.body.count).toBe(1);
    expect(list.body.results).toHaveLength(1);
    expect((await api('GET', `/v1/members/${m.body.id}/`, { key })).body.stats.referrals).toBe(1);
  });

  it('parallel referrals of one user by two members: one wins, the other is told the user is referred', async () => {
    const { apiKey: key } = await newAccount();
    const a = await api('POST', '/v1/members/', { key, body: { identifier: 'a', email: 'a@example.com' } });
    const b = await api('POST', '/v1/members/', { key, body: { identifier: 'b', email: 'b@example.com' } });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api('POST', '/v1/referrals/', { key, body: { user_identifier: 'contested', member_code: i % 2 ? a.body.code : b.body.code } }),
      ),
    );
    const winners = new Set(results.filter((r) => r.status === 200).map((r) => r.body.member_id));
    expect(winners.size).toBe(1);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ user_identifier: ['User contested has already been referred'] });
    }
    expect((await api('GET', '/v1/referrals/', { key })).body.count).toBe(1);
  });

  it('10 parallel member creates with one code: one 201 and nine 400s; counters match the items', async () => {
    const { apiKey: key } = await newAccount();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api('POST', '/v1/members/', { key, body: { identifier: `id-${i}`, email: `p${i}@example.com`, code: 'SAME' } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const rejected = results.filter((r) => r.status !== 201);
    expect(rejected).toHaveLength(9);
    for (const r of rejected) {
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ code: ['The code SAME is already in use; choose another'] });
    }
    const listed = await listAll(key, '/v1/members/');
    expect(listed).toHaveLength(1);
    expect((await api('GET', '/v1/members/', { key })).body.count).toBe(1);
  });

  it('keeps every count exact under mixed parallel creates, retries and deletes', async () => {
    const { apiKey: key } = await newAccount();
    const c = await api('POST', '/v1/campaigns/', { key, body: { name: 'C', allows_credit: true, credit_amount: 5 } });
    const members = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api('POST', '/v1/members/', { key, body: { identifier: `mm-${i}`, email: `mm${i}@example.com`, campaign: { id: c.body.id } } }),
      ),
    );
    expect(members.map((m) => m.status)).toEqual(Array(6).fill(201));
    const codes = members.map((m) => m.body.code as string);
    // 30 users, each referred twice in parallel (a retry), by member i % 6.
    const creates = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        api('POST', '/v1/referrals/', { key, body: { user_identifier: `u-${i % 30}`, member_code: codes[(i % 30) % 6] } }),
      ),
    );
    expect(creates.every((r) => r.status === 200)).toBe(true);
    const referralIds = [...new Set(creates.map((r) => r.body.id as string))];
    expect(referralIds).toHaveLength(30);
    // Delete a third of them in parallel, and move two members out of the campaign meanwhile.
    const deletions = await Promise.all([
      ...referralIds.slice(0, 10).map((id) => api('DELETE', `/v1/referrals/${id}/`, { key })),
      api('PATCH', `/v1/members/${members[0]?.body.id}/`, { key, body: { campaign: null } }),
      api('PATCH', `/v1/members/${members[1]?.body.id}/`, { key, body: { campaign: null } }),
    ]);
    expect(deletions.map((r) => r.status)).toEqual([...Array(10).fill(204), 200, 200]);

    const referrals = await listAll(key, '/v1/referrals/');
    expect(referrals).toHaveLength(20);
    expect((await api('GET', '/v1/referrals/', { key })).body.count).toBe(20);
    for (const m of members) {
      const own = await listAll(key, `/v1/referrals/?member=${m.body.id}`);
      const fresh = await api('GET', `/v1/members/${m.body.id}/`, { key });
      expect(fresh.body.stats.referrals).toBe(own.length);
      expect((await api('GET', `/v1/referrals/?member=${m.body.id}`, { key })).body.count).toBe(own.length);
    }
    const inCampaign = await api('GET', `/v1/members/?campaign=${c.body.id}`, { key });
    expect(inCampaign.body.count).toBe(4);
    expect(inCampaign.body.results).toHaveLength(4);
  });
});
