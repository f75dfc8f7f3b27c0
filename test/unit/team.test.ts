// The dashboard's people, pure parts (shared/domain/team.ts, docs/dashboard.md "Roles"): what
// each role may do, the session cookie (Secure except on loopback http), the cookie parsing, the token
// shapes, the login URL, the embed origins' parsing, and the handler's access check (shared/http/handler.ts
// checkAccess: roles, session-only routes, the CSRF Origin check). The HTTP behaviour end to end is
// test/integration/dashboard-auth.test.ts.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DetailError } from '../../shared/domain/errors';
import {
  clearedSessionCookie,
  CROSS_SITE_REFUSED,
  emailHash,
  loginUrl,
  looksLikeToken,
  newToken,
  normalEmail,
  PERMISSION_DENIED,
  roleMay,
  ROLES,
  SESSION_ONLY,
  sessionCookie,
  sessionFromCookies,
  tokenHash,
  type Access,
  type Role,
} from '../../shared/domain/team';
import { checkAccess } from '../../shared/http/handler';
import { parseOrigin } from '../../shared/schemas/team';
import type { Principal } from '../../shared/store/accounts';
import type { Session } from '../../shared/store/team';

describe('roles', () => {
  it('owner: everything; admin: all but the team and API keys; finance: read and money; viewer: read', () => {
    const table: Record<Access, Role[]> = { read: [], write: [], money: [], owner: [] };
    for (const access of Object.keys(table) as Access[]) table[access] = ROLES.filter((role) => roleMay(role, access));
    expect(table).toEqual({
      read: ['owner', 'admin', 'finance', 'viewer'],
      write: ['owner', 'admin'],
      money: ['owner', 'admin', 'finance'],
      owner: ['owner'],
    });
  });
});

describe('tokens and cookies', () => {
  it('tokens are 32 random bytes in base64url (43 characters); only that shape is looked up', () => {
    const a = newToken();
    const b = newToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(looksLikeToken(a)).toBe(true);
    for (const bad of ['', a.slice(1), `${a}x`, `${a.slice(1)}!`, `${a.slice(1)}=`, ` ${a.slice(1)}`, 42, null, undefined, { a }])
      expect(looksLikeToken(bad)).toBe(false);
    // The store keys items by the SHA-256 digest, never by the token.
    expect(tokenHash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenHash(a)).not.toContain(a);
  });

  it('the session cookie is HttpOnly, SameSite=Strict, Path=/; Secure unless the site is loopback http', () => {
    const token = newToken();
    for (const base of ['http://localhost', 'http://localhost:3000', 'http://127.0.0.1:41234', 'http://[::1]:8080']) {
      expect({ base, cookie: sessionCookie(token, base) }).toEqual({
        base,
        cookie: `refloop_session=${token}; Path=/; HttpOnly; SameSite=Strict`,
      });
      expect({ base, cookie: clearedSessionCookie(base) }).toEqual({
        base,
        cookie: 'refloop_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0',
      });
    }
    // Anything else is Secure: https, a non-loopback http host, a host that merely starts like a loopback one.
    for (const base of [
      'https://refloop.example',
      'https://localhost',
      'https://127.0.0.1:8443',
      'http://refloop.example',
      'http://localhost.evil.example',
      'http://127.0.0.1.nip.io',
    ]) {
      expect({ base, cookie: sessionCookie(token, base) }).toEqual({
        base,
        cookie: `refloop_session=${token}; Path=/; HttpOnly; SameSite=Strict; Secure`,
      });
      expect({ base, cookie: clearedSessionCookie(base) }).toEqual({
        base,
        cookie: 'refloop_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure',
      });
    }
  });

  it('finds the session token in a Cookie header or in the HTTP API v2 cookies array; a malformed one is none', () => {
    const token = newToken();
    expect(sessionFromCookies(`refloop_session=${token}`)).toBe(token);
    expect(sessionFromCookies(`theme=dark; refloop_session=${token}; other=1`)).toBe(token);
    expect(sessionFromCookies(undefined, ['theme=dark', `refloop_session=${token}`])).toBe(token);
    expect(sessionFromCookies(undefined, [` refloop_session = ${token} `])).toBe(token);
    for (const header of [
      '',
      'refloop_session=',
      'refloop_session=short',
      `refloop_session=${token}x`,
      `refloop_sessionx=${token}`,
      `xrefloop_session=${token}`,
      `refloop_session`,
    ]) {
      expect({ header, token: sessionFromCookies(header) }).toEqual({ header, token: null });
    }
  });

  it('login links carry the token in the fragment of /app/login, never in the path or the query', () => {
    const token = newToken();
    const url = new URL(loginUrl('https://refloop.example', token));
    expect([url.origin, url.pathname, url.search, url.hash]).toEqual(['https://refloop.example', '/app/login', '', `#token=${token}`]);
  });

  it('addresses are compared lower-case and trimmed', () => {
    expect(normalEmail('  Dana@Acme.Example ')).toBe('dana@acme.example');
    expect(emailHash('Dana@Acme.Example')).toBe(emailHash('dana@acme.example '));
    expect(emailHash('dana@acme.example')).not.toContain('dana');
  });
});

