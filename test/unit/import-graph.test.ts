// The shape rule of ../shared/design/STRUCTURE-NEXT.md: the provider-agnostic layers (flows, domain, store,
// queue, http) import no payment provider; only shared/providers/<kind>/ knows a provider's wire format.
//
// The flows reach a provider only through the port (shared/billing/port.ts) and the registry
// (shared/billing/registry.ts) that maps an account to its adapter. (This was a ratchet of known leaks
// while the flows moved onto the port; the list is empty now, and must stay so.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
// shared/billing/registry.ts is the one place that maps an account to its adapter, so it is not listed.
const AGNOSTIC = ['shared/flows', 'shared/domain', 'shared/store', 'shared/queue', 'shared/http', 'shared/billing/port.ts'];


function tsFiles(dir: string): string[] {
  if (dir.endsWith('.ts')) return [dir];
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Every `<file> -> <module>` edge from an agnostic layer into shared/providers/. */
export function providerImports(files: { path: string; source: string }[]): string[] {
  const edges: string[] = [];
  const specifier = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;
  for (const { path, source } of files) {
    for (const match of source.matchAll(specifier)) {
      const target = normalize(join(dirname(path), match[1] as string)).split('\\').join('/');
      if (target.startsWith('shared/providers/')) edges.push(`${path} -> ${target}`);
    }
  }
  return edges.sort();
}

describe('import graph', () => {
  const files = AGNOSTIC.flatMap(tsFiles).map((path) => ({ path: relative('.', path), source: readFileSync(join(ROOT, path), 'utf8') }));

  it('finds a provider import (the check itself works)', () => {
    expect(providerImports([{ path: 'shared/flows/x.ts', source: "import { a } from '../providers/stripe/client';" }])).toEqual(['shared/flows/x.ts -> shared/providers/stripe/client']);
    expect(providerImports([{ path: 'shared/flows/x.ts', source: "import { a } from '../billing/port';" }])).toEqual([]);
  });

  it('the provider-agnostic layers import no provider', () => {
    expect(files.length).toBeGreaterThan(20);
    expect(providerImports(files)).toEqual([]);
  });
});
