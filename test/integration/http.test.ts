// The HTTP layer as a client sees it (docs/design/api-contract.md "Routing", "Authentication", "Request bodies",
// "Lists and pagination", "Failures"): authentication on every route, 404/405, trailing slashes,
// body parsing (413/415/400), query validation, and the headers every response carries.
import { api, type ApiOptions, type ApiResponse } from '../support/api';
import { newAccount } from '../support/fixtures';
import { createApiKey, revokeApiKey } from '../../shared/store/accounts';
import { routes, type Route } from '../../functions/routes';

const NOT_PROVIDED = { detail: 'Authentication credentials were not provided.' };
const INVALID_TOKEN = { detail: 'Invalid token.' };
const NOT_FOUND = { detail: 'Not found.' };
const METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'] as const;

const seenRequestIds = new Set<string>();

/**
 * api() plus the invariants of every response: never a 5xx, an `X-Request-Id` unique to the request,
 * a JSON body with `Content-Type: application/json`, except 204 whose body is empty.
 */
async function call(method: string, path: string, options: ApiOptions = {}): Promise<ApiResponse> {
  const res = await api(method, path, options);
  const where = `${method} ${path} -> ${res.status} ${res.text.slice(0, 200)}`;
  expect({ where, serverError: res.status >= 500 }).toEqual({ where, serverError: false });
  const requestId = res.headers['x-request-id'];
  expect({ where, requestId: typeof requestId === 'string' && requestId.length > 0 }).toEqual({ where, requestId: true });
  expect({ where, repeatedRequestId: seenRequestIds.has(requestId as string) }).toEqual({ where, repeatedRequestId: false });
  seenRequestIds.add(requestId as string);
  if (res.status === 204) {
    expect({ where, text: res.text }).toEqual({ where, text: '' });
  } else {
    expect({ where, contentType: res.headers['content-type'] }).toEqual({ where, contentType: 'application/json' });
    expect({ where, json: res.body !== null && typeof res.body === 'object' }).toEqual({ where, json: true });
  }
  return res;
}

/** A concrete path for a route, with every `{param}` replaced. */
function concrete(route: Route, value = 'x1'): string {
  return route.path.replace(/\{[^}]+\}/g, value);
}

// Routes authenticated by an API key; the Paddle webhook is authenticated by its signature instead
// (paddle-webhook.test.ts).
const routeCases = routes.filter((r) => (r.auth ?? 'api-key') === 'api-key').map((r) => [`${r.method} ${r.path}`, r] as const);

let key: string;

beforeAll(async () => {
  ({ apiKey: key } = await newAccount());
});

