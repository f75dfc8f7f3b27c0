// The views' types against the response schemas, with the real TypeScript compiler (Jest's transform only
// transpiles, so an assertion on types inside a test body could never fail): test/types/views-conform.ts
// must compile without a diagnostic, and views that drift from their schema (wrong type, missing field,
// extra field) must each produce one, so the check is known to bite.
import { dirname, join } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
const ASSERTIONS = join(ROOT, 'test', 'types', 'views-conform.ts');

/** Wrong views, compiled in memory (never on disk, so `npm run typecheck` stays clean). */
const WRONG: Record<string, string> = {
  'a field of the wrong type': `declare function view(...a: Parameters<typeof campaignView>): Omit<ReturnType<typeof campaignView>, 'created_at'> & { created_at: string };
export type T = Assert<Conforms<typeof view, typeof r.campaignResponse>>;`,
  'a missing field': `declare function view(...a: Parameters<typeof referralView>): Omit<ReturnType<typeof referralView>, 'reward_threshold'>;
export type T = Assert<Conforms<typeof view, typeof r.referralResponse>>;`,
  'a field the schema does not have': `declare function view(...a: Parameters<typeof memberView>): ReturnType<typeof memberView> & { internal_note: string };
export type T = Assert<Conforms<typeof view, typeof r.memberResponse>>;`,
  'null where the schema has no null': `declare function view(...a: Parameters<typeof webhookEndpointView>): Omit<ReturnType<typeof webhookEndpointView>, 'url'> & { url: string | null };
export type T = Assert<Conforms<typeof view, typeof r.webhookEndpointResponse>>;`,
  'the view of another schema': `export type T = Assert<Conforms<typeof subscriptionView, typeof r.campaignResponse>>;`,
};

const HEADER = `import type * as r from '../../shared/schemas/responses';
import type { campaignView, memberView, referralView, subscriptionView } from '../../shared/domain/views';
import type { webhookEndpointView } from '../../shared/webhooks/views';
import type { Assert, Conforms } from './views-conform';
`;

function compilerOptions(): ts.CompilerOptions {
  const file = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  if (file.error) throw new Error(ts.flattenDiagnosticMessageText(file.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(file.config, ts.sys, ROOT);
  // Only these files and what they import; jest's globals are not needed.
  return { ...parsed.options, noEmit: true, types: ['node'] };
}

/** Diagnostics per file for the assertion file plus the in-memory ones. */
function compile(virtual: Record<string, string>): Map<string, string[]> {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => f in virtual || fileExists.call(host, f);
  host.readFile = (f) => virtual[f] ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) =>
    f in virtual ? ts.createSourceFile(f, virtual[f] as string, language) : getSourceFile.call(host, f, language, ...rest);
  const program = ts.createProgram([ASSERTIONS, ...Object.keys(virtual)], options, host);
  const out = new Map<string, string[]>();
  // The assertion file's and the wrong views' own diagnostics (the types they reach are checked as far as
  // these need them); every other file is `npm run typecheck`'s, which checks the whole tree.
  const checked = [ASSERTIONS, ...Object.keys(virtual)].map((f) => {
    const file = program.getSourceFile(f);
    if (!file) throw new Error(`${f} is not in the program`);
    return file;
  });
  const found = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ];
  for (const d of found) {
    const key = d.file?.fileName ?? '(global)';
    out.set(key, [...(out.get(key) ?? []), `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`]);
  }
  return out;
}

describe('views conform to their response schemas (TypeScript compiler)', () => {
  const files = Object.fromEntries(Object.keys(WRONG).map((why, i) => [join(dirname(ASSERTIONS), `wrong-view-${i}.ts`), why]));
  let diagnostics: Map<string, string[]>;

  beforeAll(() => {
    diagnostics = compile(Object.fromEntries(Object.entries(files).map(([file, why]) => [file, HEADER + (WRONG[why] as string)])));
  }, 60_000);

  it('test/types/views-conform.ts compiles without a diagnostic', () => {
    const unexpected = [...diagnostics.entries()].filter(([file]) => !(file in files));
    expect(unexpected).toEqual([]);
  });

  it.each(Object.keys(WRONG))('a view with %s is a compile error', (why) => {
    const file = Object.keys(files).find((f) => files[f] === why) as string;
    const found = diagnostics.get(file) ?? [];
    // Exactly the assertion fails (TS2344: Type 'false' does not satisfy the constraint 'true').
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^TS2344: Type 'false' does not satisfy the constraint 'true'/);
  });
});
