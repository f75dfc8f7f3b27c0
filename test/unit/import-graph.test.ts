// The import graph of the production code (shared/, functions/, infra/, web/): no cycles, and the layers
// import in one direction only:
//
//   domain  <-  store  <-  flows  <-  http, functions (the doors)
//
// - shared/domain/ is pure: it imports nothing outside shared/domain/.
// - shared/store/ imports no flow, no http helper, no door.
// - shared/flows/ import no http helper and no door.
// - shared/ imports nothing from functions/ (the doors) nor from infra/ (the stacks and the local tools).
// - Providers sit behind the port: outside shared/providers/, only the registry (shared/billing/registry.ts,
//   the one map of provider definitions) imports a provider; the flows and the doors reach one through the
//   port (shared/billing/port.ts) and the registry. (infra/ may: the local emulators and the admin CLI are
//   tools, not production code.)
// - web/ stands apart: the SPA (web/src/) imports nothing outside web/src/ (its API types are generated
//   into web/src/api/ from the OpenAPI document by web/build.ts), and no server file imports web/.
//
// Every import counts, `import type` included: a type-only cycle is still two modules that cannot be read,
// moved or split apart. Imports are read with the TypeScript parser (static and dynamic imports,
// re-exports, `require('...')` and `import('...')` types); only relative specifiers can reach the
// repository's own files.
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { ROOT, sourceFiles, specifiers } from '../support/source-files';
const PRODUCTION = ['shared', 'functions', 'infra', 'web/src', 'web/build.ts'];

/** Edges that cross a layer rule on purpose, with the reason. */
const ALLOWED: Record<string, string> = {
  // The generator takes the route table as an argument (functions/docs/*.ts and web/build.ts pass it);
  // it imports only the table's type.
  'shared/openapi/document.ts -> functions/routes.ts': 'type of the route table the doors hand to the generator',
};

interface Rule {
  /** Files the rule applies to (path prefixes)... */
  from: string[];
  /** ...except these. */
  except?: string[];
  /** What they must not import (path prefixes)... */
  not?: string[];
  /** ...or everything they may import (path prefixes). */
  only?: string[];
  why: string;
}

export const RULES: Rule[] = [
  { from: ['shared/domain/'], only: ['shared/domain/'], why: 'the domain is pure: it imports only the domain' },
  { from: ['shared/store/'], not: ['shared/flows/', 'shared/http/'], why: 'the store imports no flow and no http helper' },
  { from: ['shared/flows/'], not: ['shared/http/'], why: 'a flow imports no http helper' },
  {
    from: ['shared/', 'functions/'],
    except: ['shared/providers/', 'shared/billing/registry.ts'],
    not: ['shared/providers/'],
    why: 'providers sit behind the port: only shared/billing/registry.ts imports one',
  },
  { from: ['shared/'], not: ['functions/', 'infra/'], why: 'shared/ imports no door (functions/) and no stack or local tool (infra/)' },
  { from: ['shared/', 'functions/', 'infra/', 'web/build.ts'], not: ['web/src/'], why: 'no server file imports the SPA (web/src/)' },
  { from: ['web/src/'], only: ['web/src/'], why: 'the SPA imports nothing outside web/src/ (its API types are generated there)' },
];

export interface Edge {
  from: string;
  to: string;
}

