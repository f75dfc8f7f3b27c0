// The member portal's weight and speed (section `portal` of `npm run bench`, or alone:
// `npx tsx test/bench/portal.ts`, which rewrites only this section of BENCHMARKS.md):
// - the widget script a host page loads (/js/refloop-embed.js, REFLOOP_EMBED_SCRIPT), raw and gzipped at
//   level 9 as shared/js/serve.ts serves it; and the portal page's own JS and CSS, the assets the built
//   web/dist/portal.html references (its module script, modulepreloads and stylesheets under /app/assets/);
// - the portal's first paint under npm start's stack, for a member with 200 referrals, in Debian's Chromium,
//   each load from a fresh single-use portal URL (POST /v1/members/{id}/portal-sessions/): standalone (the
//   member opens the link) and framed (a host page on another loopback origin, allowed in the account's
//   embed_origins, loads /js/refloop-embed.js and calls Refloop.mount with the URL); cold (a new browser
//   context) and warm (a second page in the same context, assets cached). Timings are the page's own: First
//   Contentful Paint from its paint entries, and the moments the greeting is laid out and no "Loading" is
//   left in the page (the referrals list and the other sections answered), recorded in the page by an init
//   script. Framed, every figure is counted from the host page's navigation start.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { freePort } from '../../infra/local/dynamodb';
import { startLocal, type LocalRuntime } from '../../infra/local/start';
import { REFLOOP_EMBED_SCRIPT } from '../../shared/js/embed';
import { DASHBOARD_END } from './dashboard';
import { api } from './harness';
import { describeMachine, type Machine } from './machine';
import { percentile } from './stats';

export interface PortalTimings {
  /** First Contentful Paint of the portal document. */
  fcp: number;
  /** The greeting (`[data-testid="portal-greeting"]`) laid out with a size. */
  greeting: number;
  /** No "Loading" text left: the referrals, rewards, payouts and the chart have answered. */
  loaded: number;
}

export interface FramedTimings extends PortalTimings {
  /** When the frame's own navigation started, after the host page's. */
  frameStart: number;
}

export interface PortalSection {
  embed: { bytes: number; gzipBytes: number };
  assets: { file: string; via: string; bytes: number; gzipBytes: number }[];
  jsGzip: number;
  cssGzip: number;
  referrals: number;
  seedSeconds: number;
  runs: number;
  standalone: { cold: PortalTimings; warm: PortalTimings };
  framed: { cold: FramedTimings; warm: FramedTimings };
  /** Every run's figures, in order (medians above). */
  samples: { standaloneCold: PortalTimings[]; standaloneWarm: PortalTimings[]; framedCold: FramedTimings[]; framedWarm: FramedTimings[] };
  machine: Machine;
  loadAtEnd: number;
}

const ROOT = join(__dirname, '..', '..');
const DIST = join(ROOT, 'web', 'dist');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const gzipSize = (body: Buffer) => gzipSync(body, { level: 9 }).length;

/** The widget script as served, and the assets portal.html loads (read from the built html). */
export function measurePortalAssets(): Pick<PortalSection, 'embed' | 'assets' | 'jsGzip' | 'cssGzip'> {
  const script = Buffer.from(REFLOOP_EMBED_SCRIPT, 'utf8');
  const html = readFileSync(join(DIST, 'portal.html'), 'utf8');
  const found = new Map<string, string>();
  for (const tag of html.match(/<(script|link)\b[^>]*>/g) ?? []) {
    const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1] ?? null;
    const via = tag.startsWith('<script') ? 'script' : attr('rel');
    const href = tag.startsWith('<script') ? attr('src') : attr('href');
    if (!href?.startsWith('/app/assets/') || (via !== 'script' && via !== 'modulepreload' && via !== 'stylesheet')) continue;
    if (!found.has(href)) found.set(href, via);
  }
  if (found.size === 0) throw new Error('web/dist/portal.html references no asset under /app/assets/');
  const assets = [...found].map(([href, via]) => {
    const file = href.slice('/app/assets/'.length);
    const body = readFileSync(join(DIST, 'assets', file));
    return { file, via, bytes: body.length, gzipBytes: gzipSize(body) };
  });
  const sum = (ext: string) => assets.filter((a) => a.file.endsWith(ext)).reduce((n, a) => n + a.gzipBytes, 0);
  return { embed: { bytes: script.length, gzipBytes: gzipSize(script) }, assets, jsGzip: sum('.js'), cssGzip: sum('.css') };
}

