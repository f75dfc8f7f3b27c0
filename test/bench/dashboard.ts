// The dashboard's weight and speed (section `dashboard` of `npm run bench`, or alone:
// `npx tsx test/bench/dashboard.ts`, which rewrites only this section of BENCHMARKS.md):
// - the built JS and CSS (web/dist/assets), raw and gzipped;
// - the overview's first paint under npm start's stack, with 3,000 referrals (and their members) in the
//   account, in Debian's Chromium: First Contentful Paint, and the moment the KPI tiles show the API's
//   figures (the overview's meaningful paint: the tiles are what a person opens it for), from the
//   page's own performance timings; cold (first visit, empty cache) and warm (a reload, assets cached).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { freePort } from '../../infra/local/dynamodb';
import { startLocal, type LocalRuntime } from '../../infra/local/start';
import { issueLoginToken, membershipsOf } from '../../shared/store/team';
import { api } from './harness';
import { percentile } from './stats';

export interface DashboardSection {
  assets: { file: string; bytes: number; gzipBytes: number }[];
  jsGzip: number;
  cssGzip: number;
  referrals: number;
  seedSeconds: number;
  runs: number;
  cold: { fcp: number; kpis: number };
  warm: { fcp: number; kpis: number };
}

const ROOT = join(__dirname, '..', '..');
const DIST = join(ROOT, 'web', 'dist');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export function measureAssets(): Pick<DashboardSection, 'assets' | 'jsGzip' | 'cssGzip'> {
  const dir = join(DIST, 'assets');
  const assets = readdirSync(dir)
    .filter((f) => f.endsWith('.js') || f.endsWith('.css'))
    .map((file) => {
      const body = readFileSync(join(dir, file));
      return { file, bytes: body.length, gzipBytes: gzipSync(body, { level: 9 }).length };
    })
    .sort((a, b) => b.gzipBytes - a.gzipBytes);
  const sum = (ext: string) => assets.filter((a) => a.file.endsWith(ext)).reduce((n, a) => n + a.gzipBytes, 0);
  return { assets, jsGzip: sum('.js'), cssGzip: sum('.css') };
}

