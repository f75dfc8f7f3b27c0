// Headless Chromium for the e2e suites: Debian's chromium (CHROMIUM_PATH for another) through
// playwright-core, never a downloaded browser; and axe-core run on a page or a frame as it stands.
import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium with the flags every suite uses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
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