/** The harness's API call, refusing anything but a success (seeding must not half-work). */
async function call(rt: LocalRuntime, method: string, path: string, body?: unknown): Promise<any> {
  const res = await api(rt, method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** One member (Alice) with `referrals` referrals through the API, 8 requests at a time. */
async function seed(rt: LocalRuntime, referrals: number): Promise<{ id: string }> {
  const campaign = await call(rt, 'POST', '/v1/campaigns/', {
    name: 'bench portal',
    allows_commission: true,
    commission_type: 'percentage',
    commission_percent: '20.00',
    commission_months: 12,
  });
  const member = await call(rt, 'POST', '/v1/members/', {
    identifier: 'portal-alice',
    email: 'alice@example.com',
    first_name: 'Alice',
    campaign: { id: campaign.id },
  });
  let next = 0;
  const worker = async () => {
    while (next < referrals) {
      const i = next++;
      await call(rt, 'POST', '/v1/referrals/', { user_identifier: `portal-user-${i}@example.com`, member_code: member.code });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return member;
}

interface Host {
  url: string;
  server: Server;
  /** The portal URL the next page load mounts (issued by the bench before it navigates). */
  next: string;
}

/** A host app on its own loopback origin: its page loads the widget script and mounts the portal URL. */
async function startHost(rt: LocalRuntime): Promise<Host> {
  const host: Host = { url: '', server: createServer(), next: '' };
  host.server.on('request', (_req, res) => {
    const url = JSON.stringify(host.next).replace(/</g, '\\u003c');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<main><h1>Your account</h1><div id="referrals"></div></main>
<script src="${rt.url}/js/refloop-embed.js"></script>
<script>Refloop.mount('#referrals', { url: ${url} });</script>
</body></html>`);
  });
  await new Promise<void>((ok) => host.server.listen(0, '127.0.0.1', ok));
  host.url = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
  return host;
}

// Runs in every document of the context (the portal's frame included) before its own scripts; in the
// portal only, it records when the greeting is first laid out and when no "Loading" text is left.
const MARKS_SCRIPT = `(() => {
  if (location.pathname.indexOf('/portal/') !== 0) return;
  const marks = { greeting: null, loaded: null };
  window.__portalMarks = marks;
  const check = () => {
    if (marks.greeting === null) {
      const el = document.querySelector('[data-testid="portal-greeting"]');
      if (!el) return;
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) return;
      marks.greeting = performance.now();
    }
    if (marks.loaded === null && document.body && !/Loading/.test(document.body.textContent || '')) {
      marks.loaded = performance.now();
      observer.disconnect();
    }
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { childList: true, subtree: true, characterData: true });
})();`;

/** The page's global with the init script's marks. */
type Marked = { __portalMarks?: { greeting: number | null; loaded: number | null } };

interface DocTimings extends PortalTimings {
  timeOrigin: number;
}

/** The portal document's own timings (ms after its navigation start), once everything has loaded. */
async function portalTimings(target: Page | Frame, referrals: number): Promise<DocTimings> {
  await target.locator('[data-testid="portal-greeting"]').waitFor({ timeout: 30_000 });
  // Functions, not strings: the portal's CSP has no 'unsafe-eval', and a string predicate is eval'd in the page.
  await target.waitForFunction(() => ((globalThis as unknown as Marked).__portalMarks?.loaded ?? null) !== null, undefined, {
    timeout: 30_000,
  });
  const shown = await target.locator('#referrals .section-count').innerText();
  if (!shown.includes(referrals.toLocaleString('en-US'))) throw new Error(`the portal's referrals say "${shown}", expected ${referrals}`);
  // The portal's error notices (the settings form keeps an empty role="alert" slot of its own).
  const notice = target.locator('.notice-error');
  if ((await notice.count()) > 0) throw new Error(`the portal shows an error: ${await notice.first().innerText()}`);
  return target.evaluate(() => {
    const g = globalThis as unknown as Marked;
    const timeline = performance as unknown as { getEntriesByType(type: string): { name: string; startTime: number }[] };
    const paint = timeline.getEntriesByType('paint').find((e) => e.name === 'first-contentful-paint');
    return {
      timeOrigin: performance.timeOrigin,
      fcp: paint ? paint.startTime : Number.NaN,
      greeting: g.__portalMarks?.greeting ?? Number.NaN,
      loaded: g.__portalMarks?.loaded ?? Number.NaN,
    };
  });
}

/** The portal opened by the member: a page of `context` straight onto a fresh link. */
async function standaloneLoad(context: BrowserContext, url: string, referrals: number): Promise<PortalTimings> {
  const page = await context.newPage();
  try {
    await page.goto(url);
    const { fcp, greeting, loaded } = await portalTimings(page, referrals);
    return { fcp, greeting, loaded };
  } finally {
    await page.close();
  }
}

/** The portal framed by the host page; the frame's timings moved onto the host page's clock. */
async function framedLoad(context: BrowserContext, host: Host, portalPrefix: string, referrals: number): Promise<FramedTimings> {
  const page = await context.newPage();
  try {
    await page.goto(host.url);
    const deadline = Date.now() + 30_000;
    let frame: Frame | undefined;
    while (!(frame = page.frames().find((f) => f.url().startsWith(portalPrefix)))) {
      if (Date.now() > deadline) throw new Error('the host page never framed the portal');
      await page.waitForTimeout(10);
    }
    const inner = await portalTimings(frame, referrals);
    const hostOrigin = await page.evaluate(() => performance.timeOrigin);
    const shift = inner.timeOrigin - hostOrigin;
    return { frameStart: shift, fcp: inner.fcp + shift, greeting: inner.greeting + shift, loaded: inner.loaded + shift };
  } finally {
    await page.close();
  }
}

export async function measurePortal(opts: { referrals: number; runs: number }): Promise<PortalSection> {
  const machine = describeMachine();
  const dataDir = mkdtempSync(join(tmpdir(), 'refloop-bench-portal-'));
  process.env.API_RATE_LIMITS ??= 'starter=1000000,small=1000000,regular=1000000,unlimited=1000000';
  // startLocal builds web/ first when its sources changed: the assets are measured after it.
  const rt = await startLocal({
    port: 0,
    dynamodbPort: await freePort(),
    sqsPort: 0,
    paddlePort: 0,
    paddleBillingPort: 0,
    stripePort: 0,
    paypalPort: 0,
    wisePort: 0,
    dataDir,
    tableName: 'refloop-bench-portal',
  });
  const host = await startHost(rt);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const assets = measurePortalAssets();
    await call(rt, 'PATCH', '/v1/account/', { embed_origins: [host.url], referral_url: 'https://acme.example/' });
    const seedStart = performance.now();
    const member = await seed(rt, opts.referrals);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const portalUrl = async () => (await call(rt, 'POST', `/v1/members/${member.id}/portal-sessions/`, {})).url as string;
    const portalPrefix = `${rt.url}/portal/`;
    const newContext = async () => {
      const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
      await context.addInitScript({ content: MARKS_SCRIPT });
      return context;
    };
    const samples: PortalSection['samples'] = { standaloneCold: [], standaloneWarm: [], framedCold: [], framedWarm: [] };
    for (let run = 0; run < opts.runs; run++) {
      // Standalone: a new context (nothing cached), then a second page in it, each on a fresh link.
      const context = await newContext();
      samples.standaloneCold.push(await standaloneLoad(context, await portalUrl(), opts.referrals));
      samples.standaloneWarm.push(await standaloneLoad(context, await portalUrl(), opts.referrals));
      await context.close();
      // Framed by the host page, the same way.
      const framedContext = await newContext();
      host.next = await portalUrl();
      samples.framedCold.push(await framedLoad(framedContext, host, portalPrefix, opts.referrals));
      host.next = await portalUrl();
      samples.framedWarm.push(await framedLoad(framedContext, host, portalPrefix, opts.referrals));
      await framedContext.close();
    }
    const median = (xs: number[]) => percentile(xs, 50);
    const med = (xs: PortalTimings[]): PortalTimings => ({
      fcp: median(xs.map((x) => x.fcp)),
      greeting: median(xs.map((x) => x.greeting)),
      loaded: median(xs.map((x) => x.loaded)),
    });
    const medFramed = (xs: FramedTimings[]): FramedTimings => ({ ...med(xs), frameStart: median(xs.map((x) => x.frameStart)) });
    return {
      ...assets,
      referrals: opts.referrals,
      seedSeconds,
      runs: opts.runs,
      standalone: { cold: med(samples.standaloneCold), warm: med(samples.standaloneWarm) },
      framed: { cold: medFramed(samples.framedCold), warm: medFramed(samples.framedWarm) },
      samples,
      machine,
      loadAtEnd: loadavg()[0] ?? 0,
    };
  } finally {
    await browser.close();
    await new Promise((ok) => host.server.close(ok));
    await rt.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const msText = (n: number) => `${Math.round(n)} ms`;

export const PORTAL_START = '<!-- portal section: test/bench/portal.ts -->';
export const PORTAL_END = '<!-- /portal section -->';

export function renderPortalSection(x: PortalSection, date = x.machine.date.slice(0, 10)): string[] {
  const m = x.machine;
  const later = (d: number) => `${msText(Math.abs(d))} ${d >= 0 ? 'later' : 'earlier'}`;
  const shared = m.loadAtStart > m.cores * 0.25 || x.loadAtEnd > m.cores * 0.25;
  const row = (label: string, t: PortalTimings) => `| ${label} | ${msText(t.fcp)} | ${msText(t.greeting)} | ${msText(t.loaded)} |`;
  return [
    PORTAL_START,
    '## Member portal: size and first paint',
    '',
    `Measured ${date} (test/bench/portal.ts) on ${m.cores} cores (${m.cpuModel}), ${m.node}, load average ${m.loadAtStart.toFixed(2)} at start / ${x.loadAtEnd.toFixed(2)} at end. Budget: the widget script under 3 KB gzipped (test/unit/embed-script.test.ts).`,
    '',
    '| Asset | Loaded by | Size | Gzipped |',
    '|---|---|---:|---:|',
    `| \`/js/refloop-embed.js\` (\`REFLOOP_EMBED_SCRIPT\`, gzip level 9 as served) | the host page | ${kb(x.embed.bytes)} | **${kb(x.embed.gzipBytes)}** |`,
    ...x.assets.map(
      (a) =>
        `| \`${a.file}\` (web/dist/assets) | portal.html (${a.via === 'script' ? 'module script' : a.via}) | ${kb(a.bytes)} | ${kb(a.gzipBytes)} |`,
    ),
    `| **Portal page JS** / **CSS** | | | **${kb(x.jsGzip)}** / **${kb(x.cssGzip)}** |`,
    '',
    `The portal of a member with **${x.referrals.toLocaleString('en-US')} referrals** (seeded through the API in ${x.seedSeconds.toFixed(1)} s) under \`npm start\`'s stack, in Debian's Chromium, each load from a fresh single-use portal URL, median of ${x.runs} runs, from the documents' own performance timings (ms after navigation start; framed, after the host page's navigation start). Framed: a host page on another loopback origin, allowed in the account's \`embed_origins\`, loads \`/js/refloop-embed.js\` and calls \`Refloop.mount('#referrals', { url })\`.`,
    '',
    '| | First Contentful Paint (of the portal) | Greeting visible | Lists loaded (no "Loading" left) |',
    '|---|---:|---:|---:|',
    row('Standalone, cold (new browser context, nothing cached)', x.standalone.cold),
    row('Standalone, warm (same context, second load)', x.standalone.warm),
    row('Framed, cold (new browser context)', x.framed.cold),
    row('Framed, warm (same context, second load)', x.framed.warm),
    '',
    `The greeting waits for the portal page (no-store), its JS and CSS, then \`POST /portal/v1/sessions/\` (the link's token traded for a session) and \`GET /portal/v1/me/\`; the referrals (a first page of 20 and the member's counter, whatever the ${x.referrals.toLocaleString('en-US')}), rewards, payouts and the chart's stats are requested together after it, which is the gap to the last column. ` +
      `Framed, the portal's own navigation starts ${msText(x.framed.cold.frameStart)} (cold) / ${msText(x.framed.warm.frameStart)} (warm) after the host page's: the host page, then the widget script (a blocking \`<script src>\` here), then \`Refloop.mount\`; the greeting shows ${later(x.framed.cold.greeting - x.standalone.cold.greeting)} than standalone on a cold cache and ${later(x.framed.warm.greeting - x.standalone.warm.greeting)} warm.` +
      (shared
        ? ` Other jobs shared the ${m.cores} cores (see the load average), so runs vary by 50 to 100 ms or more; compare figures of one run rather than across runs.`
        : ''),
    PORTAL_END,
  ];
}

/** Replaces (or adds, after the dashboard's section when there is one) the portal section of BENCHMARKS.md. */
export function writePortalSection(x: PortalSection): void {
  const file = join(ROOT, 'BENCHMARKS.md');
  const text = readFileSync(file, 'utf8');
  const section = renderPortalSection(x).join('\n');
  const start = text.indexOf(PORTAL_START);
  const end = text.indexOf(PORTAL_END);
  const after = text.indexOf(DASHBOARD_END);
  const next =
    start >= 0 && end > start
      ? text.slice(0, start) + section + text.slice(end + PORTAL_END.length)
      : after >= 0
        ? `${text.slice(0, after + DASHBOARD_END.length)}\n\n${section}${text.slice(after + DASHBOARD_END.length)}`
        : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, next);
}

export function describePortal(x: PortalSection): string {
  return (
    `portal: widget script ${kb(x.embed.bytes)} (${kb(x.embed.gzipBytes)} gzipped), page JS ${kb(x.jsGzip)} + CSS ${kb(x.cssGzip)} gzipped; ` +
    `${x.referrals} referrals: standalone cold FCP ${msText(x.standalone.cold.fcp)}, greeting ${msText(x.standalone.cold.greeting)}, lists ${msText(x.standalone.cold.loaded)}; ` +
    `warm ${msText(x.standalone.warm.fcp)} / ${msText(x.standalone.warm.greeting)} / ${msText(x.standalone.warm.loaded)}; ` +
    `framed cold ${msText(x.framed.cold.fcp)} / ${msText(x.framed.cold.greeting)} / ${msText(x.framed.cold.loaded)}, warm ${msText(x.framed.warm.fcp)} / ${msText(x.framed.warm.greeting)} / ${msText(x.framed.warm.loaded)}`
  );
}

if (require.main === module) {
  measurePortal({ referrals: Number(process.env.BENCH_PORTAL_REFERRALS || 200), runs: Number(process.env.BENCH_PORTAL_RUNS || 5) }).then(
    (x) => {
      writePortalSection(x);
      console.log(renderPortalSection(x).join('\n'));
      console.log(describePortal(x));
      const runs = (name: string, xs: (PortalTimings & { frameStart?: number })[]) =>
        console.log(
          `${name}: ${xs.map((t) => `${t.frameStart === undefined ? '' : `frame@${msText(t.frameStart)} `}${msText(t.fcp)}/${msText(t.greeting)}/${msText(t.loaded)}`).join(', ')}`,
        );
      runs('standalone cold', x.samples.standaloneCold);
      runs('standalone warm', x.samples.standaloneWarm);
      runs('framed cold', x.samples.framedCold);
      runs('framed warm', x.samples.framedWarm);
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err instanceof Error ? err.stack : err);
      process.exit(1);
    },
  );
}
