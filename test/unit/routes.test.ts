// The route table (functions/routes.ts): path matching, route selection, 405 lists, and the
// completeness check: every route has a handler file that exports `handler` and an integration test.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fallbackRoute, findRoute, matchPath, routes, type HttpMethod, type Route } from '../../functions/routes';

const ROOT = join(__dirname, '..', '..');
const INTEGRATION_DIR = join(ROOT, 'test', 'integration');

function routeNamed(name: string): Route {
  const route = routes.find((r) => r.name === name);
  if (!route) throw new Error(`no route ${name}`);
  return route;
}

describe('matchPath', () => {
  it('matches literal paths with or without the trailing slash', () => {
    expect(matchPath('/v1/campaigns/', '/v1/campaigns/')).toEqual({});
    expect(matchPath('/v1/campaigns/', '/v1/campaigns')).toEqual({});
  });

  it('extracts parameters with or without the trailing slash', () => {
    expect(matchPath('/v1/campaigns/{id}/', '/v1/campaigns/abcd1234/')).toEqual({ id: 'abcd1234' });
    expect(matchPath('/v1/campaigns/{id}/', '/v1/campaigns/abcd1234')).toEqual({ id: 'abcd1234' });
  });

  it('URL-decodes parameters (one segment each, even when the decoded value holds a slash)', () => {
    expect(matchPath('/v1/referrals/user/{user_identifier}/', '/v1/referrals/user/a%2Fb%20c%40d.com/')).toEqual({
      user_identifier: 'a/b c@d.com',
    });
    expect(matchPath('/v1/referrals/user/{user_identifier}/', '/v1/referrals/user/%C3%A9l%C3%A8ve/')).toEqual({
      user_identifier: 'élève',
    });
    expect(matchPath('/v1/referrals/user/{user_identifier}/', '/v1/referrals/user/plus+sign/')).toEqual({
      user_identifier: 'plus+sign',
    });
  });

  it('refuses a parameter that is not valid percent-encoding', () => {
    expect(matchPath('/v1/members/{id}/', '/v1/members/%E0%A4%A/')).toBeNull();
    expect(matchPath('/v1/members/{id}/', '/v1/members/%/')).toBeNull();
  });

  it('refuses other segment counts and other literals', () => {
    expect(matchPath('/v1/campaigns/', '/v1/campaigns/x/')).toBeNull();
    expect(matchPath('/v1/campaigns/{id}/', '/v1/campaigns/')).toBeNull();
    expect(matchPath('/v1/campaigns/{id}/', '/v1/campaigns/a/b/')).toBeNull();
    expect(matchPath('/v1/campaigns/{id}/', '/v1/members/a/')).toBeNull();
    expect(matchPath('/v1/campaigns/', '/v2/campaigns/')).toBeNull();
    expect(matchPath('/v1/campaigns/', '/V1/Campaigns/')).toBeNull();
  });
});

