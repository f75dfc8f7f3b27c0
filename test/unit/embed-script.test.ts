// The embed script's promises, checked without a browser: it is plain ES2017, it stays under 3 KB
// gzipped, and, run in a vm against a stub window and DOM, it frames the portal URL with the host's
// origin and theme in the fragment, trusts only messages from the portal's own frame, hands a new
// URL over by postMessage to the portal's origin alone, and reports a frame that never speaks (issue 23,
// item 9: refused by the account's embed origins, or unreachable) with a notice in its place.
import { parse } from 'acorn';
import { runInContext, createContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { REFLOOP_EMBED_SCRIPT } from '../../shared/js/embed';

const HOST = 'https://app.example.com';
const PORTAL = 'https://refloop.example.net';
const PORTAL_URL = `${PORTAL}/portal/acc_123/#token=rpl_abc`;

type Listener = (event: unknown) => void;
type Posted = { message: unknown; targetOrigin: string };

class FakeElement {
  nodeType = 1;
  attributes: Record<string, string> = {};
  style: Record<string, string> = {};
  children: FakeElement[] = [];
  parentNode: FakeElement | null = null;
  src = '';
  textContent = '';
  handlers: Record<string, (() => void)[]> = {};
  contentWindow: { postMessage: (message: unknown, targetOrigin: string) => void } | null = null;
  posted: Posted[] = [];
  constructor(public tagName: string) {
    if (tagName === 'iframe') {
      this.contentWindow = { postMessage: (message, targetOrigin) => this.posted.push({ message, targetOrigin }) };
    }
  }
  setAttribute(name: string, value: string) {
    this.attributes[name] = String(value);
  }
  appendChild(child: FakeElement) {
    child.parentNode = this;
    this.children.push(child);
    return child;
  }
  insertBefore(child: FakeElement, ref: FakeElement) {
    child.parentNode = this;
    this.children.splice(this.children.indexOf(ref), 0, child);
    return child;
  }
  addEventListener(type: string, fn: () => void) {
    (this.handlers[type] ??= []).push(fn);
  }
  fire(type: string) {
    for (const fn of this.handlers[type] ?? []) fn();
  }
  removeChild(child: FakeElement) {
    this.children = this.children.filter((c) => c !== child);
    child.parentNode = null;
    // A removed iframe's browsing context goes away.
    child.contentWindow = null;
    return child;
  }
}

function browser() {
  const listeners: Listener[] = [];
  const container = new FakeElement('div');
  // Timers run only when the test says so (`elapse`).
  let clockMs = 0;
  let nextTimer = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const elapse = (ms: number) => {
    clockMs += ms;
    for (const [id, t] of [...timers]) {
      if (t.at <= clockMs && timers.delete(id)) t.fn();
    }
  };
  const consoleErrors: string[] = [];
  const win: Record<string, unknown> = {
    setTimeout: (fn: () => void, ms: number) => {
      const id = nextTimer++;
      timers.set(id, { at: clockMs + ms, fn });
      return id;
    },
    clearTimeout: (id: number) => timers.delete(id),
    console: { error: (text: string) => consoleErrors.push(text) },
    location: { origin: HOST, href: `${HOST}/settings/referrals` },
    document: {
      createElement: (tag: string) => new FakeElement(tag),
      querySelector: (selector: string) => (selector === '#referrals' ? container : null),
    },
    addEventListener: (type: string, fn: Listener) => {
      if (type === 'message') listeners.push(fn);
    },
    removeEventListener: (type: string, fn: Listener) => {
      const at = listeners.indexOf(fn);
      if (type === 'message' && at >= 0) listeners.splice(at, 1);
    },
    URL,
  };
  win.window = win;
  const context = createContext(win);
  runInContext(REFLOOP_EMBED_SCRIPT, context);
  const Refloop = win.Refloop as {
    version: string;
    mount: (el: unknown, options: Record<string, unknown>) => { iframe: FakeElement; setUrl: (url: string) => void; unmount: () => void };
  };
  const dispatch = (event: { origin: string; source: unknown; data: unknown }) => {
    for (const fn of [...listeners]) fn(event);
  };
  return { win, context, container, listeners, Refloop, dispatch, elapse, timers, consoleErrors };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('/js/refloop-embed.js', () => {
  it('parses as an ES2017 script', () => {
    expect(() => parse(REFLOOP_EMBED_SCRIPT, { ecmaVersion: 2017, sourceType: 'script' })).not.toThrow();
  });

  it('is under 3 KB gzipped', () => {
    const size = gzipSync(Buffer.from(REFLOOP_EMBED_SCRIPT, 'utf8'), { level: 9 }).length;
    expect(size).toBeLessThan(3072);
  });

  it("never posts to '*' and never touches cookies or storage", () => {
    expect(REFLOOP_EMBED_SCRIPT).not.toMatch(/postMessage\([^)]*'\*'/);
    expect(REFLOOP_EMBED_SCRIPT).not.toMatch(/cookie|localStorage|sessionStorage/);
  });

  it('defines window.Refloop.mount, and leaves an existing Refloop alone', () => {
    const { win, context, Refloop } = browser();
    expect(Refloop.version).toBe('1');
    expect(typeof Refloop.mount).toBe('function');
    const mine = { version: '9', mount: () => null };
    win.Refloop = mine;
    runInContext(REFLOOP_EMBED_SCRIPT, context);
    expect(win.Refloop).toBe(mine);
  });

  it('frames the URL with the host origin and the given theme values appended to the fragment', () => {
    const { Refloop, container } = browser();
    const handle = Refloop.mount('#referrals', {
      url: PORTAL_URL,
      theme: { accent: '#4f46e5', radius: '8px', font: 'Inter, sans-serif' },
    });
    const iframe = handle.iframe;
    expect(container.children).toEqual([iframe]);
    expect(iframe.tagName).toBe('iframe');
    expect(iframe.src).toBe(
      `${PORTAL_URL}&origin=${encodeURIComponent(HOST)}&accent=%234f46e5&radius=8px&font=${encodeURIComponent('Inter, sans-serif')}`,
    );
    expect(iframe.attributes).toEqual({ title: 'Referral programme', allow: 'clipboard-write', referrerpolicy: 'no-referrer' });
    expect(iframe.style).toEqual({ width: '100%', border: '0', display: 'block', colorScheme: 'normal', height: '480px' });
  });

  it('takes an Element, a title and an initial height', () => {
    const { Refloop } = browser();
    const el = new FakeElement('section');
    const { iframe } = Refloop.mount(el, { url: PORTAL_URL, title: 'Invite friends', height: 300 });
    expect(el.children).toEqual([iframe]);
    expect(iframe.attributes.title).toBe('Invite friends');
    expect(iframe.style.height).toBe('300px');
    expect(iframe.src).toBe(`${PORTAL_URL}&origin=${encodeURIComponent(HOST)}`);
  });

  it('throws clear errors for a missing element or a URL without a token', () => {
    const { Refloop } = browser();
    expect(() => Refloop.mount('#nowhere', { url: PORTAL_URL })).toThrow('Refloop.mount: no element matches "#nowhere"');
    expect(() => Refloop.mount(null, { url: PORTAL_URL })).toThrow(/no element was given/);
    expect(() => Refloop.mount('#referrals', {})).toThrow(/#token=/);
    expect(() => Refloop.mount('#referrals', { url: `${PORTAL}/portal/acc_123/` })).toThrow(/#token=/);
  });

  it('ignores messages from another origin, another window or without the portal tag', () => {
    const { Refloop, dispatch } = browser();
    const onReady = jest.fn();
    const { iframe } = Refloop.mount('#referrals', { url: PORTAL_URL, onReady });
    const height = { source: 'refloop-portal', type: 'height', height: 900 };
    dispatch({ origin: 'https://evil.example', source: iframe.contentWindow, data: height });
    dispatch({ origin: PORTAL, source: { postMessage() {} }, data: height });
    dispatch({ origin: PORTAL, source: null, data: height });
    dispatch({ origin: PORTAL, source: iframe.contentWindow, data: { type: 'height', height: 900 } });
    dispatch({ origin: PORTAL, source: iframe.contentWindow, data: 'refloop-portal' });
    dispatch({ origin: 'https://evil.example', source: iframe.contentWindow, data: { source: 'refloop-portal', type: 'ready' } });
    expect(iframe.style.height).toBe('480px');
    expect(onReady).not.toHaveBeenCalled();
  });

  it('sets the height from the portal frame, rounded and clamped, ignoring non-finite values', () => {
    const { Refloop, dispatch } = browser();
    const { iframe } = Refloop.mount('#referrals', { url: PORTAL_URL });
    const send = (height: unknown) =>
      dispatch({ origin: PORTAL, source: iframe.contentWindow, data: { source: 'refloop-portal', type: 'height', height } });
    send(642.6);
    expect(iframe.style.height).toBe('643px');
    send(10);
    expect(iframe.style.height).toBe('120px');
    send(1e9);
    expect(iframe.style.height).toBe('20000px');
    send(NaN);
    send(Infinity);
    send('700');
    expect(iframe.style.height).toBe('20000px');
  });

  it('calls onReady and passes portal errors to onError', () => {
    const { Refloop, dispatch } = browser();
    const onReady = jest.fn();
    const onError = jest.fn();
    const { iframe } = Refloop.mount('#referrals', { url: PORTAL_URL, onReady, onError });
    dispatch({ origin: PORTAL, source: iframe.contentWindow, data: { source: 'refloop-portal', type: 'ready' } });
    dispatch({
      origin: PORTAL,
      source: iframe.contentWindow,
      data: { source: 'refloop-portal', type: 'error', code: 'forbidden', message: 'No.' },
    });
    expect(onReady).toHaveBeenCalledTimes(1);
    expect(onError).toHaveBeenCalledWith({ code: 'forbidden', message: 'No.' });
  });

  it.each([
    ['a string', (url: string) => url],
    ['a Promise of a string', (url: string) => Promise.resolve(url)],
  ])('on token-expired posts the URL onTokenExpired returns (%s) to the portal origin, without touching src', async (_, answer) => {
    const { Refloop, dispatch } = browser();
    const fresh = `${PORTAL}/portal/acc_123/#token=rpl_new`;
    const onTokenExpired = jest.fn(() => answer(fresh));
    const onError = jest.fn();
    const { iframe } = Refloop.mount('#referrals', { url: PORTAL_URL, onTokenExpired, onError });
    const src = iframe.src;
    dispatch({ origin: PORTAL, source: iframe.contentWindow, data: { source: 'refloop-portal', type: 'token-expired' } });
    await settle();
    expect(onTokenExpired).toHaveBeenCalledTimes(1);
    expect(iframe.posted).toEqual([{ message: { source: 'refloop-embed', type: 'url', url: fresh }, targetOrigin: PORTAL }]);
    expect(iframe.src).toBe(src);
    expect(onError).not.toHaveBeenCalled();
  });

  it('reports token_refresh_failed when onTokenExpired throws or rejects, and token_expired without it', async () => {
    const { Refloop, dispatch } = browser();
    const expired = { source: 'refloop-portal', type: 'token-expired' };

    const onError = jest.fn();
    const throwing = Refloop.mount('#referrals', {
      url: PORTAL_URL,
      onError,
      onTokenExpired: () => {
        throw new Error('backend down');
      },
    });
    dispatch({ origin: PORTAL, source: throwing.iframe.contentWindow, data: expired });
    await settle();
    expect(onError).toHaveBeenCalledWith({ code: 'token_refresh_failed', message: 'backend down' });
    throwing.unmount();

    const onError2 = jest.fn();
    const rejecting = Refloop.mount('#referrals', {
      url: PORTAL_URL,
      onError: onError2,
      onTokenExpired: () => Promise.reject(new Error('401')),
    });
    dispatch({ origin: PORTAL, source: rejecting.iframe.contentWindow, data: expired });
    await settle();
    expect(onError2).toHaveBeenCalledWith({ code: 'token_refresh_failed', message: '401' });
    expect(rejecting.iframe.posted).toEqual([]);
    rejecting.unmount();

    const onError3 = jest.fn();
    const without = Refloop.mount('#referrals', { url: PORTAL_URL, onError: onError3 });
    dispatch({ origin: PORTAL, source: without.iframe.contentWindow, data: expired });
    expect(onError3).toHaveBeenCalledWith({
      code: 'token_expired',
      message: 'The portal session expired; pass onTokenExpired to hand over a new URL.',
    });
  });

  it('posts nothing when onTokenExpired returns nothing', async () => {
    const { Refloop, dispatch } = browser();
    const onError = jest.fn();
    const { iframe } = Refloop.mount('#referrals', { url: PORTAL_URL, onError, onTokenExpired: () => undefined });
    dispatch({ origin: PORTAL, source: iframe.contentWindow, data: { source: 'refloop-portal', type: 'token-expired' } });
    await settle();
    expect(iframe.posted).toEqual([]);
    expect(onError).not.toHaveBeenCalled();
  });

  it('setUrl throws for another origin and posts a same-origin URL to the portal origin only', () => {
    const { Refloop } = browser();
    const handle = Refloop.mount('#referrals', { url: PORTAL_URL });
    expect(() => handle.setUrl('https://evil.example/portal/acc_123/#token=rpl_x')).toThrow(/portal origin/);
    expect(() => handle.setUrl('http://refloop.example.net/portal/acc_123/#token=rpl_x')).toThrow(/portal origin/);
    expect(handle.iframe.posted).toEqual([]);
    const fresh = `${PORTAL}/portal/acc_123/#token=rpl_next`;
    handle.setUrl(fresh);
    expect(handle.iframe.posted).toEqual([{ message: { source: 'refloop-embed', type: 'url', url: fresh }, targetOrigin: PORTAL }]);
    expect(handle.iframe.src).toBe(`${PORTAL_URL}&origin=${encodeURIComponent(HOST)}`);
  });

  it('unmount removes the listener, the iframe and the ready timer', () => {
    const { Refloop, container, listeners, timers } = browser();
    const handle = Refloop.mount('#referrals', { url: PORTAL_URL });
    expect(listeners).toHaveLength(1);
    expect(timers.size).toBe(1);
    handle.unmount();
    expect(listeners).toHaveLength(0);
    expect(timers.size).toBe(0);
    expect(container.children).toEqual([]);
  });

  describe('a frame that never speaks', () => {
    const height = { source: 'refloop-portal', type: 'height', height: 700 };

    it('loaded but silent for 15 s (the browser refused to frame it): onError names this site and the embed origins, a notice replaces the frame', () => {
      const { Refloop, container, elapse } = browser();
      const onError = jest.fn();
      const { iframe } = Refloop.mount('#referrals', { url: PORTAL_URL, onError });
      iframe.fire('load'); // Chromium's error page for a refused frame-ancestors loads too
      elapse(14_999);
      expect(onError).not.toHaveBeenCalled();
      elapse(1);
      expect(onError).toHaveBeenCalledTimes(1);
      const [{ code, message }] = onError.mock.calls[0] as [{ code: string; message: string }];
      expect(code).toBe('portal_refused');
      expect(message).toContain(`this site (${HOST}) is not in the account's embed origins`);
      expect(message).toContain('Settings > Embed origins');
      expect(iframe.style.display).toBe('none');
      const [notice] = container.children;
      expect(container.children).toEqual([notice, iframe]);
      expect(notice).toMatchObject({
        tagName: 'p',
        attributes: { role: 'alert' },
        textContent: 'The referral programme cannot be shown here right now.',
      });
      elapse(60_000);
      expect(onError).toHaveBeenCalledTimes(1);
    });

    it('nothing loaded at all: portal_unreachable names the portal origin; readyTimeout sets the wait', () => {
      const { Refloop, elapse } = browser();
      const onError = jest.fn();
      Refloop.mount('#referrals', { url: PORTAL_URL, onError, readyTimeout: 4000 });
      elapse(4000);
      expect(onError).toHaveBeenCalledWith({
        code: 'portal_unreachable',
        message: `The referral portal at ${PORTAL} did not load within 4 s. Check that this browser can reach it.`,
      });
    });

    it('any message of the portal in time means it runs: no error, no notice', () => {
      const { Refloop, container, dispatch, elapse, timers } = browser();
      const onError = jest.fn();
      const { iframe } = Refloop.mount('#referrals', { url: PORTAL_URL, onError });
      iframe.fire('load');
      elapse(3000);
      dispatch({ origin: PORTAL, source: iframe.contentWindow, data: height });
      expect(timers.size).toBe(0);
      elapse(60_000);
      expect(onError).not.toHaveBeenCalled();
      expect(container.children).toEqual([iframe]);
    });

    it('a message from elsewhere does not count; a portal that speaks late after all takes the notice away', () => {
      const { Refloop, container, dispatch, elapse } = browser();
      const onError = jest.fn();
      const { iframe } = Refloop.mount('#referrals', { url: PORTAL_URL, onError });
      iframe.fire('load');
      dispatch({ origin: 'https://evil.example', source: iframe.contentWindow, data: height });
      elapse(15_000);
      expect(onError).toHaveBeenCalledTimes(1);
      dispatch({ origin: PORTAL, source: iframe.contentWindow, data: height });
      expect(container.children).toEqual([iframe]);
      expect(iframe.style.display).toBe('block');
      expect(iframe.style.height).toBe('700px');
    });

    it('without onError the message goes to console.error; readyTimeout 0 never reports', () => {
      const quiet = browser();
      quiet.Refloop.mount('#referrals', { url: PORTAL_URL }).iframe.fire('load');
      quiet.elapse(15_000);
      expect(quiet.consoleErrors).toEqual([
        expect.stringMatching(/^Refloop: The referral portal did not start within 15 s\. Most likely this site/),
      ]);

      const never = browser();
      const onError = jest.fn();
      never.Refloop.mount('#referrals', { url: PORTAL_URL, onError, readyTimeout: 0 });
      expect(never.timers.size).toBe(0);
      never.elapse(600_000);
      expect(onError).not.toHaveBeenCalled();
    });
  });
});
