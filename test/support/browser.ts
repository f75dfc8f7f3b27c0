// Headless Chromium for the e2e suites: Debian's chromium (CHROMIUM_PATH for another) through
// playwright-core, never a downloaded browser; and axe-core run on a page or a frame as it stands.
//
// One Chromium serves the whole Jest run: the integration project's global setup starts it as a Playwright
// browser server (./global-setup.ts) and names its endpoint in REFLOOP_TEST_BROWSER_WS, and each suite
// connects to it. A suite's `browser.close()` then closes the contexts it made and disconnects; the browser
// itself stops in the global teardown. Launching a Chromium took about 2.4 CPU-s; a context in a running one
// about 0.8 (13 suites launched one each). Without the variable (a suite run by other means) a suite launches
// its own, as before.
import { readFileSync } from 'node:fs';
import { chromium, type Browser, type BrowserServer, type Frame, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The environment variable that carries the run's shared browser endpoint to the Jest workers. */
export const SHARED_BROWSER_ENV = 'REFLOOP_TEST_BROWSER_WS';

/**
 * A headless Chromium with the flags every suite uses: the run's shared one when there is one (see the top
 * of this file), else one of its own. Either way, `close()` when done.
 */
export function launchChromium(): Promise<Browser> {
  const shared = process.env[SHARED_BROWSER_ENV];
  if (shared) return chromium.connect(shared, { timeout: 60_000 });
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** The run's shared Chromium, as a browser server the workers connect to (test/support/global-setup.ts). */
export function launchSharedChromium(): Promise<BrowserServer> {
  return chromium.launchServer({ executablePath: CHROMIUM, args: ARGS });
}

let axeSource: string | undefined;

/** axe-core on the page (or frame) as it stands: no serious or critical violation. */
export async function expectNoAxeViolations(target: Page | Frame, name: string): Promise<void> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await target.evaluate(axeSource);
  const violations = await target.evaluate(async () => {
    const g = globalThis as unknown as {
      document: unknown;
      axe: {
        run(
          ctx: unknown,
          opts: unknown,
        ): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }>;
      };
    };
    const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  expect({ page: name, violations }).toEqual({ page: name, violations: [] });
}

/**
 * The portal has finished loading its sections: no "Loading…" text left on the page. Each list and the chart
 * load after the page itself, and the height they take when they arrive moves everything below them; a click
 * on the payout settings while that happens can land beside the control it aimed at.
 */
export async function portalSettled(target: Page | Frame): Promise<void> {
  await target.waitForFunction(
    () => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText.match(/Loading/) === null,
    undefined,
    { timeout: 15_000 },
  );
}
