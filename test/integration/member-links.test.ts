// Named links with sub-ids (docs/attribution.md) through the real handlers: create (with and without a
// slug), the URL from the account's referral_url, field errors, duplicates, the 20-link limit under
// concurrency, the list's count and cursors, delete, another account's member, a deleted member, and the
// portal's links scoped to the session's member.
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';

type Tenant = { accountId: string; apiKey: string };
let seq = 0;
const unique = (p: string) => `${p}-${++seq}-${Date.now().toString(36)}`;

async function member(t: Tenant, code?: string): Promise<{ id: string; code: string }> {
  const who = unique('m');
  const res = await api('POST', '/v1/members/', {
    key: t.apiKey,
    body: { identifier: who, email: `${who}@example.com`, ...(code ? { code } : {}) },
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function setReferralUrl(t: Tenant, url: string | null): Promise<void> {
  const res = await api('PATCH', '/v1/account/', { key: t.apiKey, body: { referral_url: url } });
  expect(res.status).toBe(200);
}

async function portalToken(t: Tenant, memberId: string): Promise<string> {
  const link = await api('POST', `/v1/members/${memberId}/portal-sessions/`, { key: t.apiKey, body: {} });
  expect(link.status).toBe(201);
  const token = new URL(link.body.url).hash.replace(/^#token=/, '');
  const opened = await api('POST', '/portal/v1/sessions/', { body: { token } });
  expect(opened.status).toBe(201);
  return opened.body.token as string;
}

const links = (t: Tenant, memberId: string, query = '') => api('GET', `/v1/members/${memberId}/links/${query}`, { key: t.apiKey });
const create = (t: Tenant, memberId: string, body: unknown) => api('POST', `/v1/members/${memberId}/links/`, { key: t.apiKey, body });

describe('named links', () => {
  it('creates a link with a slug and a deep path, its URL on the referral_url origin with via and sub', async () => {
    const t = await newAccount();
    await setReferralUrl(t, 'https://acme.example/welcome?ref=1');
    const m = await member(t, unique('C').replace(/-/g, '').slice(0, 12).toUpperCase());
    const res = await create(t, m.id, { slug: 'youtube', destination_path: '/pricing?plan=pro' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      slug: 'youtube',
      destination_path: '/pricing?plan=pro',
      url: `https://acme.example/pricing?plan=pro&via=${m.code}&sub=youtube`,
      created_at: expect.any(Number),
    });
    // Without a path: referral_url itself, its own query kept.
    const plain = await create(t, m.id, { slug: 'blog' });
    expect(plain.status).toBe(201);
    expect(plain.body.url).toBe(`https://acme.example/welcome?ref=1&via=${m.code}&sub=blog`);
    expect(plain.body.destination_path).toBeNull();
  });

  it('generates a slug when none is given; url is null while the account has no referral_url', async () => {
    const t = await newAccount();
    await setReferralUrl(t, null);
    const m = await member(t);
    const res = await create(t, m.id, {});
    expect(res.status).toBe(201);
    expect(res.body.slug).toMatch(/^[a-z0-9]{8}$/);
    expect(res.body.url).toBeNull();
    await setReferralUrl(t, 'https://acme.example/');
    const listed = await links(t, m.id);
    expect(listed.body.results[0].url).toBe(`https://acme.example/?via=${m.code}&sub=${res.body.slug}`);
  });

  it('refuses a bad slug or path with field errors, and a slug the member already has', async () => {
    const t = await newAccount();
    const m = await member(t);
    for (const slug of ['Bad', '-x', 'x-', 'a'.repeat(41), 'a_b', '']) {
      const res = await create(t, m.id, { slug });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['slug']);
    }
    for (const destination_path of ['pricing', '//evil.example/x', 'https://evil.example/', '/a\\b', `/${'a'.repeat(500)}`, 5]) {
      const res = await create(t, m.id, { destination_path });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['destination_path']);
    }
    expect((await create(t, m.id, { slug: 'twitter' })).status).toBe(201);
    const again = await create(t, m.id, { slug: 'twitter' });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ slug: [expect.stringContaining('twitter')] });
    // Another member may use the same slug.
    const other = await member(t);
    expect((await create(t, other.id, { slug: 'twitter' })).status).toBe(201);
    expect((await links(t, m.id)).body.count).toBe(1);
  });

  it('holds at most 20 links per member under concurrent creations', async () => {
    const t = await newAccount();
    const m = await member(t);
    const answers = await Promise.all(Array.from({ length: 26 }, (_, i) => create(t, m.id, { slug: `s${i}` })));
    for (const a of answers) expect([201, 400, 503]).toContain(a.status);
    const made = answers.filter((a) => a.status === 201).length;
    expect(made).toBeLessThanOrEqual(20);
    // Top up one at a time until refused: exactly 20, never more.
    let n = 100;
    for (;;) {
      const res = await create(t, m.id, { slug: `t${n++}` });
      if (res.status === 400) {
        expect(res.body).toEqual({ non_field_errors: [expect.stringContaining('at most 20')] });
        break;
      }
      expect(res.status).toBe(201);
      expect(n).toBeLessThan(130);
    }
    const listed = await links(t, m.id, '?page_size=15');
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(20);
    expect(listed.body.results).toHaveLength(15);
    const next = await api('GET', listed.body.next.replace('https://api.test', ''), { key: t.apiKey });
    expect(next.body.count).toBe(20);
    expect(next.body.results).toHaveLength(5);
    expect(next.body.next).toBeNull();
    const slugs = new Set([...listed.body.results, ...next.body.results].map((l: { slug: string }) => l.slug));
    expect(slugs.size).toBe(20);
    // Deleting one frees a place.
    const [first] = listed.body.results;
    expect((await api('DELETE', `/v1/members/${m.id}/links/${first.slug}/`, { key: t.apiKey })).status).toBe(204);
    expect((await links(t, m.id)).body.count).toBe(19);
    expect((await create(t, m.id, { slug: first.slug })).status).toBe(201);
  }, 60_000);

  it('lists newest first and deletes; an unknown slug, member or another account answers 404', async () => {
    const t = await newAccount();
    const m = await member(t);
    expect((await create(t, m.id, { slug: 'one' })).status).toBe(201);
    expect((await create(t, m.id, { slug: 'two' })).status).toBe(201);
    const listed = await links(t, m.id);
    expect(listed.body).toMatchObject({ count: 2, next: null, previous: null });
    expect(listed.body.results.map((l: { slug: string }) => l.slug)).toEqual(['two', 'one']);

    const other = await newAccount();
    expect((await links(other, m.id)).status).toBe(404);
    expect((await create(other, m.id, { slug: 'x' })).status).toBe(404);
    expect((await api('DELETE', `/v1/members/${m.id}/links/one/`, { key: other.apiKey })).status).toBe(404);
    expect((await links(t, m.id)).body.count).toBe(2);

    expect((await api('DELETE', `/v1/members/${m.id}/links/one/`, { key: t.apiKey })).status).toBe(204);
    expect((await api('DELETE', `/v1/members/${m.id}/links/one/`, { key: t.apiKey })).status).toBe(404);
    expect((await api('DELETE', `/v1/members/${m.id}/links/NOT-A-SLUG/`, { key: t.apiKey })).status).toBe(404);
    expect((await links(t, '0190aaaabbbbccccddddeeeeffff0000')).status).toBe(404);
    expect((await links(t, 'nope')).status).toBe(404);

    // A deleted member's links are reached by nothing.
    expect((await api('DELETE', `/v1/members/${m.id}/`, { key: t.apiKey })).status).toBe(204);
    expect((await links(t, m.id)).status).toBe(404);
    expect((await create(t, m.id, { slug: 'three' })).status).toBe(404);
  });
});