describe('findRoute', () => {
  it('prefers literal segments to parameters: /v1/referrals/user/x/ is GetReferralByUser', () => {
    expect(findRoute('GET', '/v1/referrals/user/x/')).toEqual({
      route: routeNamed('GetReferralByUser'),
      pathParameters: { user_identifier: 'x' },
    });
    expect(findRoute('GET', '/v1/referrals/user/x')).toEqual({
      route: routeNamed('GetReferralByUser'),
      pathParameters: { user_identifier: 'x' },
    });
  });

  it('still routes other ids to GetReferral, including the id "user"', () => {
    expect(findRoute('GET', '/v1/referrals/0190a1b2c3d4e5f60718293a4b5c6d7e/')).toEqual({
      route: routeNamed('GetReferral'),
      pathParameters: { id: '0190a1b2c3d4e5f60718293a4b5c6d7e' },
    });
    expect(findRoute('GET', '/v1/referrals/user/')).toEqual({ route: routeNamed('GetReferral'), pathParameters: { id: 'user' } });
  });

  it('URL-decodes path parameters', () => {
    expect(findRoute('GET', '/v1/referrals/user/john%40example.com%2F1/')).toEqual({
      route: routeNamed('GetReferralByUser'),
      pathParameters: { user_identifier: 'john@example.com/1' },
    });
  });

  it('picks the route by method (case-insensitive)', () => {
    expect(findRoute('GET', '/v1/members/')).toEqual({ route: routeNamed('ListMembers'), pathParameters: {} });
    expect(findRoute('POST', '/v1/members')).toEqual({ route: routeNamed('CreateMember'), pathParameters: {} });
    expect(findRoute('patch', '/v1/members/m1/')).toEqual({ route: routeNamed('UpdateMember'), pathParameters: { id: 'm1' } });
    expect(findRoute('DELETE', '/v1/members/m1')).toEqual({ route: routeNamed('DeleteMember'), pathParameters: { id: 'm1' } });
  });

  it('returns the allowed methods for a known path and another method', () => {
    expect(findRoute('PUT', '/v1/campaigns/')).toEqual({ allowed: ['GET', 'POST'] });
    expect(findRoute('PUT', '/v1/campaigns/abcd1234/')).toEqual({ allowed: ['GET', 'PATCH', 'DELETE'] });
    expect(findRoute('POST', '/v1/referrals/abc/')).toEqual({ allowed: ['GET', 'DELETE'] });
    expect(findRoute('DELETE', '/v1/referrals/user/x/')).toEqual({ allowed: ['GET'] });
    expect(findRoute('POST', '/v1/subscriptions/')).toEqual({ allowed: ['GET'] });
    expect(findRoute('DELETE', '/v1/subscriptions/12/')).toEqual({ allowed: ['GET'] });
    expect(findRoute('PATCH', '/v1/subscriptions/12')).toEqual({ allowed: ['GET'] });
  });

  it('lists, for every route path, exactly the methods of the routes on that path', () => {
    const byPath = new Map<string, HttpMethod[]>();
    for (const r of routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r.method]);
    for (const [path, methods] of byPath) {
      const concrete = path.replace(/\{[^}]+\}/g, 'x1');
      const answer = findRoute('TRACE', concrete);
      expect({ path, answer }).toEqual({ path, answer: { allowed: methods } });
    }
  });

  it('routes / (and the empty path) to ApiRoot and /health to Health, with or without the trailing slash', () => {
    expect(findRoute('GET', '/')).toEqual({ route: routeNamed('ApiRoot'), pathParameters: {} });
    expect(findRoute('GET', '')).toEqual({ route: routeNamed('ApiRoot'), pathParameters: {} });
    expect(findRoute('GET', '/health')).toEqual({ route: routeNamed('Health'), pathParameters: {} });
    expect(findRoute('GET', '/health/')).toEqual({ route: routeNamed('Health'), pathParameters: {} });
    expect(findRoute('POST', '/')).toEqual({ allowed: ['GET'] });
    expect(findRoute('DELETE', '/health')).toEqual({ allowed: ['GET'] });
  });

  it('returns null for unknown paths', () => {
    for (const path of [
      '/healthz',
      '/v1/health',
      '/v1/',
      '/v1/nope/',
      '/v2/campaigns/',
      '/v1/campaigns/a/b/',
      '/v1/referrals/user/a/b/',
      '/campaigns/',
    ]) {
      expect({ path, match: findRoute('GET', path) }).toEqual({ path, match: null });
    }
  });
});

