// The browser script's attribution (docs/attribution.md), run as browsers get it in a small page harness:
// each "page view" is a fresh VM context sharing one cookie jar (which honours Max-Age) and one clock; the
// API is a fake fetch that answers clicks with the account's attribution and referrals with an id.
import { runInNewContext } from 'node:vm';
import { REFLOOP_SCRIPT } from '../../shared/js/script';

const DAY = 86_400;

interface Call {
  path: string;
  body: Record<string, unknown>;
}

class Browser {
  /** Milliseconds, as Date.now() answers in the page. */
  clock = Date.UTC(2026, 0, 1);
  private readonly jar = new Map<string, { value: string; expiresMs: number; attributes: string }>();
  readonly calls: Call[] = [];

  constructor(
    private account: { model: 'first_click' | 'last_click'; days: number },
    private readonly failClicks = false,
  ) {}

  setAccount(account: { model: 'first_click' | 'last_click'; days: number }): void {
    this.account = account;
  }

  advanceDays(days: number): void {
    this.clock += days * DAY * 1000;
  }

  /** The cookie's attributes as last written (`Max-Age=…` etc.), or undefined when it has expired. */
  cookie(): { state: Record<string, unknown>; attributes: string } | undefined {
    const c = this.jar.get('refloop-ref');
    if (!c || c.expiresMs <= this.clock) return undefined;
    return { state: JSON.parse(decodeURIComponent(c.value)), attributes: c.attributes };
  }

  /** Loads a page of the site at `search` (e.g. `?via=A`), runs the script, waits for its click. */
  async visit(
    search = '',
  ): Promise<{ code: string | null; sub: string | null; referralId: string | null; signup(user: string): Promise<string | null> }> {
    const browser = this;
    let referrals = 0;
    const document = {
      currentScript: {
        src: 'https://api.example/js/refloop.js',
        getAttribute: (name: string) => (name === 'data-key' ? 'rfl_pub_test' : null),
      },
      querySelector: () => null,
      get cookie(): string {
        return [...browser.jar]
          .filter(([, c]) => c.expiresMs > browser.clock)
          .map(([name, c]) => `${name}=${c.value}`)
          .join('; ');
      },
      set cookie(text: string) {
        const [pair = '', ...attributes] = text.split(/;\s*/);
        const eq = pair.indexOf('=');
        const maxAge = Number(/^Max-Age=(.*)$/i.exec(attributes.find((a) => /^Max-Age=/i.test(a)) ?? '')?.[1] ?? NaN);
        const expiresMs = Number.isFinite(maxAge) ? browser.clock + maxAge * 1000 : Number.POSITIVE_INFINITY;
        browser.jar.set(pair.slice(0, eq), { value: pair.slice(eq + 1), expiresMs, attributes: attributes.join('; ') });
      },
    };
    const fetch = async (url: string, init: { body: string }) => {
      const path = new URL(url).pathname;
      const body = JSON.parse(init.body) as Record<string, unknown>;
      browser.calls.push({ path, body });
      if (path === '/js/v1/clicks/' && browser.failClicks) throw new TypeError('network down');
      const answer =
        path === '/js/v1/clicks/'
          ? { recorded: true, attribution: browser.account }
          : { id: `ref${++referrals}${String(body.member_code)}${String(body.user_identifier)}` };
      return { ok: true, status: 200, json: async () => answer };
    };
    const window: Record<string, unknown> = {
      crypto: { getRandomValues: (a: Uint8Array) => a.fill(7) },
      dispatchEvent: () => true,
    };
    const context = {
      window,
      document,
      location: { search, href: `https://site.example/${search}`, protocol: 'https:' },
      fetch,
      URL,
      URLSearchParams,
      Uint8Array,
      JSON,
      Math,
      Promise,
      Object,
      String,
      Error,
      CustomEvent: class {
        constructor(
          readonly type: string,
          readonly init: unknown,
        ) {}
      },
      Date: { now: () => browser.clock },
    };
    runInNewContext(REFLOOP_SCRIPT, context);
    const refloop = window.refloop as { clicked: Promise<boolean> } & Record<string, unknown>;
    await refloop.clicked;
    return refloop as never;
  }

  clicks(): Call[] {
    return this.calls.filter((c) => c.path === '/js/v1/clicks/');
  }

  signups(): Call[] {
    return this.calls.filter((c) => c.path === '/js/v1/referrals/');
  }
}

const maxAge = (attributes: string | undefined) => Number(/Max-Age=(\d+)/.exec(attributes ?? '')?.[1]);