describe('embed origins', () => {
  it('take https://host[:port] (http only on loopback) and nothing else', () => {
    const cases: [string, string | null][] = [
      ['https://app.acme.example', 'https://app.acme.example'],
      ['https://app.acme.example/', 'https://app.acme.example'],
      ['https://app.acme.example:8443', 'https://app.acme.example:8443'],
      ['https://APP.acme.example', null],
      ['http://localhost:5173', 'http://localhost:5173'],
      ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
      ['http://x.example', null],
      ['https://x.example/path', null],
      ['https://x.example/?q=1', null],
      ['https://x.example/#frag', null],
      ['https://user:pw@x.example', null],
      ['javascript:alert(1)', null],
      ['data:text/html,hi', null],
      ['x.example', null],
      ['', null],
      ['*', null],
    ];
    for (const [input, origin] of cases) expect({ input, origin: parseOrigin(input) }).toEqual({ input, origin });
  });
});

describe('checkAccess (shared/http/handler.ts)', () => {
  const BASE = { host: 'api.test', 'x-forwarded-proto': 'https' };
  const event = (method: string, headers: Record<string, string> = {}): APIGatewayProxyEventV2 =>
    ({ headers: { ...BASE, ...headers }, requestContext: { http: { method } } }) as unknown as APIGatewayProxyEventV2;
  const session = (role: Role): Session => ({
    accountId: 'acct',
    operatorId: 'tm_x',
    email: 'x@example.com',
    role,
    plan: 'regular',
    expiresAt: 0,
    accountName: 'X',
    hash: 'h',
  });
  const keyPrincipal: Principal = { accountId: 'acct', plan: 'regular', keyId: 'k' };
  const sessionPrincipal = (role: Role): Principal => ({ accountId: 'acct', plan: 'regular', keyId: 's', session: session(role) });

  /** The status and detail checkAccess refuses with, or 'allowed'. */
  function outcome(fn: () => void): string {
    try {
      fn();
      return 'allowed';
    } catch (err) {
      if (err instanceof DetailError) return `${err.status} ${err.message}`;
      throw err;
    }
  }

  it('an API key acts for the whole account, except on session-only routes', () => {
    for (const access of ['read', 'write', 'money', 'owner'] as Access[]) {
      expect(outcome(() => checkAccess(event('POST'), keyPrincipal, access, false))).toBe('allowed');
      expect(outcome(() => checkAccess(event('POST'), keyPrincipal, access, true))).toBe(`403 ${SESSION_ONLY}`);
      expect(outcome(() => checkAccess(event('GET'), keyPrincipal, access, true))).toBe(`403 ${SESSION_ONLY}`);
    }
  });

  it("a session's unsafe request needs this site's Origin (before the role is even considered)", () => {
    const owner = sessionPrincipal('owner');
    for (const method of ['POST', 'PATCH', 'DELETE']) {
      for (const origin of [
        undefined,
        'https://evil.example',
        'http://api.test',
        'https://api.test:443x',
        'https://api.test.evil.example',
        'null',
        'https://API.test/',
      ]) {
        const headers: Record<string, string> = origin === undefined ? {} : { origin };
        expect({ method, origin, outcome: outcome(() => checkAccess(event(method, headers), owner, 'write', false)) }).toEqual({
          method,
          origin,
          outcome: `403 ${CROSS_SITE_REFUSED}`,
        });
      }
      expect(outcome(() => checkAccess(event(method, { origin: 'https://api.test' }), owner, 'write', false))).toBe('allowed');
      // A viewer from a foreign origin hears about the origin, not about the role.
      expect(
        outcome(() => checkAccess(event(method, { origin: 'https://evil.example' }), sessionPrincipal('viewer'), 'write', false)),
      ).toBe(`403 ${CROSS_SITE_REFUSED}`);
    }
    // Safe methods need no Origin.
    for (const method of ['GET', 'HEAD', 'OPTIONS'])
      expect(outcome(() => checkAccess(event(method), owner, 'read', false))).toBe('allowed');
  });

  it('a session with the right Origin gets what its role allows, 403 "You do not have permission" otherwise', () => {
    const same = { origin: 'https://api.test' };
    const got: Record<string, Record<Access, string>> = {};
    for (const role of ROLES) {
      got[role] = { read: '', write: '', money: '', owner: '' };
      for (const access of ['read', 'write', 'money', 'owner'] as Access[]) {
        got[role]![access] =
          outcome(() =>
            checkAccess(event(access === 'read' ? 'GET' : 'POST', same), sessionPrincipal(role), access, access === 'owner'),
          ) === 'allowed'
            ? 'yes'
            : 'no';
      }
    }
    expect(got).toEqual({
      owner: { read: 'yes', write: 'yes', money: 'yes', owner: 'yes' },
      admin: { read: 'yes', write: 'yes', money: 'yes', owner: 'no' },
      finance: { read: 'yes', write: 'no', money: 'yes', owner: 'no' },
      viewer: { read: 'yes', write: 'no', money: 'no', owner: 'no' },
    });
    expect(outcome(() => checkAccess(event('POST', same), sessionPrincipal('viewer'), 'write', false))).toBe(`403 ${PERMISSION_DENIED}`);
  });
});