/** The harness's API call, refusing anything but a success (seeding must not half-work). */
async function call(rt: LocalRuntime, method: string, path: string, body?: unknown): Promise<any> {
  const res = await api(rt, method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** 3,000 referrals through the API (100 members, 30 each), 8 requests at a time. */
async function seed(rt: LocalRuntime, referrals: number): Promise<void> {
  const campaign = await call(rt, 'POST', '/v1/campaigns/', {
    name: 'bench dashboard',
    allows_commission: true,
    commission_amount: '2.00',
  });
  const members: string[] = [];
  for (let m = 0; m < 100; m++)
    members.push(
      (await call(rt, 'POST', '/v1/members/', { identifier: `dash-${m}`, email: `dash-${m}@example.com`, campaign: { id: campaign.id } }))
        .code,
    );
  let next = 0;
  const worker = async () => {
    while (next < referrals) {
      const i = next++;
      await call(rt, 'POST', '/v1/referrals/', { user_identifier: `dash-user-${i}`, member_code: members[i % members.length] });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

export async function measureDashboard(opts: { referrals: number; runs: number }): Promise<DashboardSection> {
  const assets = measureAssets();
  const dataDir = mkdtempSync(join(tmpdir(), 'refloop-bench-dashboard-'));
  process.env.API_RATE_LIMITS ??= 'starter=1000000,small=1000000,regular=1000000,unlimited=1000000';
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
    tableName: 'refloop-bench-dashboard',
  });
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
    const seedStart = performance.now();
    await seed(rt, opts.referrals);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    // A session for the demo owner, as the login link would open it.
    const member = (await membershipsOf(rt.demo.ownerEmail)).find((m) => m.accountId === rt.demo.accountId);
    if (!member) throw new Error('no demo owner');
    const cold: { fcp: number; kpis: number }[] = [];
    const warm: { fcp: number; kpis: number }[] = [];
    const timings = async (page: import('playwright-core').Page) => {
      await page.locator('[data-kpi="referrals"]').waitFor({ timeout: 30_000 });
      const kpis = await page.evaluate(() => performance.now());
      const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN);
      return { fcp, kpis };
    };
    for (let run = 0; run < opts.runs; run++) {
      const { token } = await issueLoginToken(member.accountId, member.operatorId);
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${rt.url}/app/login#token=${token}`);
      await page.locator('[data-kpi="referrals"]').waitFor({ timeout: 30_000 });
      const shown = await page.locator('[data-kpi="referrals"]').getAttribute('data-value');
      if (Number(shown) !== opts.referrals) throw new Error(`the overview shows ${shown} referrals, expected ${opts.referrals}`);
      // Cold: a new page in a fresh context (no cache) straight onto the overview with the session cookie.
      const fresh = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      await fresh.addCookies((await context.cookies()).filter((c) => c.name === 'refloop_session'));
      const coldPage = await fresh.newPage();
      await coldPage.goto(`${rt.url}/app/`);
      cold.push(await timings(coldPage));
      await coldPage.reload();
      warm.push(await timings(coldPage));
      await fresh.close();
      await context.close();
    }
    const med = (xs: { fcp: number; kpis: number }[]) => ({
      fcp: percentile(
        xs.map((x) => x.fcp),
        50,
      ),
      kpis: percentile(
        xs.map((x) => x.kpis),
        50,
      ),
    });
    return { ...assets, referrals: opts.referrals, seedSeconds, runs: opts.runs, cold: med(cold), warm: med(warm) };
  } finally {
    await browser.close();
    await rt.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const msText = (n: number) => `${Math.round(n)} ms`;

export const DASHBOARD_START = '<!-- dashboard section: test/bench/dashboard.ts -->';
export const DASHBOARD_END = '<!-- /dashboard section -->';

export function renderDashboardSection(x: DashboardSection, date = new Date().toISOString().slice(0, 10)): string[] {
  return [
    DASHBOARD_START,
    '## Dashboard: size and first paint',
    '',
    `Measured ${date} (test/bench/dashboard.ts). Budgets: at most 80 KB of gzipped JS and 15 KB of gzipped CSS for the whole dashboard; the overview's KPI tiles within 1.5 s of navigation on a cold cache under \`npm start\`.`,
    '',
    '| Asset (web/dist/assets) | Size | Gzipped |',
    '|---|---:|---:|',
    ...x.assets.map((a) => `| \`${a.file}\` | ${kb(a.bytes)} | ${kb(a.gzipBytes)} |`),
    `| **All JS** / **all CSS** | | **${kb(x.jsGzip)}** / **${kb(x.cssGzip)}** |`,
    '',
    `The overview with **${x.referrals.toLocaleString('en-US')} referrals** (100 members; seeded through the API in ${x.seedSeconds.toFixed(1)} s) under \`npm start\`'s stack, in Debian's Chromium, median of ${x.runs} runs, from the page's performance timings (ms after navigation start):`,
    '',
    "| | First Contentful Paint | KPI tiles with the API's figures |",
    '|---|---:|---:|',
    `| Cold (new browser context, nothing cached) | ${msText(x.cold.fcp)} | ${msText(x.cold.kpis)} |`,
    `| Warm (reload, assets cached) | ${msText(x.warm.fcp)} | ${msText(x.warm.kpis)} |`,
    '',
    'The KPI tiles wait for `GET /auth/sessions/current/` and then `GET /v1/reports/overview/` (one Query of the daily buckets: the referral count does not grow the work). The chart (uPlot) and the other sections load beside them.',
    DASHBOARD_END,
  ];
}

/** Replaces (or appends) the dashboard section of BENCHMARKS.md. */
export function writeDashboardSection(x: DashboardSection): void {
  const file = join(ROOT, 'BENCHMARKS.md');
  const text = readFileSync(file, 'utf8');
  const section = renderDashboardSection(x).join('\n');
  const start = text.indexOf(DASHBOARD_START);
  const end = text.indexOf(DASHBOARD_END);
  const next =
    start >= 0 && end > start
      ? text.slice(0, start) + section + text.slice(end + DASHBOARD_END.length)
      : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, next);
}

if (require.main === module) {
  measureDashboard({
    referrals: Number(process.env.BENCH_DASHBOARD_REFERRALS || 3000),
    runs: Number(process.env.BENCH_DASHBOARD_RUNS || 5),
  }).then(
    (x) => {
      writeDashboardSection(x);
      console.log(
        `dashboard: JS ${kb(x.jsGzip)} gzipped, CSS ${kb(x.cssGzip)}; cold FCP ${msText(x.cold.fcp)}, KPI tiles ${msText(x.cold.kpis)}; warm ${msText(x.warm.fcp)} / ${msText(x.warm.kpis)}`,
      );
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err instanceof Error ? err.stack : err);
      process.exit(1);
    },
  );
}
