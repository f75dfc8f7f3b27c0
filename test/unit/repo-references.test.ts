// Every comment and doc points only at files inside the repository (docs/design/README.md): no design note,
// specification or reference kept beside the repository, and no `docs/` page, quoted section of one, or
// relative Markdown link that does not exist. Someone who clones the repository must be able to open
// everything a comment points at.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const ROOT = join(__dirname, '..', '..');

// The names are assembled so that this file does not name them itself.
const md = (name: string): string => `${name}.md`;
/** Documents that exist only beside the repository: the team's notes, the specification, the reference shelf. */
const OUTSIDE_DOCUMENTS = [
  ...['MONEY', 'PROVIDERS', 'DASHBOARD', 'ARCHITECTURE', 'STYLE', 'AFFILIATES', ['STRUCTURE', 'NEXT'].join('-')].map(md),
  ['API', 'CONTRACT'].join('-'),
  ['interface', 'specification'].join('-'),
  ...[
    'providers-billing-stripe',
    'payout-rails',
    'ui-portal-payouts',
    'affiliate-programme-fraud',
    'provider-chargebee',
    'provider-lemon-squeezy',
  ].map(md),
  ['paddle', 'fixtures'].join('-'),
];
const OUTSIDE_PATTERNS: RegExp[] = [
  new RegExp(`(?:^|[^\\w-])(?:${OUTSIDE_DOCUMENTS.map((d) => d.replace(/[.-]/g, (c) => `\\${c}`)).join('|')})`),
  // The reference shelf's numbered sections (the repository's own docs/providers/paddle-classic.md has none).
  /(?<!providers\/)paddle-classic\.md,? (?:section )?\d/,
  // The folders of the shelf beside the repository.
  /\bshared\/(?:design|spec|reference|hooks)\//,
];
/** Relative paths that climb out of the repository into the shelf beside it (imports that resolve are fine). */
const CLIMB_TO_SHARED = /(['"`]?)((?:\.\.\/)+shared\/[^\s'"`)\]]*)/g;
/** A `docs/…md` page (or the README / BENCHMARKS), optionally followed by quoted section names. */
const DOC_MENTION = /(?<![\w./-])((?:docs\/[\w./-]+?\.md)|README(?:\.md)?|BENCHMARKS\.md)((?:\s+\(?"[^"]+"(?:,\s*"[^"]+")*\)?)?)/g;
/** A relative Markdown link to a Markdown file. */
const MD_LINK = /\]\((?!https?:|mailto:|#)([^)\s#]+\.md)(?:#[^)\s]*)?\)/g;

const SKIP = [/^package-lock\.json$/, /\.(png|jpe?g|gif|ico|webp|woff2?|ttf|pdf|zip|gz|br)$/i];

function trackedFiles(): string[] {
  try {
    const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    return out.split('\0').filter(Boolean);
  } catch {
    // No git (an exported tree): every file but the ignored folders.
    const walk = (dir: string): string[] =>
      readdirSync(join(ROOT, dir)).flatMap((name) => {
        const path = dir ? `${dir}/${name}` : name;
        if (['node_modules', '.git', '.data', 'cdk.out', 'dist', 'test-results'].includes(name)) return [];
        return statSync(join(ROOT, path)).isDirectory() ? walk(path) : [path];
      });
    return walk('');
  }
}

/** Whether `path` (repository-relative) names a file or folder that exists, as a module specifier would resolve. */
function resolves(path: string, exists: (p: string) => boolean): boolean {
  // A template literal (`…/${kind}/adapter`): the folder before the first substitution must exist.
  const fixed = path.includes('${') ? dirname(`${path.slice(0, path.indexOf('${'))}x`) : path;
  return ['', '.ts', '.tsx', '.d.ts', '.js', '.mjs', '.cjs', '.json', '/index.ts', '/index.tsx', '/index.js'].some((ext) =>
    exists(`${fixed}${ext}`),
  );
}

/** The headings, bold lead-ins and table rows of a Markdown text, lower-cased, for quoted section names. */
function sectionsOf(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) out.push((heading[1] as string).trim().toLowerCase());
    for (const bold of line.matchAll(/\*\*([^*]+)\*\*/g)) out.push((bold[1] as string).trim().toLowerCase());
    const row = /^\|([^|]+)\|/.exec(line); // a table's row, by its first cell (data-model.md's entities)
    if (row) out.push((row[1] as string).trim().toLowerCase());
  }
  return out;
}

interface Files {
  exists(path: string): boolean;
  read(path: string): string;
}