describe('portal links', () => {
  it("shows, creates and deletes only the session's member's links", async () => {
    const t = await newAccount();
    await setReferralUrl(t, 'https://acme.example/');
    const alice = await member(t);
    const bob = await member(t);
    expect((await create(t, bob.id, { slug: 'bobs' })).status).toBe(201);
    const token = await portalToken(t, alice.id);

    const made = await api('POST', '/portal/v1/links/', { key: token, body: { slug: 'newsletter', destination_path: '/blog' } });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      slug: 'newsletter',
      destination_path: '/blog',
      url: `https://acme.example/blog?via=${alice.code}&sub=newsletter`,
      created_at: expect.any(Number),
    });
    const dup = await api('POST', '/portal/v1/links/', { key: token, body: { slug: 'newsletter' } });
    expect(dup.status).toBe(400);
    expect(Object.keys(dup.body)).toEqual(['slug']);

    const listed = await api('GET', '/portal/v1/links/', { key: token });
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(1);
    expect(listed.body.results.map((l: { slug: string }) => l.slug)).toEqual(['newsletter']);
    // Bob's link is not Alice's to delete; the API sees Alice's link under Alice.
    expect((await api('DELETE', '/portal/v1/links/bobs/', { key: token })).status).toBe(404);
    expect((await links(t, bob.id)).body.count).toBe(1);
    expect((await links(t, alice.id)).body.results[0].slug).toBe('newsletter');
    expect((await api('DELETE', '/portal/v1/links/newsletter/', { key: token })).status).toBe(204);
    expect((await api('GET', '/portal/v1/links/', { key: token })).body.count).toBe(0);
    // A portal token never opens the API's routes, nor an API key the portal's.
    expect((await api('GET', `/v1/members/${alice.id}/links/`, { key: token })).status).toBe(401);
    expect((await api('GET', '/portal/v1/links/', { key: t.apiKey })).status).toBe(401);
  });

  it("never shows another member's links or sub-id counts, through a cursor or a sub filter", async () => {
    const t = await newAccount();
    const alice = await member(t);
    const bob = await member(t);
    for (const slug of ['a1', 'a2']) expect((await create(t, alice.id, { slug })).status).toBe(201);
    const aliceToken = await portalToken(t, alice.id);
    const bobToken = await portalToken(t, bob.id);
    // A cursor is bound to the list it came from: Alice's next page is refused on Bob's list.
    const page = await api('GET', '/portal/v1/links/?page_size=1', { key: aliceToken });
    expect(page.body.count).toBe(2);
    const cursor = new URL(page.body.next).searchParams.get('cursor') as string;
    const stolen = await api('GET', `/portal/v1/links/?page_size=1&cursor=${cursor}`, { key: bobToken });
    expect(stolen.status).toBe(400);
    expect(stolen.body).toEqual({ cursor: ['Invalid cursor.'] });
    const apiStolen = await api('GET', `/v1/members/${bob.id}/links/?page_size=1&cursor=${cursor}`, { key: t.apiKey });
    expect(apiStolen.status).toBe(400);
    // Alice's sub-id counts: Bob's stats with her sub are his own (zero), never hers.
    const clickRes = await api('POST', '/js/v1/clicks/', {
      key: (t as Tenant & { publishableKey: string }).publishableKey,
      body: { code: alice.code, visitor_id: 'visitor_a1', sub: 'a1' },
    });
    expect(clickRes.status).toBe(200);
    const own = await api('GET', '/portal/v1/stats/?interval=day&sub=a1', { key: aliceToken });
    const other = await api('GET', '/portal/v1/stats/?interval=day&sub=a1', { key: bobToken });
    const clicks = (r: { body: { buckets: { link_clicks: number }[] } }) => r.body.buckets.reduce((a, b) => a + b.link_clicks, 0);
    expect(clicks(own)).toBe(1);
    expect(clicks(other)).toBe(0);
    // The portal takes no member from the request: a member id in the query changes nothing.
    const sneaky = await api('GET', `/portal/v1/links/?member=${alice.id}`, { key: bobToken });
    expect(sneaky.body.count).toBe(0);
  });
});