describe('route table', () => {
  // The dashboard (docs/dashboard.md "Logging in"): its login endpoints live under /auth/ (they take
  // no credential and are not API resources); the team, API keys and the provider connection take only a
  // dashboard session; every other /v1/ route takes a secret API key or a session.
  const LOGIN_ROUTES = ['POST /auth/login-links/', 'POST /auth/sessions/', 'GET /auth/sessions/current/', 'DELETE /auth/sessions/current/'];
  const SESSION_ROUTES = [
    'GET /v1/team/',
    'POST /v1/team/',
    'PATCH /v1/team/{id}/',
    'DELETE /v1/team/{id}/',
    'GET /v1/api-keys/',
    'POST /v1/api-keys/',
    'DELETE /v1/api-keys/{id}/',
    'POST /v1/account/provider/',
    'GET /v1/account/payout-rails/',
    'PUT /v1/account/payout-rails/{kind}/',
    'DELETE /v1/account/payout-rails/{kind}/',
  ];
  // The member portal (docs/portal.md): its API is /portal/v1/ and takes
  // only a portal session; the link's opening takes the link token (no credential, rate limited per IP).
  const PORTAL_ROUTES = [
    'GET /portal/v1/me/',
    'PATCH /portal/v1/me/',
    'GET /portal/v1/stats/',
    'GET /portal/v1/referrals/',
    'GET /portal/v1/rewards/',
    'GET /portal/v1/payouts/',
    'GET /portal/v1/tax-details/',
    'PUT /portal/v1/tax-details/',
    // The member's named links (docs/attribution.md).
    'GET /portal/v1/links/',
    'POST /portal/v1/links/',
    'DELETE /portal/v1/links/{slug}/',
    // Stripe's "Set up payouts" (docs/portal.md "Payouts").
    'POST /portal/v1/me/stripe-account-link/',
  ];
  // The portal's credential-less doors: opening a link, an affiliate's login link and its opening, log out.
  const PORTAL_LINK_ROUTES = ['OpenPortalSession', 'CreatePortalLoginLink', 'OpenPortalLoginSession', 'EndPortalSession'];
  // The portal's page takes no credential but reads the account (its embed origins are its frame-ancestors).
  const PUBLIC_READS = ['PortalPage', 'PortalLoginPage'];
  // GET /v1/account/ gives an account from before publishable keys its key on first sight: a GET that writes.
  const READS_THAT_WRITE = ['GetAccount'];

  it('has unique names and unique method + path pairs, under /v1/ or /js/v1/ (or the specified exceptions) with a trailing slash', () => {
    expect(new Set(routes.map((r) => r.name)).size).toBe(routes.length);
    expect(new Set(routes.map((r) => `${r.method} ${r.path}`)).size).toBe(routes.length);
    // The specification's conversion path has no /v1/ prefix, provider webhooks are not API resources,
    // the rendered reference lives at /docs/ (and `/` points to it), the browser script is a file, the
    // liveness check is /health, where load balancers and uptime checks look for it, and the dashboard's
    // login endpoints are under /auth/.
    const PROVIDER_INTAKES = ['ProviderWebhook', 'PaypalRailWebhook', 'StripeConnectRailWebhook', 'WiseRailWebhook'];
    const unversioned = new Set([
      '/referrals/{id}/conversion/',
      '/webhooks/{provider}/{account_id}/',
      '/webhooks/paypal/{account_id}/',
      '/webhooks/stripe-connect/{account_id}/',
      '/webhooks/wise/{account_id}/',
      '/docs/',
      '/',
      '/health',
      '/js/refloop.js',
      '/js/refloop-embed.js',
      '/portal/{account_id}/',
      '/portal/{account_id}/login/',
      '/unsubscribe/{token}/',
      // An affiliate programme's public page and its confirmation link (docs/affiliates.md): addresses people open.
      '/join/{account_slug}/{campaign_slug}/',
      '/join/confirm/{token}/',
      // A file's name, like the other exports' `{file}` (members.csv), but a route of its own (owner and finance only).
      '/v1/exports/tax-details.csv/',
    ]);
    // The OpenAPI document is a file, not a resource: no trailing slash.
    const documents = new Set(['/v1/openapi.json']);
    for (const r of routes) {
      if (documents.has(r.path)) expect(r.path).toMatch(/^\/v1\/[a-z]+\.json$/);
      else if (r.path.startsWith('/auth/')) expect(r.path).toMatch(/^\/auth\/[a-z_-]+(\/[a-z_-]+)*\/$/);
      else if (!unversioned.has(r.path))
        expect(r.path).toMatch(/^\/(js\/|portal\/|join\/)?v1\/([a-z_-]+|\{[a-z_]+\})(\/([a-z_-]+|\{[a-z_]+\}))*\/$/);
      expect(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']).toContain(r.method);
      // Public endpoints (/js/) take the publishable key and nothing else does; the script, the CORS
      // preflights and the public documentation take no credential and touch no table; /auth/ is exactly
      // the login routes; session-only routes are /v1/ routes.
      if (r.path.startsWith('/js/v1/') && r.method !== 'OPTIONS') expect(r.auth).toBe('publishable-key');
      // A member email's unsubscribe link: no credential but its token; its page reads, its one-click POST writes.
      else if (r.path === '/unsubscribe/{token}/')
        expect({ route: r.name, auth: r.auth, table: r.table, queues: r.queues }).toEqual({
          route: r.name,
          auth: 'none',
          table: r.method === 'GET' ? 'read' : 'write',
          queues: undefined,
        });
      // An affiliate programme's public page, its form's endpoint and its confirmation link: no credential;
      // the pages read, the form and the confirmation's button write (a join request, an application).
      else if (r.path.startsWith('/join/'))
        expect({ route: r.name, auth: r.auth, table: r.table }).toEqual({
          route: r.name,
          auth: 'none',
          table: r.method === 'GET' ? 'read' : 'write',
        });
      else if (r.auth === 'none')
        expect({ route: r.name, method: r.method, table: r.table }).toEqual({
          route: r.name,
          method: r.method === 'OPTIONS' ? 'OPTIONS' : 'GET',
          table: PUBLIC_READS.includes(r.name) ? 'read' : 'none',
        });
      else if (r.path.startsWith('/portal/v1/'))
        expect({ route: r.name, auth: r.auth }).toEqual({
          route: r.name,
          auth: PORTAL_LINK_ROUTES.includes(r.name) ? 'portal-link' : 'portal',
        });
      else if (r.path.startsWith('/auth/')) expect({ route: r.name, auth: r.auth }).toEqual({ route: r.name, auth: 'login' });
      else if (r.auth === 'session') expect(r.path).toMatch(/^\/v1\//);
      else
        expect({ route: r.name, auth: r.auth === undefined || r.auth === 'api-key' || PROVIDER_INTAKES.includes(r.name) }).toEqual({
          route: r.name,
          auth: true,
        });
      // Only the webhook intakes write nothing although they are POSTs: they read settings and queue.
      if (r.table !== 'none') {
        const expected = READS_THAT_WRITE.includes(r.name)
          ? 'write'
          : r.method === 'GET' || PROVIDER_INTAKES.includes(r.name)
            ? 'read'
            : 'write';
        expect({ route: r.name, table: r.table }).toEqual({ route: r.name, table: expected });
      }
    }
    expect(
      routes
        .filter((r) => r.auth === 'none')
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    ).toEqual(
      [
        'GET /',
        'GET /health',
        'GET /docs/',
        'GET /v1/openapi.json',
        'GET /js/refloop.js',
        'GET /js/refloop-embed.js',
        'GET /portal/{account_id}/',
        'GET /portal/{account_id}/login/',
        'GET /join/{account_slug}/{campaign_slug}/',
        'POST /join/v1/{account_slug}/{campaign_slug}/applications/',
        'GET /join/confirm/{token}/',
        'POST /join/confirm/{token}/',
        'OPTIONS /js/v1/clicks/',
        'OPTIONS /js/v1/referrals/',
        'GET /unsubscribe/{token}/',
        'POST /unsubscribe/{token}/',
      ].sort(),
    );
    expect(
      routes
        .filter((r) => r.auth === 'portal')
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    ).toEqual([...PORTAL_ROUTES].sort());
    expect(
      routes
        .filter((r) => r.auth === 'portal-link')
        .map((r) => r.name)
        .sort(),
    ).toEqual([...PORTAL_LINK_ROUTES].sort());
    // No portal route may come near a provider or webhook secret; only the login link's request queues (its email).
    expect(
      routes
        .filter(
          (r) =>
            r.path.startsWith('/portal/') &&
            ((r.queues && r.name !== 'CreatePortalLoginLink') || r.providerSecrets || r.providerWebhookSecrets || r.webhookSecrets),
        )
        .map((r) => r.name),
    ).toEqual([]);
    expect(
      routes
        .filter((r) => r.auth === 'login')
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    ).toEqual([...LOGIN_ROUTES].sort());
    expect(
      routes
        .filter((r) => r.auth === 'session')
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    ).toEqual([...SESSION_ROUTES].sort());
    expect(routes.filter((r) => READS_THAT_WRITE.includes(r.name)).map((r) => `${r.method} ${r.path} ${r.auth ?? 'api-key'}`)).toEqual([
      'GET /v1/account/ api-key',
    ]);
  });

  it('lets only the provider connection route (and the login-link and invite routes, through the member-emails worker) near secrets and the mail queue', () => {
    // SetProviderConnection is the only API route that writes provider secrets (both kinds).
    expect(routes.filter((r) => r.providerSecrets && r.auth === 'session').map((r) => r.name)).toEqual(['SetProviderConnection']);
    expect(routes.find((r) => r.name === 'SetProviderConnection')).toMatchObject({
      providerSecrets: true,
      providerWebhookSecrets: true,
      table: 'write',
    });
    // Login links and invitations are mailed by the member-emails worker; the request path only queues them.
    expect(
      routes
        .filter((r) => r.auth === 'login' || r.auth === 'session')
        .filter((r) => r.queues)
        .map((r) => [r.name, r.queues]),
    ).toEqual([
      ['CreateLoginLink', ['member-emails']],
      ['InviteTeamMember', ['member-emails']],
    ]);
  });

  it('the fallback entry exists and exports a handler', () => {
    const file = join(ROOT, fallbackRoute.entry);
    expect(existsSync(file)).toBe(true);
    expect(typeof (require(file) as { handler?: unknown }).handler).toBe('function');
  });
});

// ---- Completeness: every route has a handler file and an integration test ----------------------

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * A test source calls a route when it passes the route's method as a string literal directly followed
 * by the route's path as a string literal: the shape of `api('GET', `/v1/members/${id}/`, ...)`.
 * A `{param}` segment matches one segment: a `${...}` template expression or literal characters
 * without a slash. The trailing slash is optional and the path may end with a query string.
 */
function routeCallPattern(route: Pick<Route, 'method' | 'path'>): RegExp {
  const segments = route.path.split('/').filter((s) => s.length > 0);
  const segment = (s: string) => (s.startsWith('{') && s.endsWith('}') ? '(?:\\$\\{[^}\\n]*\\}|[^/\\s\'"`?#$])+' : escapeRegExp(s));
  const path = `\\/${segments.map(segment).join('\\/')}\\/?`;
  const quote = '[\'"`]';
  return new RegExp(`${quote}${route.method}${quote}\\s*,\\s*${quote}${path}(?=[?'"\`])`);
}

function integrationTestFiles(dir = INTEGRATION_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return integrationTestFiles(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Integration test files (relative paths) that call the route. */
function testsCalling(route: Pick<Route, 'method' | 'path'>, files: { file: string; text: string }[]): string[] {
  const pattern = routeCallPattern(route);
  return files.filter((f) => pattern.test(f.text)).map((f) => relative(ROOT, f.file));
}

describe('routeCallPattern', () => {
  const getMember = { method: 'GET', path: '/v1/members/{id}/' } as const;
  const listMembers = { method: 'GET', path: '/v1/members/' } as const;
  const byUser = { method: 'GET', path: '/v1/referrals/user/{user_identifier}/' } as const;
  const getReferral = { method: 'GET', path: '/v1/referrals/{id}/' } as const;

  it.each<[string]>([
    ["api('GET', `/v1/members/${member.id}/`, { key })"],
    ["api('GET', `/v1/members/${id}`)"],
    ['api("GET", "/v1/members/0190a1b2c3d4e5f60718293a4b5c6d7e/")'],
    ["api(\n      'GET',\n      `/v1/members/${ids[0]}/?expand=1`,\n    )"],
    ["api('GET', `/v1/members/${encodeURIComponent('a/b')}/`)"],
  ])('recognises a GetMember call in %j', (text) => {
    expect(routeCallPattern(getMember).test(text)).toBe(true);
  });

  it.each<[string]>([
    ["api('GET', '/v1/members/')"],
    ["api('GET', '/v1/members?page_size=2')"],
    ["api('PATCH', `/v1/members/${id}/`)"],
    ["api('GET', `/v1/members/${id}/extra/`)"],
    ['const path = `/v1/members/${id}/`; // GET'],
    ["api('GET', `/v1/campaigns/${id}/`)"],
  ])('does not take %j for a GetMember call', (text) => {
    expect(routeCallPattern(getMember).test(text)).toBe(false);
  });

  it('tells a list call from an item call', () => {
    expect(routeCallPattern(listMembers).test("api('GET', '/v1/members/?campaign=x')")).toBe(true);
    expect(routeCallPattern(listMembers).test("api('GET', '/v1/members')")).toBe(true);
    expect(routeCallPattern(listMembers).test("api('GET', `/v1/members/${id}/`)")).toBe(false);
  });

  it('tells GetReferralByUser from GetReferral', () => {
    expect(routeCallPattern(byUser).test("api('GET', `/v1/referrals/user/${encodeURIComponent(user)}/`)")).toBe(true);
    expect(routeCallPattern(getReferral).test("api('GET', `/v1/referrals/user/${encodeURIComponent(user)}/`)")).toBe(false);
    expect(routeCallPattern(getReferral).test("api('GET', `/v1/referrals/${referral.id}/`)")).toBe(true);
    expect(routeCallPattern(byUser).test("api('GET', `/v1/referrals/${referral.id}/`)")).toBe(false);
  });
});

describe('every route is complete', () => {
  const files = integrationTestFiles().map((file) => ({ file, text: readFileSync(file, 'utf8') }));

  it('finds integration test files to check against', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(routes.map((r) => [r.name, r] as const))('%s: the entry file exists and exports handler', (_name, route) => {
    const file = join(ROOT, route.entry);
    expect(existsSync(file)).toBe(true);
    const mod = require(file) as { handler?: unknown };
    expect(typeof mod.handler).toBe('function');
  });

  it.each(routes.map((r) => [r.name, r] as const))('%s: an integration test calls it', (name, route) => {
    const callers = testsCalling(route, files);
    // On failure the message names the route that has no integration test.
    expect({ route: `${name} ${route.method} ${route.path}`, hasIntegrationTest: callers.length > 0 }).toEqual({
      route: `${name} ${route.method} ${route.path}`,
      hasIntegrationTest: true,
    });
  });

  it('would fail for a route that no integration test calls', () => {
    const fake: Route = { name: 'FakeRoute', method: 'PATCH', path: '/v1/fake-things/{id}/', entry: 'functions/fake.ts', table: 'write' };
    const withFake = [...routes, fake];
    const missing = withFake.filter((r) => testsCalling(r, files).length === 0).map((r) => r.name);
    expect(missing).toContain('FakeRoute');
    expect(existsSync(join(ROOT, fake.entry))).toBe(false);
    // The same check passes for a route this repository's own tests do call.
    expect(testsCalling(routeNamed('GetSubscription'), files)).toContain('test/integration/subscriptions.test.ts');
  });
});
