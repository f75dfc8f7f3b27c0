// Adding a provider touches its folder and one line of the registry (docs/providers/adding-a-provider.md):
// no production file outside shared/providers/ and shared/billing/registry.ts names a provider kind. What
// used to switch on the kind (the store, the account settings, the body schemas, the OpenAPI document, the
// intake, the CLI, the dashboard) reads the definitions instead (shared/billing/definition.ts).
//
// Scanned: the production code, shared/, functions/, infra/ and web/src/ (.ts, .tsx), with the TypeScript
// parser: a string literal (or a template without substitutions) whose text is a kind, and an object key
// spelled as a kind (`{ stripe: ... }`). Comments and prose inside longer strings are not names.
// Not scanned: shared/providers/ (each provider's own folder), shared/billing/registry.ts (the map),
// infra/local/emulators/ (each provider's local emulator: dev tooling in a folder of its own), shared/rails/
// (the payout rails: `stripe` there is Stripe Connect, a rail kind that shares the provider's name, not a
// provider kind), shared/domain/rail-kinds.ts (their kinds as domain data), web/src/portal/rails.ts and
// web/src/dashboard/lib/rails.ts (the portal's and the dashboard's names of the same rails) and the generated
// web/src/api/schema.d.ts.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { PROVIDER_KINDS } from '../../shared/billing/registry';

const ROOT = join(__dirname, '..', '..');
const PRODUCTION = ['shared', 'functions', 'infra', 'web/src'];
const EXEMPT = [
  'shared/providers/',
  'shared/billing/registry.ts',
  'infra/local/emulators/',
  'shared/rails/',
  'web/src/portal/rails.ts',
  'web/src/dashboard/lib/rails.ts',
  'shared/domain/rail-kinds.ts',
  'web/src/api/schema.d.ts',
];

/**
 * Files that still name a kind, each with why and who removes it. The list only shrinks: an entry whose
 * file no longer names a kind fails the test until it is deleted.
 */
const KNOWN: Record<string, string> = {
  // The emulator CLIs (`npm run paddle|paddle-billing|stripe|chargebee`) are each one provider's dev tool, like the
  // emulators they drive; they name their own provider.
  'infra/paddle.ts': "the Paddle Classic emulator's CLI",
  'infra/paddle-billing.ts': "the Paddle Billing emulator's CLI",
  'infra/stripe.ts': "the Stripe emulator's CLI",
  'infra/chargebee.ts': "the Chargebee emulator's CLI",
  // npm start runs every emulator and wires the demo account from the definitions, but its LocalRuntime
  // still hands the tests each emulator's own handle by name, and prints each one's checkout command.
  'infra/local/start.ts': 'the local runtime: its emulator handles and checkout hints by provider',
};

function files(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  if (!statSync(abs).isDirectory()) return /\.tsx?$/.test(dir) ? [dir] : [];
  return readdirSync(abs).flatMap((name) => (name === 'node_modules' || name === 'dist' ? [] : files(`${dir}/${name}`)));
}

/** Where `source` names one of `kinds`: `line: text` per occurrence. */
export function kindNames(path: string, source: string, kinds: readonly string[]): string[] {
  const file = ts.createSourceFile(
    path,
    source,
    ts.ScriptTarget.Latest,
    true,
    path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: string[] = [];
  const note = (node: ts.Node, text: string) => found.push(`${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${text}`);
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && kinds.includes(node.text)) note(node, node.getText());
    else if (
      (ts.isPropertyAssignment(node) || ts.isPropertySignature(node) || ts.isShorthandPropertyAssignment(node)) &&
      ts.isIdentifier(node.name) &&
      kinds.includes(node.name.text)
    )
      note(node.name, `${node.name.text}:`);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('provider kinds are named only by their provider and the registry', () => {
  const kinds = PROVIDER_KINDS as readonly string[];
  const scanned = PRODUCTION.flatMap(files).filter((f) => !EXEMPT.some((e) => f.startsWith(e)));
  const named = new Map(
    scanned.map((f) => [f, kindNames(f, readFileSync(join(ROOT, f), 'utf8'), kinds)] as const).filter(([, hits]) => hits.length > 0),
  );

  it('the check finds a kind (literal, key) and ignores comments and prose', () => {
    expect(kindNames('x.ts', "const a = { kind: 'stripe' }; type K = 'paddle-billing'; const b = { stripe: 1 };", kinds)).toEqual([
      "1: 'stripe'",
      "1: 'paddle-billing'",
      '1: stripe:',
    ]);
    expect(kindNames('x.ts', "// 'stripe'\nconst a = 'stripe is fine in a sentence'; const c = x.stripe;", kinds)).toEqual([]);
    expect(scanned.length).toBeGreaterThan(100);
  });

  it('no production file outside shared/providers/ and shared/billing/registry.ts names a provider kind', () => {
    const unexpected = [...named].filter(([f]) => !(f in KNOWN)).map(([f, hits]) => `${f}: ${hits.join(', ')}`);
    expect(unexpected).toEqual([]);
  });

  it('every known exception still names a kind (the list only shrinks)', () => {
    expect(Object.keys(KNOWN).filter((f) => !named.has(f))).toEqual([]);
  });
});