describe('authentication', () => {
  it.each(routeCases)('%s without Authorization: 401 credentials not provided, WWW-Authenticate: Bearer', async (_name, route) => {
    const res = await call(
      route.method,
      concrete(route),
      route.method === 'POST' || route.method === 'PATCH' ? { body: { name: 'x' } } : {},
    );
    expect(res.status).toBe(401);
    expect(res.body).toEqual(NOT_PROVIDED);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it.each(routeCases)('%s with an unknown key: 401 invalid token', async (_name, route) => {
    const res = await call(route.method, concrete(route), { key: `rfl_live_${'A'.repeat(43)}` });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID_TOKEN);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('authenticates before reading the body: a malformed body without credentials is a 401', async () => {
    const res = await call('POST', '/v1/campaigns/', { rawBody: '{"name":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(NOT_PROVIDED);
    const res2 = await call('POST', '/v1/members/', { rawBody: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(res2.status).toBe(401);
    expect(res2.body).toEqual(NOT_PROVIDED);
  });

  it.each<[string, string]>([
    ['an empty Authorization header', ''],
    ['only spaces', '   '],
  ])('treats %s as missing credentials', async (_what, value) => {
    const res = await call('GET', '/v1/campaigns/', { headers: { authorization: value } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(NOT_PROVIDED);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it.each<[string, () => string]>([
    ['a malformed key', () => 'Bearer not-a-key'],
    ['a key with the prefix and forbidden characters', () => 'Bearer rfl_live_abc!def'],
    ['a key without the prefix', () => `Bearer ${key.slice('rfl_live_'.length)}`],
    ['a valid key with a character changed', () => `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`],
    ['a valid key with trailing garbage', () => `Bearer ${key} extra`],
    ['an over-long key', () => `Bearer rfl_live_${'a'.repeat(500)}`],
  ])('refuses %s with 401 invalid token', async (_what, header) => {
    const res = await call('GET', '/v1/campaigns/', { headers: { authorization: header() } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID_TOKEN);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('refuses the Basic scheme with 401 invalid token', async () => {
    const res = await call('GET', '/v1/campaigns/', { headers: { authorization: 'Basic xxx' } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID_TOKEN);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('refuses the Basic scheme carrying a valid key with 401', async () => {
    const res = await call('GET', '/v1/campaigns/', { headers: { authorization: `Basic ${key}` } });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('accepts Bearer and Token schemes', async () => {
    const bearer = await call('GET', '/v1/campaigns/', { key });
    expect(bearer.status).toBe(200);
    const token = await call('GET', '/v1/campaigns/', { headers: { authorization: `Token ${key}` } });
    expect(token.status).toBe(200);
    expect(token.body).toEqual(bearer.body);
  });

  it('a second key of the same account sees the same data; revoking one key leaves the other working', async () => {
    const account = await newAccount();
    const created = await call('POST', '/v1/campaigns/', { key: account.apiKey, body: { name: 'Shared' } });
    expect(created.status).toBe(201);

    const second = await createApiKey(account.accountId);
    expect(second).not.toBe(account.apiKey);
    const viaSecond = await call('GET', `/v1/campaigns/${created.body.id}/`, { key: second });
    expect(viaSecond.status).toBe(200);
    expect(viaSecond.body).toEqual(created.body);

    await revokeApiKey(second);
    for (const [, route] of routeCases) {
      const res = await call(route.method, concrete(route), { key: second });
      expect({ route: route.name, status: res.status, body: res.body }).toEqual({ route: route.name, status: 401, body: INVALID_TOKEN });
    }
    const viaToken = await call('GET', '/v1/campaigns/', { headers: { authorization: `Token ${second}` } });
    expect(viaToken.status).toBe(401);
    expect(viaToken.body).toEqual(INVALID_TOKEN);

    const first = await call('GET', `/v1/campaigns/${created.body.id}/`, { key: account.apiKey });
    expect(first.status).toBe(200);
    expect(first.body).toEqual(created.body);
  });

  it('revoking the only key shuts the account out at once', async () => {
    const account = await newAccount();
    expect((await call('GET', '/v1/members/', { key: account.apiKey })).status).toBe(200);
    await revokeApiKey(account.apiKey);
    const res = await call('GET', '/v1/members/', { key: account.apiKey });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID_TOKEN);
  });

  it("keys only see their own account's data", async () => {
    const other = await newAccount();
    const created = await call('POST', '/v1/campaigns/', { key: other.apiKey, body: { name: 'Theirs' } });
    expect(created.status).toBe(201);
    const res = await call('GET', `/v1/campaigns/${created.body.id}/`, { key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });
});

describe('routing', () => {
  it.each<[string]>([
    ['/v1/'],
    ['/healthz'],
    ['/v1/nope/'],
    ['/v2/campaigns/'],
    ['/campaigns/'],
    ['/v1/campaigns/abcd1234/extra/'],
    ['/v1/referrals/user/a/b/'],
    ['/v1/subscriptions/1/2/'],
    ['/V1/Campaigns/'],
  ])('unknown path %s: 404 not found, with or without credentials', async (path) => {
    for (const method of METHODS) {
      const withKey = await call(method, path, { key });
      expect({ method, status: withKey.status, body: withKey.body }).toEqual({ method, status: 404, body: NOT_FOUND });
      const withoutKey = await call(method, path);
      expect({ method, status: withoutKey.status, body: withoutKey.body }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
  });

  const pathCases = [...new Set(routes.map((r) => r.path))].map((path) => {
    const allowed = routes.filter((r) => r.path === path).map((r) => r.method);
    return [path, allowed] as const;
  });

  it.each(pathCases)('%s answers 405 with Allow for every other method', async (path, allowed) => {
    const concretePath = path.replace(/\{[^}]+\}/g, 'x1');
    for (const method of METHODS.filter((m) => !(allowed as readonly string[]).includes(m))) {
      for (const p of [concretePath, concretePath.replace(/\/$/, '')]) {
        const res = await call(method, p, { key });
        expect({ method, p, status: res.status, body: res.body }).toEqual({
          method,
          p,
          status: 405,
          body: { detail: `Method "${method}" not allowed.` },
        });
        const allow = (res.headers.allow ?? '')
          .split(',')
          .map((m) => m.trim())
          .filter((m) => m !== '');
        expect(allow.sort()).toEqual([...allowed].sort());
      }
    }
  });

  it('PUT on a collection: 405 with the exact contract body', async () => {
    const res = await call('PUT', '/v1/campaigns/', { key, body: { name: 'x' } });
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ detail: 'Method "PUT" not allowed.' });
    expect(
      res.headers.allow
        ?.split(',')
        .map((m) => m.trim())
        .sort(),
    ).toEqual(['GET', 'POST']);
  });

  it('serves every path identically without the trailing slash (no redirect)', async () => {
    const created = await call('POST', '/v1/campaigns', { key, body: { name: 'No slash' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    for (const path of [
      '/v1/campaigns/',
      `/v1/campaigns/${id}/`,
      '/v1/members/',
      '/v1/referrals/',
      '/v1/subscriptions/',
      '/v1/referrals/user/nobody/',
      '/v1/subscriptions/42/',
      '/v1/members/0190a1b2c3d4e5f60718293a4b5c6d7e/',
    ]) {
      const withSlash = await call('GET', path, { key });
      const without = await call('GET', path.replace(/\/$/, ''), { key });
      expect({ path, status: without.status }).toEqual({ path, status: withSlash.status });
      expect([300, 301, 302, 307, 308]).not.toContain(without.status);
      expect(without.headers.location).toBeUndefined();
      if (withSlash.status === 200 && 'results' in withSlash.body) {
        expect(without.body.count).toBe(withSlash.body.count);
        expect(without.body.results).toEqual(withSlash.body.results);
      } else {
        expect(without.body).toEqual(withSlash.body);
      }
    }

    const patched = await call('PATCH', `/v1/campaigns/${id}`, { key, body: { credit_amount: '3' } });
    expect(patched.status).toBe(200);
    expect(patched.body.credit_amount).toBe('3.00');
    const deleted = await call('DELETE', `/v1/campaigns/${id}`, { key });
    expect(deleted.status).toBe(204);
    expect((await call('GET', `/v1/campaigns/${id}/`, { key })).status).toBe(404);
  });
});

describe('response headers', () => {
  it('every response carries a fresh X-Request-Id and JSON content type; 204 has an empty body', async () => {
    const created = await call('POST', '/v1/campaigns/', { key, body: { name: 'Headers' } });
    expect(created.status).toBe(201);
    const a = await call('GET', `/v1/campaigns/${created.body.id}/`, { key });
    const b = await call('GET', `/v1/campaigns/${created.body.id}/`, { key });
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);

    const deleted = await call('DELETE', `/v1/campaigns/${created.body.id}/`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(deleted.body).toBeNull();
    expect(deleted.headers['content-type']).toBeUndefined();
    expect(deleted.headers['x-request-id']).toMatch(/\S/);
  });
});

describe('request bodies', () => {
  // Existing resources, so that a PATCH can only fail on its body (never on a missing resource).
  let campaignId: string;
  let memberId: string;

  beforeAll(async () => {
    const campaign = await call('POST', '/v1/campaigns/', { key, body: { name: 'Body target' } });
    expect(campaign.status).toBe(201);
    campaignId = campaign.body.id;
    const member = await call('POST', '/v1/members/', { key, body: { identifier: 'body-target', email: 'body-target@example.com' } });
    expect(member.status).toBe(201);
    memberId = member.body.id;
  });

  it('accepts application/json with a charset parameter', async () => {
    const res = await call('POST', '/v1/campaigns/', {
      key,
      rawBody: JSON.stringify({ name: 'Charset' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Charset');
  });

  it.each<[string, string]>([
    ['POST', '/v1/campaigns/'],
    ['POST', '/v1/members/'],
    ['POST', '/v1/referrals/'],
    ['PATCH', '/v1/campaigns/{campaign}/'],
    ['PATCH', '/v1/members/{member}/'],
  ])('%s %s with text/plain: 415', async (method, template) => {
    const path = template.replace('{campaign}', campaignId).replace('{member}', memberId);
    const res = await call(method, path, { key, rawBody: '{"name":"x"}', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ detail: 'Unsupported media type "text/plain" in request.' });
  });

  it('refuses a form-encoded body with 415 and creates nothing', async () => {
    const account = await newAccount();
    const res = await call('POST', '/v1/campaigns/', {
      key: account.apiKey,
      rawBody: 'name=Form',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ detail: 'Unsupported media type "application/x-www-form-urlencoded" in request.' });
    const list = await call('GET', '/v1/campaigns/', { key: account.apiKey });
    expect(list.body.count).toBe(0);
  });

  it('refuses a body over 64 KiB with 413; exactly 64 KiB is accepted', async () => {
    const account = await newAccount();
    const prefix = '{"name":"Big","pad":"';
    const suffix = '"}';
    const exact = prefix + 'a'.repeat(64 * 1024 - prefix.length - suffix.length) + suffix;
    expect(Buffer.byteLength(exact)).toBe(65536);

    const tooBig = await call('POST', '/v1/campaigns/', {
      key: account.apiKey,
      rawBody: exact.replace('"pad":"', '"pad":"a'),
      headers: { 'content-type': 'application/json' },
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toEqual({ detail: 'Request body is too large.' });
    expect((await call('GET', '/v1/campaigns/', { key: account.apiKey })).body.count).toBe(0);

    const atLimit = await call('POST', '/v1/campaigns/', {
      key: account.apiKey,
      rawBody: exact,
      headers: { 'content-type': 'application/json' },
    });
    expect(atLimit.status).toBe(201);
    expect(atLimit.body.name).toBe('Big');
    expect(atLimit.body).not.toHaveProperty('pad');
  });

  it('counts bytes, not characters, toward the 64 KiB limit', async () => {
    // 'é' is two bytes in UTF-8: 33,000 of them are 66,000 bytes but only 33,000 characters.
    const res = await call('PATCH', `/v1/campaigns/${campaignId}/`, { key, body: { pad: 'é'.repeat(33_000) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: 'Request body is too large.' });
  });

  it.each<[string]>([['{"name":'], ['{name: "x"}'], ["{'name': 'x'}"], ['{"name":"x",}'], ['nul'], ['{"name":"x"} trailing']])(
    'malformed JSON %j: 400 with a JSON parse error detail',
    async (raw) => {
      const res = await call('POST', '/v1/campaigns/', { key, rawBody: raw, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['detail']);
      expect(res.body.detail).toMatch(/^JSON parse error - \S/);
    },
  );

  it.each<[string, string]>([
    ['[]', 'list'],
    ['[{"name":"x"}]', 'list'],
    ['"name"', 'str'],
    ['1', 'int'],
    ['-7', 'int'],
    ['1.5', 'float'],
    ['1.0', 'float'],
    ['1e3', 'float'],
    ['true', 'bool'],
    ['false', 'bool'],
    ['null', 'NoneType'],
  ])('JSON %s that is not an object: 400 expected a dictionary, but got %s', async (raw, type) => {
    for (const [method, path] of [
      ['POST', '/v1/campaigns/'],
      ['PATCH', `/v1/members/${memberId}/`],
      ['PATCH', `/v1/campaigns/${campaignId}/`],
    ] as const) {
      const res = await call(method, path, { key, rawBody: raw, headers: { 'content-type': 'application/json' } });
      expect({ method, status: res.status, body: res.body }).toEqual({
        method,
        status: 400,
        body: { non_field_errors: [`Invalid data. Expected a dictionary, but got ${type}.`] },
      });
    }
  });

  // Issue 11 item 9: bytes that are not UTF-8 are DRF's JSON parse error (Python's decoder message), never
  // stored with replacement characters.
  it.each<[string, string]>([
    ['7b226e616d65223a2261ff227d', 'byte 0xff in position 10: invalid start byte'],
    ['7b226e616d65223a22c0af227d', 'byte 0xc0 in position 9: invalid start byte'],
    ['7b226e616d65223a22eda080227d', 'byte 0xed in position 9: invalid continuation byte'],
    ['7b226e616d65223a22e282227d', 'bytes in position 9-10: invalid continuation byte'],
    ['7b226e616d65223a2241e2', 'byte 0xe2 in position 10: unexpected end of data'],
    ['fffe7b00', 'byte 0xff in position 0: invalid start byte'],
  ])('a body that is not UTF-8 (%s): 400 JSON parse error, nothing created', async (hex, reason) => {
    const { apiKey } = await newAccount();
    for (const [method, path] of [
      ['POST', '/v1/campaigns/'],
      ['POST', '/v1/members/'],
      ['POST', '/v1/referrals/'],
    ] as const) {
      const res = await call(method, path, {
        key: apiKey,
        rawBody: Buffer.from(hex, 'hex'),
        headers: { 'content-type': 'application/json' },
      });
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 400,
        body: { detail: `JSON parse error - 'utf-8' codec can't decode ${reason}` },
      });
    }
    expect((await call('GET', '/v1/campaigns/', { key: apiKey })).body.count).toBe(0);
  });

  it('lone UTF-16 surrogates in any string field: 400 with the field error, nothing stored; pairs are fine', async () => {
    const { apiKey } = await newAccount();
    const json = (body: string) => ({ key: apiKey, rawBody: body, headers: { 'content-type': 'application/json' } });
    const cases: [string, string, string, Record<string, string[]>][] = [
      ['POST', '/v1/campaigns/', '{"name":"a\\ud800b"}', { name: ['Surrogate characters are not allowed: U+D800.'] }],
      ['POST', '/v1/campaigns/', '{"name":"\\udfff"}', { name: ['Surrogate characters are not allowed: U+DFFF.'] }],
      [
        'POST',
        '/v1/campaigns/',
        '{"name":"x","credit_currency":"\\udc00SD"}',
        { credit_currency: ['Surrogate characters are not allowed: U+DC00.'] },
      ],
      [
        'POST',
        '/v1/members/',
        '{"identifier":"\\ud83d","email":"a@example.com"}',
        { identifier: ['Surrogate characters are not allowed: U+D83D.'] },
      ],
      [
        'POST',
        '/v1/members/',
        '{"identifier":"ok","email":"a@example.com","first_name":"\\ude00x"}',
        { first_name: ['Surrogate characters are not allowed: U+DE00.'] },
      ],
      [
        'POST',
        '/v1/members/',
        '{"identifier":"ok","email":"a@example.com","campaign":{"id":"\\ud800"}}',
        { campaign: ['Surrogate characters are not allowed: U+D800.'] },
      ],
      [
        'POST',
        '/v1/referrals/',
        '{"user_identifier":"u\\udbff","member_code":"X"}',
        { user_identifier: ['Surrogate characters are not allowed: U+DBFF.'] },
      ],
      [
        'POST',
        '/v1/webhook-endpoints/',
        '{"url":"https://example.com/\\ud800"}',
        { url: ['Surrogate characters are not allowed: U+D800.'] },
      ],
      [
        'POST',
        '/v1/webhook-endpoints/',
        '{"url":"https://example.com/","events":["member.created","\\ud800"]}',
        { events: ['Surrogate characters are not allowed: U+D800.'] },
      ],
    ];
    for (const [method, path, raw, errors] of cases) {
      const res = await call(method, path, json(raw));
      expect({ raw, status: res.status, body: res.body }).toEqual({ raw, status: 400, body: errors });
    }
    expect((await call('GET', '/v1/campaigns/', { key: apiKey })).body.count).toBe(0);
    expect((await call('GET', '/v1/members/', { key: apiKey })).body.count).toBe(0);
    // Two different lone surrogates no longer collide in a uniqueness claim: both are refused. A pair is text.
    const pair = await call('POST', '/v1/campaigns/', json('{"name":"smile \\ud83d\\ude00"}'));
    expect([pair.status, pair.body.name]).toEqual([201, 'smile \u{1F600}']);
  });

  it('ignores unknown and read-only fields', async () => {
    const res = await call('POST', '/v1/campaigns/', {
      key,
      body: { name: 'Ignored fields', id: 'ffffffff', created_at: 1, stats: { x: 1 }, hello: 'world' },
    });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe('ffffffff');
    expect(res.body.created_at).not.toBe(1);
    expect(res.body).not.toHaveProperty('hello');
    expect(res.body).not.toHaveProperty('stats');
  });

  it('reports all field errors at once', async () => {
    const res = await call('POST', '/v1/campaigns/', {
      key,
      body: { name: '', allows_credit: 'maybe', credit_amount: '1.234', credit_currency: 'xx' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      name: ['This field may not be blank.'],
      allows_credit: ['Must be a valid boolean.'],
      credit_amount: ['Ensure that there are no more than 2 decimal places.'],
      credit_currency: ['"xx" is not a valid currency code.'],
    });
  });
});

describe('list query parameters', () => {
  let listKey: string;

  beforeAll(async () => {
    const account = await newAccount('unlimited');
    listKey = account.apiKey;
    for (const name of ['One', 'Two', 'Three']) {
      const res = await call('POST', '/v1/campaigns/', { key: listKey, body: { name } });
      expect(res.status).toBe(201);
    }
  });

  it('refuses an unknown query parameter with a 400 naming it, and keeps known ones in the links (docs/api.md)', async () => {
    const extra = await call('GET', '/v1/campaigns/?page_size=2&foo=bar', { key: listKey });
    expect(extra.status).toBe(400);
    expect(extra.body).toEqual({ foo: ['Unknown query parameter. This list takes: page_size, cursor.'] });
    const plain = await call('GET', '/v1/campaigns/?page_size=2', { key: listKey });
    expect(plain.status).toBe(200);
    expect(plain.body.count).toBe(3);
    expect(plain.body.previous).toBeNull();
    const next = new URL(plain.body.next);
    expect(next.origin).toBe('https://api.test');
    expect(next.pathname).toBe('/v1/campaigns/');
    expect(next.searchParams.get('page_size')).toBe('2');
    expect(next.searchParams.get('cursor')).toMatch(/\S/);
  });

  it.each<[string, string]>([
    ['0', 'Ensure this value is greater than or equal to 1.'],
    ['-1', 'Ensure this value is greater than or equal to 1.'],
    ['101', 'Ensure this value is less than or equal to 100.'],
    ['1000000', 'Ensure this value is less than or equal to 100.'],
    ['abc', 'A valid integer is required.'],
    ['1.5', 'A valid integer is required.'],
    ['', 'A valid integer is required.'],
    ['2x', 'A valid integer is required.'],
  ])('page_size=%j: 400 keyed page_size', async (value, message) => {
    for (const path of ['/v1/campaigns/', '/v1/members/', '/v1/referrals/', '/v1/subscriptions/']) {
      const res = await call('GET', `${path}?page_size=${encodeURIComponent(value)}`, { key: listKey });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 400, body: { page_size: [message] } });
    }
  });

  it('page_size 1 and 100 are accepted; the default is 20', async () => {
    const one = await call('GET', '/v1/campaigns/?page_size=1', { key: listKey });
    expect(one.status).toBe(200);
    expect(one.body.results).toHaveLength(1);
    expect(one.body.count).toBe(3);
    const hundred = await call('GET', '/v1/campaigns/?page_size=100', { key: listKey });
    expect(hundred.status).toBe(200);
    expect(hundred.body.results).toHaveLength(3);
    expect(hundred.body.next).toBeNull();
  });

  it.each<[string]>([
    ['garbage'],
    ['!!!'],
    ['eyJkIjoibiJ9'],
    [Buffer.from('{"d":"n","k":"x","s":"nope"}').toString('base64url')],
    ['a'.repeat(700)],
  ])('cursor=%j: 400 invalid cursor', async (cursor) => {
    for (const path of ['/v1/campaigns/', '/v1/members/', '/v1/referrals/', '/v1/subscriptions/']) {
      const res = await call('GET', `${path}?cursor=${encodeURIComponent(cursor)}`, { key: listKey });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 400, body: { cursor: ['Invalid cursor.'] } });
    }
  });

  it('a cursor of one list does not work on another list or another account', async () => {
    const first = await call('GET', '/v1/campaigns/?page_size=1', { key: listKey });
    const cursor = new URL(first.body.next).searchParams.get('cursor') as string;
    expect((await call('GET', `/v1/campaigns/?page_size=1&cursor=${cursor}`, { key: listKey })).status).toBe(200);
    const otherList = await call('GET', `/v1/members/?cursor=${cursor}`, { key: listKey });
    expect(otherList.status).toBe(400);
    expect(otherList.body).toEqual({ cursor: ['Invalid cursor.'] });
    const otherAccount = await call('GET', `/v1/campaigns/?cursor=${cursor}`, { key });
    expect(otherAccount.status).toBe(400);
    expect(otherAccount.body).toEqual({ cursor: ['Invalid cursor.'] });
  });
});

// Issue 23 #27: `GET /v1/%ff` without credentials took the whole `npm start` down (the /app check decoded
// the path outside any try). A path that does not percent-decode is a 400 in the contract's shape, from the
// handler layer (what API Gateway invokes in AWS) and from the gateway's socket alike; nothing a request
// does may end the process.
describe('malformed paths and a failing request', () => {
  const MALFORMED = { detail: 'Malformed request path: it is not valid percent-encoded UTF-8.' };

  it.each<[string, string, boolean]>([
    ['GET', '/v1/%ff', false],
    ['GET', '/v1/%ff/', true],
    ['GET', '/v1/members/%ff/', true],
    ['GET', '/v1/members/%E0%A4%A/', true],
    ['POST', '/webhooks/paddle/%ff/', false],
    ['GET', '/v1/campaigns/%c0%af/', true],
  ])('%s %s (authenticated: %s): 400 in the contract shape', async (method, path, withKey) => {
    const res = await call(method, path, withKey ? { key } : {});
    expect(res.status).toBe(400);
    expect(res.body).toEqual(MALFORMED);
  });

  it('a handler invoked as in AWS (the fallback, a parameter route) answers 400 for a path that does not decode', async () => {
    const { handler: fallback } = await import('../../functions/fallback');
    const event = (rawPath: string, routeKey: string, pathParameters?: Record<string, string>) =>
      ({
        version: '2.0',
        routeKey,
        rawPath,
        rawQueryString: '',
        headers: { host: 'api.test', authorization: `Bearer ${key}` },
        ...(pathParameters ? { pathParameters } : {}),
        isBase64Encoded: false,
        requestContext: {
          http: { method: 'GET', path: rawPath, sourceIp: '127.0.0.1', protocol: 'HTTP/1.1', userAgent: 't' },
          requestId: 'r1',
          routeKey,
          stage: '$default',
        },
      }) as never;
    const context = { functionName: 'Fallback', awsRequestId: 'r1', getRemainingTimeInMillis: () => 29_000 } as never;
    const viaFallback = (await fallback(event('/v1/%ff', '$default'), context)) as { statusCode: number; body: string };
    expect([viaFallback.statusCode, JSON.parse(viaFallback.body)]).toEqual([400, MALFORMED]);
    const { handler: getMember } = await import('../../functions/members/get');
    const viaRoute = (await getMember(event('/v1/members/%ff/', 'GET /v1/members/{member_id}/', { member_id: '%ff' }), context)) as {
      statusCode: number;
      body: string;
    };
    expect([viaRoute.statusCode, JSON.parse(viaRoute.body)]).toEqual([400, MALFORMED]);
  });

  it('over a socket: /v1/%ff and /app/%ff answer 400, a request that throws answers 500 JSON, and the gateway keeps serving', async () => {
    const { startGateway } = await import('../../infra/local/gateway');
    const { mkdtempSync, mkdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { connect } = await import('node:net');
    // A dashboard directory whose index.html is a directory: serving /app/<route> reads it and throws.
    const webDir = mkdtempSync(join(tmpdir(), 'refloop-gateway-'));
    mkdirSync(join(webDir, 'index.html'));
    const gateway = await startGateway({ port: 0, webDir });
    try {
      for (const path of ['/v1/%ff', '/app/%ff', '/v1/members/%ff/']) {
        const res = await fetch(`${gateway.url}${path}`);
        expect([path, res.status, res.headers.get('content-type'), await res.json()]).toEqual([path, 400, 'application/json', MALFORMED]);
      }
      const thrown = await fetch(`${gateway.url}/app/settings`);
      expect([thrown.status, thrown.headers.get('content-type'), await thrown.json()]).toEqual([
        500,
        'application/json',
        { detail: 'Internal server error.' },
      ]);
      // Bytes that are not HTTP at all: Node answers 400 and the server lives on.
      const garbage = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(gateway.url).port), '127.0.0.1');
        let got = '';
        socket.on('data', (d) => (got += d.toString('latin1')));
        socket.on('end', () => resolve(got));
        socket.on('close', () => resolve(got));
        socket.on('error', reject);
        socket.end('\u0000\u0001 not http\r\n\r\n');
      });
      expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
      const health = await fetch(`${gateway.url}/health`);
      expect(health.status).toBe(200);
    } finally {
      await gateway.close();
      rmSync(webDir, { recursive: true, force: true });
    }
  });
});

// Issue 23 #32: the gateway dropped a leading UTF-8 byte-order mark (TextDecoder's default), so a body that
// API Gateway hands over unchanged, and the JSON parser then refuses, was accepted locally.
describe('a body with a byte-order mark', () => {
  it('reaches the handler byte for byte, and a JSON body starting with one is a 400 (as in AWS), creating nothing', async () => {
    const { encodeBody } = await import('../../infra/local/gateway');
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"Bom"}')]);
    const passed = encodeBody(withBom);
    expect(passed.isBase64Encoded).toBe(false);
    expect(Buffer.from(passed.body as string, 'utf8').equals(withBom)).toBe(true);

    const account = await newAccount();
    const res = await call('POST', '/v1/campaigns/', {
      key: account.apiKey,
      rawBody: withBom,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^JSON parse error - /);
    const list = await call('GET', '/v1/campaigns/', { key: account.apiKey });
    expect(list.body.results.filter((c: { name: string }) => c.name === 'Bom')).toEqual([]);
    // The same body without the mark is accepted: only the mark is refused.
    const plain = await call('POST', '/v1/campaigns/', {
      key: account.apiKey,
      rawBody: withBom.subarray(3),
      headers: { 'content-type': 'application/json' },
    });
    expect(plain.status).toBe(201);
    // As API Gateway may hand it over (text, or base64 for a body it treats as binary), the parser refuses it.
    const { parseJsonBody } = await import('../../shared/http/body');
    for (const event of [
      { body: withBom.toString('utf8'), isBase64Encoded: false },
      { body: withBom.toString('base64'), isBase64Encoded: true },
    ]) {
      let status: unknown = 'no error';
      try {
        parseJsonBody({ ...event, headers: { 'content-type': 'application/json' } } as never);
      } catch (err) {
        status = (err as { status?: unknown }).status;
      }
      expect({ base64: event.isBase64Encoded, status }).toEqual({ base64: event.isBase64Encoded, status: 400 });
    }
  });
});
