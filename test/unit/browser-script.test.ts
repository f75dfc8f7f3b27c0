// The browser script's promises that need no browser: it is plain ES2017 (older syntax engines parse
// it), it stays under 4 KB gzipped, and it never reads anything but its own cookie.
import { parse } from 'acorn';
import { gzipSync } from 'node:zlib';
import { REFLOOP_SCRIPT } from '../../shared/js/script';

describe('/js/refloop.js', () => {
  it('parses as an ES2017 script', () => {
    expect(() => parse(REFLOOP_SCRIPT, { ecmaVersion: 2017, sourceType: 'script' })).not.toThrow();
  });

  it('is under 4 KB gzipped', () => {
    const size = gzipSync(Buffer.from(REFLOOP_SCRIPT, 'utf8'), { level: 9 }).length;
    expect(size).toBeLessThan(4096);
  });

  it('sets only the refloop-ref cookie, with the documented attributes', () => {
    expect(REFLOOP_SCRIPT).toContain("var COOKIE = 'refloop-ref';");
    // The lifetime is the account's attribution window (test/unit/browser-attribution.test.ts runs it).
    expect(REFLOOP_SCRIPT).toContain("'; Path=/; Max-Age=' + Math.max(0, maxAge) + '; SameSite=Lax'");
    expect(REFLOOP_SCRIPT).toContain("if (location.protocol === 'https:') cookie += '; Secure';");
    expect(REFLOOP_SCRIPT.match(/d\.cookie =/g)).toHaveLength(1);
  });
});