/** The repository files a file imports (relative specifiers that resolve to one of `known`). */
export function importEdges(files: { path: string; source: string }[], known: Set<string> = new Set(files.map((f) => f.path))): Edge[] {
  const edges = new Map<string, Edge>();
  for (const { path, source } of files) {
    for (const specifier of specifiers(path, source)) {
      if (!specifier.startsWith('.')) continue;
      const base = posix.normalize(posix.join(posix.dirname(path), specifier));
      const to = [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`, base.replace(/\.js$/, '.ts')].find((c) =>
        known.has(c),
      );
      if (to && to !== path) edges.set(`${path} -> ${to}`, { from: path, to });
    }
  }
  return [...edges.values()];
}

const label = (e: Edge) => `${e.from} -> ${e.to}`;

/** Each cycle of the graph, as the imports that make it up (one cycle per strongly connected component). */
export function cycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  // Tarjan's strongly connected components, iteratively.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const nodes = [...new Set(edges.flatMap((e) => [e.from, e.to]))].sort();
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: string; i: number }[] = [{ node: root, i: 0 }];
    index.set(root, index.size);
    low.set(root, index.get(root) as number);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1] as { node: string; i: number };
      const targets = next.get(top.node) ?? [];
      if (top.i < targets.length) {
        const to = targets[top.i++] as string;
        if (!index.has(to)) {
          index.set(to, index.size);
          low.set(to, index.get(to) as number);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node) as number, index.get(to) as number));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(top.node) as number));
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== top.node);
        if (component.length > 1) components.push(component);
      }
    }
  }
  return components.map((component) => {
    const inside = new Set(component);
    return edges
      .filter((e) => inside.has(e.from) && inside.has(e.to))
      .map(label)
      .sort();
  });
}

const matches = (path: string, prefixes: string[]) => prefixes.some((p) => path === p || path.startsWith(p));

/** Each import that breaks a rule, as `<from> -> <to> (<why>)`. */
export function layerViolations(edges: Edge[], rules: Rule[] = RULES): string[] {
  const out = new Set<string>();
  for (const e of edges) {
    for (const rule of rules) {
      if (!matches(e.from, rule.from) || matches(e.from, rule.except ?? [])) continue;
      const broken = rule.only ? !matches(e.to, rule.only) : matches(e.to, rule.not ?? []);
      if (broken && !(label(e) in ALLOWED)) out.add(`${label(e)} (${rule.why})`);
    }
  }
  return [...out].sort();
}

const edgeOf = (violation: string) => violation.replace(/ \(.*\)$/, '');

describe('import graph', () => {
  const paths = PRODUCTION.flatMap(sourceFiles);
  const edges = importEdges(paths.map((path) => ({ path, source: readFileSync(join(ROOT, path), 'utf8') })));

  it('reads every kind of import, and finds cycles and broken rules (the checks themselves work)', () => {
    const source = [
      "import { a } from './a';",
      "import type { B } from '../b';",
      "export * from './c';",
      "const d = require('./d');",
      "type E = import('./e').E;",
      "const f = () => import('./f');",
      "import g = require('./g');",
      "import 'node:fs';",
    ].join('\n');
    expect(specifiers('shared/flows/x.ts', source)).toEqual(['./a', '../b', './c', './d', './e', './f', './g', 'node:fs']);
    const known = new Set(['shared/flows/a.ts', 'shared/b/index.ts', 'shared/flows/c.tsx', 'shared/flows/x.ts']);
    expect(importEdges([{ path: 'shared/flows/x.ts', source }], known).map(label)).toEqual([
      'shared/flows/x.ts -> shared/flows/a.ts',
      'shared/flows/x.ts -> shared/b/index.ts',
      'shared/flows/x.ts -> shared/flows/c.tsx',
    ]);

    const e = (from: string, to: string): Edge => ({ from, to });
    expect(cycles([e('a', 'b'), e('b', 'c'), e('c', 'a'), e('c', 'd'), e('d', 'e'), e('e', 'd')])).toEqual([
      ['d -> e', 'e -> d'],
      ['a -> b', 'b -> c', 'c -> a'],
    ]);
    expect(cycles([e('a', 'b'), e('b', 'c'), e('a', 'c')])).toEqual([]);

    expect(
      layerViolations([
        e('shared/flows/x.ts', 'shared/providers/stripe/client.ts'),
        e('shared/flows/x.ts', 'shared/billing/port.ts'),
        e('functions/x.ts', 'shared/providers/stripe/index.ts'),
        e('shared/billing/registry.ts', 'shared/providers/stripe/index.ts'),
        e('shared/providers/stripe/index.ts', 'shared/providers/stripe/client.ts'),
        e('shared/domain/x.ts', 'shared/store/ops.ts'),
        e('shared/store/x.ts', 'shared/flows/payouts.ts'),
        e('shared/flows/x.ts', 'shared/http/body.ts'),
        e('shared/http/x.ts', 'functions/routes.ts'),
        e('functions/x.ts', 'web/src/main.tsx'),
        e('web/src/x.ts', 'shared/domain/models.ts'),
      ]).map(edgeOf),
    ).toEqual([
      'functions/x.ts -> shared/providers/stripe/index.ts',
      'functions/x.ts -> web/src/main.tsx',
      'shared/domain/x.ts -> shared/store/ops.ts',
      'shared/flows/x.ts -> shared/http/body.ts',
      'shared/flows/x.ts -> shared/providers/stripe/client.ts',
      'shared/http/x.ts -> functions/routes.ts',
      'shared/store/x.ts -> shared/flows/payouts.ts',
      'web/src/x.ts -> shared/domain/models.ts',
    ]);
  });

  it('reads the whole production tree', () => {
    expect(paths.length).toBeGreaterThan(250);
    expect(edges.length).toBeGreaterThan(1000);
    for (const prefix of ['shared/domain/', 'shared/store/', 'shared/flows/', 'shared/http/', 'functions/', 'infra/', 'web/src/']) {
      expect({ prefix, imports: edges.some((e) => e.from.startsWith(prefix)) }).toEqual({ prefix, imports: true });
    }
  });

  it('has no import cycle (each one listed with the imports that close it)', () => {
    expect(cycles(edges)).toEqual([]);
  });

  it('imports along the layers only (each broken rule listed with its import)', () => {
    expect(layerViolations(edges)).toEqual([]);
    // Every exception still exists (an exception whose import is gone leaves the list).
    expect(Object.keys(ALLOWED).filter((edge) => !edges.some((e) => label(e) === edge))).toEqual([]);
  });
});