describe('attribution in the browser script', () => {
  it('first_click (the default): day 0 A, day 10 B, day 20 signup goes to A; both clicks are recorded', async () => {
    const b = new Browser({ model: 'first_click', days: 60 });
    expect((await b.visit('?via=ALICE')).code).toBe('ALICE');
    expect(maxAge(b.cookie()?.attributes)).toBe(60 * DAY);
    b.advanceDays(10);
    expect((await b.visit('?via=BOB')).code).toBe('ALICE');
    expect(b.clicks().map((c) => c.body.code)).toEqual(['ALICE', 'BOB']);
    // The window still runs from day 0: 50 days left.
    expect(maxAge(b.cookie()?.attributes)).toBe(50 * DAY);
    b.advanceDays(10);
    const page = await b.visit('/signup');
    expect(await page.signup('user-1')).toMatch(/^ref1ALICE/);
    expect(b.signups()[0]?.body).toEqual({ member_code: 'ALICE', user_identifier: 'user-1', sub: null });
  });

  it('last_click: day 10 B replaces A, and its window starts again', async () => {
    const b = new Browser({ model: 'last_click', days: 60 });
    await b.visit('?via=ALICE');
    b.advanceDays(10);
    expect((await b.visit('?via=BOB')).code).toBe('BOB');
    expect(maxAge(b.cookie()?.attributes)).toBe(60 * DAY);
    b.advanceDays(10);
    const page = await b.visit();
    await page.signup('user-1');
    expect(b.signups()[0]?.body.member_code).toBe('BOB');
  });

  it('after attribution_days the code is gone: no signup is attributed, and the next link starts afresh', async () => {
    const b = new Browser({ model: 'first_click', days: 60 });
    await b.visit('?via=ALICE');
    b.advanceDays(60);
    const page = await b.visit();
    expect(page.code).toBeNull();
    expect(await page.signup('user-1')).toBeNull();
    expect(b.signups()).toHaveLength(0);
    expect((await b.visit('?via=BOB')).code).toBe('BOB');
  });

  it("takes the account's days from the click's answer (here 7) for the cookie's lifetime", async () => {
    const b = new Browser({ model: 'first_click', days: 7 });
    await b.visit('?via=ALICE');
    expect(maxAge(b.cookie()?.attributes)).toBe(7 * DAY);
    b.advanceDays(6);
    expect((await b.visit()).code).toBe('ALICE');
    b.advanceDays(1);
    expect((await b.visit()).code).toBeNull();
  });

  it('a first-click code stays when the click cannot be sent; a known last-click account still switches', async () => {
    const down = new Browser({ model: 'first_click', days: 60 }, true);
    expect((await down.visit('?via=ALICE')).code).toBe('ALICE');
    expect((await down.visit('?via=BOB')).code).toBe('ALICE');
    // The model learned from an earlier answer is kept in the cookie.
    const b = new Browser({ model: 'last_click', days: 30 });
    await b.visit('?via=ALICE');
    expect(b.cookie()?.state).toMatchObject({ c: 'ALICE', m: 'last_click', d: 30 });
    b.setAccount({ model: 'last_click', days: 30 });
    expect((await b.visit('?via=BOB')).code).toBe('BOB');
  });

  it('keeps the sub-id with its code, sends it with the click and the signup, and ignores a malformed one', async () => {
    const b = new Browser({ model: 'first_click', days: 60 });
    const page = await b.visit('?via=ALICE&sub=youtube');
    expect(page.sub).toBe('youtube');
    expect(b.clicks()[0]?.body).toMatchObject({ code: 'ALICE', sub: 'youtube' });
    // A first-click account keeps ALICE's sub too when BOB's link (with its own sub) is clicked.
    await b.visit('?via=BOB&sub=blog');
    expect(b.clicks()[1]?.body).toMatchObject({ code: 'BOB', sub: 'blog' });
    const later = await b.visit();
    expect(later.sub).toBe('youtube');
    await later.signup('user-1');
    expect(b.signups()[0]?.body).toEqual({ member_code: 'ALICE', user_identifier: 'user-1', sub: 'youtube' });

    const c = new Browser({ model: 'last_click', days: 60 });
    await c.visit('?via=ALICE&sub=Not%20A%20Slug');
    expect(c.clicks()[0]?.body.sub).toBeNull();
    expect((await c.visit()).sub).toBeNull();
  });

  it('never moves a signed-up referral: the referral id stays when a later click changes the code', async () => {
    const b = new Browser({ model: 'last_click', days: 60 });
    const page = await b.visit('?via=ALICE');
    const id = await page.signup('user-1');
    b.advanceDays(3);
    const after = await b.visit('?via=BOB');
    expect(after.code).toBe('BOB');
    expect(after.referralId).toBe(id);
    // The same user signing up again keeps the first id (the service refuses a second referral).
    await after.signup('user-1');
    expect((await b.visit()).referralId).toBe(id);
  });

  it('reads a cookie written before attribution existed (no window start) as starting now', async () => {
    const b = new Browser({ model: 'first_click', days: 60 });
    const old = encodeURIComponent(JSON.stringify({ c: 'ALICE', v: 'v1' }));
    // As the previous script wrote it: 30 days.
    const page0 = await b.visit();
    expect(page0.code).toBeNull();
    (b as unknown as { jar: Map<string, unknown> }).jar.set('refloop-ref', {
      value: old,
      expiresMs: b.clock + 30 * DAY * 1000,
      attributes: '',
    });
    expect((await b.visit('?via=BOB')).code).toBe('ALICE');
    expect(maxAge(b.cookie()?.attributes)).toBe(60 * DAY);
  });
});