/** `file:line: why` for every line of `text` (the file at `path`) that points outside the repository or at nothing. */
function offenders(path: string, text: string, files: Files): string[] {
  const found: string[] = [];
  const dir = dirname(path);
  text.split('\n').forEach((line, i) => {
    const reasons: string[] = [];
    const report = (why: string): void => {
      if (!reasons.includes(why)) reasons.push(why);
    };
    if (OUTSIDE_PATTERNS.some((p) => p.test(line))) report('names a document outside the repository');
    for (const m of line.matchAll(CLIMB_TO_SHARED)) {
      const quoted = m[1] !== '';
      const target = normalize(join(dir, m[2] as string))
        .split('\\')
        .join('/')
        .replace(/\/$/, '');
      if (!(quoted && !target.startsWith('..') && resolves(target, files.exists))) report(`points at ${m[2]}, outside the repository`);
    }
    for (const m of line.matchAll(DOC_MENTION)) {
      const name = m[1] as string;
      const page = name === 'README' ? 'README.md' : name;
      if (!files.exists(page)) {
        report(`names ${page}, which does not exist`);
        continue;
      }
      const quotes = [...(m[2] ?? '').matchAll(/"([^"]+)"/g)].map((q) => (q[1] as string).toLowerCase());
      if (quotes.length === 0) continue;
      const sections = sectionsOf(files.read(page));
      for (const q of quotes) {
        if (!sections.some((s) => s.startsWith(q))) report(`names section "${q}" of ${page}, which has no such heading`);
      }
    }
    if (path.endsWith('.md')) {
      for (const m of line.matchAll(MD_LINK)) {
        const target = normalize(join(dir, m[1] as string))
          .split('\\')
          .join('/');
        if (target.startsWith('..') || !files.exists(target)) report(`links to ${m[1]}, which is not a file of the repository`);
      }
    }
    if (reasons.length > 0) found.push(`${path}:${i + 1}: ${reasons.join('; ')}: ${line.trim().slice(0, 160)}`);
  });
  return found;
}

const disk: Files = {
  exists: (p) => existsSync(join(ROOT, p)),
  read: (p) => readFileSync(join(ROOT, p), 'utf8'),
};

describe('references stay inside the repository', () => {
  it('no tracked file points at a document outside the repository, or at a docs page or section that does not exist', () => {
    const found: string[] = [];
    for (const path of trackedFiles()) {
      if (SKIP.some((s) => s.test(path)) || !existsSync(join(ROOT, path))) continue;
      const buffer = readFileSync(join(ROOT, path));
      if (buffer.subarray(0, 8000).includes(0)) continue; // binary
      found.push(...offenders(path, buffer.toString('utf8'), disk));
    }
    expect(found).toEqual([]);
  });

  describe('the detector', () => {
    // Assembled, so that the whole-repository check above does not read these made-up pages as references.
    const DOCS = 'docs';
    const fake = (pages: Record<string, string>): Files => ({
      exists: (p) => p in pages,
      read: (p) => pages[p] ?? '',
    });
    const files = fake({
      'docs/design/money.md': '# Money\n\n## Clawbacks\n\n**Bounds on amounts.** ...',
      'shared/store/table.ts': '',
      'shared/flows': '',
    });

    it('flags the documents beside the repository, by name or by path', () => {
      const name = ['MONEY', 'md'].join('.');
      expect(offenders('shared/a.ts', `// The rule (${name} "Clawbacks").`, files)).toHaveLength(1);
      expect(offenders('shared/a.ts', `// ${['API', 'CONTRACT'].join('-')} "Routing"`, files)).toHaveLength(1);
      expect(offenders('shared/a.ts', `// See ${['..', 'shared', 'reference', 'x.md'].join('/')} section 2.`, files)).toHaveLength(1);
      expect(offenders('test/a.ts', `// (${['paddle-classic', 'md'].join('.')} 1.2-1.9)`, files)).toHaveLength(1);
      expect(offenders(`${DOCS}/a.md`, `The contract ([x](../../${['shared', 'design', 'X.md'].join('/')})).`, files)).toHaveLength(1);
    });

    it('accepts imports that resolve inside the repository, and pages and sections that exist', () => {
      expect(offenders('functions/a.ts', `import { t } from '${['..', 'shared', 'store', 'table'].join('/')}';`, files)).toEqual([]);
      expect(offenders('functions/x/a.ts', `jest.mock('${['..', '..', 'shared', 'flows'].join('/')}');`, files)).toEqual([]);
      expect(offenders('shared/a.ts', '// docs/design/money.md "Clawbacks" and ("Bounds")', files)).toEqual([]);
      expect(offenders('docs/design/README.md', '[money](money.md#clawbacks)', files)).toEqual([]);
    });

    it('flags a docs page, a section or a Markdown link that does not exist', () => {
      expect(offenders('shared/a.ts', `// ${DOCS}/design/nothing.md`, files)).toHaveLength(1);
      expect(offenders('shared/a.ts', `// ${DOCS}/design/money.md "Refunds"`, files)).toHaveLength(1);
      expect(offenders('docs/design/README.md', '[gone](gone.md)', files)).toHaveLength(1);
    });
  });
});
