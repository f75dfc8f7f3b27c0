// The provider emulators are development tools (infra/local/emulators/README.md): no production bundle
// carries them. From every Lambda entry (the `entry` of each line of functions/routes.ts and
// functions/workers.ts), every other file under functions/ and every file under shared/, the imports are
// followed through the repository's files (static imports, re-exports, `import type`, and `import()` or
// `require()` with a literal specifier, which a bundler follows too); none may reach infra/local/ (the
// emulators and the rest of `npm start`'s runtime). A failure prints the chain of imports that got there.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { routes } from '../../functions/routes';
import { scheduledJobs, workers } from '../../functions/workers';
import { PROVIDER_DEFINITIONS } from '../../shared/billing/registry';
import { ROOT, sourceFiles as filesUnder, specifiers as specifiersIn } from '../support/source-files';

const specifiers = (path: string) => specifiersIn(path, readFileSync(join(ROOT, path), 'utf8'));

const FORBIDDEN = 'infra/local/';

/** The repository file a relative specifier names (packages and unresolvable names: null). */
function resolve(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`, base.replace(/\.js$/, '.ts')];
  return candidates.find((c) => /\.tsx?$/.test(c) && existsSync(join(ROOT, c)) && statSync(join(ROOT, c)).isFile()) ?? null;
}

/**
 * Every repository file reachable from `starts`, each with the file that first imported it (breadth
 * first, so the chain back to a start is a shortest one).
 */
function reachable(starts: string[]): Map<string, string | null> {
  const parent = new Map<string, string | null>(starts.map((s) => [s, null]));
  const queue = [...starts];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    for (const specifier of specifiers(file)) {
      const to = resolve(file, specifier);
      if (to && !parent.has(to)) {
        parent.set(to, file);
        queue.push(to);
      }
    }
  }
  return parent;
}

function chain(parent: Map<string, string | null>, file: string): string {
  const steps = [file];
  for (let at = parent.get(file); at; at = parent.get(at)) steps.unshift(at);
  return steps.join(' -> ');
}

const lambdaEntries = [...new Set([...routes, ...workers, ...scheduledJobs].map((r) => r.entry))].sort();

describe('the emulators stay out of production code', () => {
  it('every Lambda entry of the route and worker tables is a file this test walks from', () => {
    expect(lambdaEntries.length).toBeGreaterThan(20);
    for (const entry of lambdaEntries) expect({ entry, exists: existsSync(join(ROOT, entry)) }).toEqual({ entry, exists: true });
  });

  it('no Lambda entry, functions/ file or shared/ file reaches infra/local/ through its imports', () => {
    const starts = [...new Set([...lambdaEntries, ...filesUnder('functions'), ...filesUnder('shared')])];
    const parent = reachable(starts);
    const offending = [...parent.keys()].filter((file) => file.startsWith(FORBIDDEN)).map((file) => chain(parent, file));
    expect(offending).toEqual([]);
  });

  it('the walk follows folder imports, index files and re-exports (the tests reach every emulator ledger)', () => {
    const parent = reachable(['test/support/provider-harness.ts']);
    for (const definition of PROVIDER_DEFINITIONS.filter((d) => d.emulator !== null)) {
      const ledger = `infra/local/emulators/${definition.emulator?.folder}/ledger.ts`;
      expect({ ledger, reached: parent.has(ledger) }).toEqual({ ledger, reached: true });
    }
  });

  it('no emulator is left beside the production adapters', () => {
    const stray = filesUnder('shared').filter((file) => /(^|\/)emulators?(\/|\.ts$|-)/.test(file));
    expect(stray).toEqual([]);
  });
});
