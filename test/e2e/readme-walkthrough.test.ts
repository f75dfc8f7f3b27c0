// e2e: the walk-throughs of docs/api-tour.md run as pasted, in order, on a fresh `npm start`.
//
// Every ```sh block of the page is cut into commands, run one by one in one bash (so `export`s carry
// over), and checked against the `# -> ...` comment that follows a command:
//   # -> 201 {"id": "<campaign id>", "name": "Friends", ...}
// - the number is the HTTP status (curl; without one a curl must answer 2xx); other commands must exit 0;
// - the JSON after it is a skeleton of the answer: its literal values must match, `...` stands for
//   anything, and `<name>` captures the value for the later commands that use `<name>` (a second
//   occurrence must equal the first);
// - reads (GET curls, ls, cat, `paddle -- state`) are repeated until they match or 40 s pass (a loaded CI machine), since the
//   page says what the workers do "within a second".
// Only the documented placeholders are substituted: the demo key, publishable key and account id that
// `npm start` prints, its URL, `.data/` (its DATA_DIR) and the `<name>`s captured above. The CLIs get the
// ports in the environment, as `npm start`'s banner tells a user to when they are not the defaults.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocal, type LocalRuntime } from '../../infra/local/start';
import { pollUntil } from '../support/fixtures';

const ROOT = join(__dirname, '..', '..');
// The pages whose ```sh blocks run, in order, in one shell.
const PAGES = ['docs/api-tour.md'];

const pageText = (page: string) => readFileSync(join(ROOT, page), 'utf8');
const TABLE = 'refloop-walkthrough';

export interface Step {
  where: string;
  command: string;
  status?: number;
  skeleton?: string;
}

/** The commands of a page's ```sh blocks, each with the expectation of the `# ->` comment after it. */
export function extractSteps(page: string, markdown: string): Step[] {
  const steps: Step[] = [];
  const lines = markdown.split('\n');
  let inBlock = false;
  let current: { start: number; lines: string[] } | null = null;
  let expectation: string[] | null = null;
  // Whether a command goes on: a trailing backslash, or a single quote still open (comments skipped).
  const open = (text: string) => {
    let quoted = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === "'") quoted = !quoted;
      else if (!quoted && c === '#' && (i === 0 || /\s/.test(text[i - 1] ?? '')))
        i = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i) - 1;
    }
    return quoted || /\\$/.test(text);
  };
  const flush = () => {
    if (current) {
      const step: Step = { where: `${page}:${current.start}`, command: current.lines.join('\n') };
      const text = expectation?.join(' ').trim();
      if (text) {
        const status = /^(\d{3})\b/.exec(text);
        if (status) step.status = Number(status[1]);
        const skeleton = balanced(text);
        if (skeleton) step.skeleton = skeleton;
      }
      steps.push(step);
    }
    current = null;
    expectation = null;
  };
  lines.forEach((line, i) => {
    if (!inBlock) {
      if (line.trim() === '```sh') inBlock = true;
      return;
    }
    if (line.trim() === '```') {
      flush();
      inBlock = false;
      return;
    }
    if (current && open(current.lines.join('\n'))) {
      current.lines.push(line);
      return;
    }
    const comment = /^\s*#\s?(.*)$/.exec(line);
    if (comment) {
      const text = comment[1] ?? '';
      if (text.startsWith('->') && current) expectation = [text.slice(2)];
      else if (expectation && /^\s{2,}/.test(text)) expectation.push(text);
      else if (expectation) expectation = [...expectation, ''];
      return;
    }
    if (line.trim() === '') return;
    flush();
    const inline = line.indexOf('  # -> ');
    current = { start: i + 1, lines: [inline === -1 ? line : line.slice(0, inline)] };
    if (inline !== -1) expectation = [line.slice(inline + 7)];
  });
  return steps;
}

/** The first bracket-balanced {...} or [...] of a comment (strings respected), or null. */
function balanced(text: string): string | null {
  const start = text.search(/[{[]/);
  if (start === -1) return null;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return null;
}

/** A documented answer skeleton as JSON: `...` becomes a wildcard, an unquoted `<name>` a quoted one. */
export function parseSkeleton(skeleton: string): unknown {
  const json = skeleton
    .replace(/(?<!")<([a-z][\w -]*)>(?!")/g, '"<$1>"')
    .replace(/\{\s*\.\.\.\s*,/g, '{')
    .replace(/,\s*\.\.\.\s*(?=[}\]])/g, '')
    .replace(/\[\s*\.\.\.\s*\]/g, '[]')
    .replace(/\{\s*\.\.\.\s*\}/g, '{}')
    .replace(/:\s*\.\.\.(?=\s*[,}\]])/g, ': "..."');
  return JSON.parse(json);
}

/** Whether `actual` matches the skeleton; captures new `<name>`s into `found`. Returns a mismatch or null. */
export function match(
  skeleton: unknown,
  actual: unknown,
  known: Map<string, string>,
  found: Map<string, string>,
  path = '$',
): string | null {
  if (typeof skeleton === 'string') {
    const placeholder = /^<([a-z][\w -]*)>$/.exec(skeleton);
    if (placeholder) {
      if (actual === undefined || actual === null || typeof actual === 'object')
        return `${path}: expected a value for ${skeleton}, got ${JSON.stringify(actual)}`;
      const name = placeholder[1] as string;
      const before = known.get(name) ?? found.get(name);
      if (before !== undefined && before !== String(actual)) return `${path}: expected ${skeleton} = ${before}, got ${String(actual)}`;
      found.set(name, String(actual));
      return null;
    }
    if (skeleton.includes('...')) return actual === undefined ? `${path}: missing` : null;
  }
  if (Array.isArray(skeleton)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
    if (actual.length < skeleton.length) return `${path}: expected at least ${skeleton.length} items, got ${actual.length}`;
    for (let i = 0; i < skeleton.length; i++) {
      const miss = match(skeleton[i], actual[i], known, found, `${path}[${i}]`);
      if (miss) return miss;
    }
    return null;
  }
  if (skeleton !== null && typeof skeleton === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(skeleton)) {
      const miss = match(value, (actual as Record<string, unknown>)[key], known, found, `${path}.${key}`);
      if (miss) return miss;
    }
    return null;
  }
  return skeleton === actual ? null : `${path}: expected ${JSON.stringify(skeleton)}, got ${JSON.stringify(actual)}`;
}

/** One bash for the whole page, fed one command at a time; each answer ends with its exit code. */
class Shell {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = '';
  private err = '';
  private waiting: (() => void) | null = null;

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn('bash', ['--norc', '--noprofile'], { cwd: ROOT, env });
    this.child.stdout.on('data', (c: Buffer) => {
      this.out += c.toString('utf8');
      this.waiting?.();
    });
    this.child.stderr.on('data', (c: Buffer) => (this.err += c.toString('utf8')));
    // curl as pasted, plus its status on a last line the test reads.
    this.child.stdin.write(`curl() { command curl -w '\\n__HTTP__%{http_code}' "$@"; }\n`);
  }

  async run(command: string, timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
    this.out = '';
    this.err = '';
    this.child.stdin.write(`${command}\nprintf '\\n__RC__%s__\\n' $?\n`);
    const done = /\n__RC__(\d+)__\n$/;
    const deadline = Date.now() + timeoutMs;
    while (!done.test(this.out)) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${command}\n${this.out}\n${this.err}`);
      await new Promise<void>((ok) => {
        const timer = setTimeout(ok, 1_000);
        this.waiting = () => {
          clearTimeout(timer);
          ok();
        };
      });
    }
    const code = Number(done.exec(this.out)?.[1]);
    return { code, stdout: this.out.replace(done, ''), stderr: this.err };
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

const isRead = (command: string) =>
  (/^curl -s /.test(command) && !/ -X (POST|PATCH|DELETE|PUT) /.test(command)) ||
  /^(ls|cat) /.test(command) ||
  /paddle -- state\s*(#.*)?$/.test(command);

const dataDir = mkdtempSync(join(tmpdir(), 'refloop-walkthrough-'));
let runtime: LocalRuntime | undefined;
let shell: Shell | undefined;

afterAll(async () => {
  shell?.close();
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the extraction', () => {
  it('cuts commands and expectations (status, skeleton, continuation lines)', () => {
    const md = [
      '```sh',
      'export A=1   # a note',
      `curl -s -X POST $API/v1/x/ -H 'A: b' \\`,
      `  -d '{"a": 1,`,
      `       "b": 2}'`,
      '# -> 201 {"id": "<x id>", "n": [...], "m": ...,',
      '#         "k": {...}}    <- the remark\'s end',
      '# a plain comment',
      "curl -s $API/x/  # the app's note",
      'ls /tmp  # -> {"x": 1}',
      '```',
    ].join('\n');
    const steps = extractSteps('p.md', md);
    expect(steps.map((s) => [s.command.split('\n').length, s.status, s.skeleton])).toEqual([
      [1, undefined, undefined],
      [3, 201, '{"id": "<x id>", "n": [...], "m": ...,         "k": {...}}'],
      [1, undefined, undefined],
      [1, undefined, '{"x": 1}'],
    ]);
    const found = new Map<string, string>();
    expect(match(parseSkeleton(steps[1]?.skeleton ?? ''), { id: 'abc', n: [1], m: null, k: { z: 1 } }, new Map(), found)).toBeNull();
    expect(found.get('x id')).toBe('abc');
    expect(match(parseSkeleton('{"id": "<x id>"}'), { id: 'other' }, found, new Map())).toMatch(/expected <x id> = abc/);
  });
});

describe('docs/api-tour.md on a fresh npm start', () => {
  it('runs every command as pasted, in order, with the documented answers', async () => {
    runtime = await startLocal({
      port: 0,
      // The run's DynamoDB Local (in memory) with a table of the walk-through's own: the pages' commands and
      // answers are the same, without a second Java and its file store (test/e2e/local-runtime.test.ts keeps
      // npm start's own DynamoDB Local on DATA_DIR, restarts included).
      dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT,
      sqsPort: 0,
      paddlePort: 0,
      paddleBillingPort: 0,
      stripePort: 0,
      paypalPort: 0,
      wisePort: 0,
      // As `npm start` does (unless DEMO_RAILS=0): the demo account's rails connected to their emulators.
      connectDemoRails: true,
      // Short polls a send wakes, not npm start's 1 s batching window per queue: the commands and their
      // answers are the same, and the walk-through waits milliseconds instead of seconds per queue crossed.
      shortPolls: true,
      dataDir,
      tableName: TABLE,
    });
    const { demo } = runtime;
    shell = new Shell({
      ...process.env,
      PADDLE_EMULATOR_URL: runtime.paddle.url,
      DYNAMODB_ENDPOINT: runtime.dynamodbEndpoint,
      TABLE_NAME: TABLE,
    });
    const captured = new Map<string, string>();
    const substitute = (command: string) => {
      const text = command
        .replaceAll('rfl_live_...', demo.apiKey)
        .replaceAll('rfl_pub_...', demo.publishableKey)
        .replaceAll('http://127.0.0.1:3000', runtime?.url ?? '')
        .replaceAll('<demo account id>', demo.accountId)
        .replaceAll('.data/', `${dataDir}/`)
        .replace(/<([a-z][\w -]*)>/g, (all, name: string) => captured.get(name) ?? all);
      const unknown = /<([a-z][\w -]*)>/.exec(text);
      if (unknown) throw new Error(`${command}\nuses ${unknown[0]}, which no earlier command's "# ->" comment captures`);
      return text;
    };

    const steps = PAGES.flatMap((page) => extractSteps(page, pageText(page)));
    expect(steps.length).toBeGreaterThan(30);
    for (const step of steps) {
      const command = substitute(step.command);
      const attempt = async (): Promise<string | null> => {
        const { code, stdout, stderr } = await shell!.run(command);
        const http = /\n__HTTP__(\d{3})$/.exec(stdout);
        const body = http ? stdout.slice(0, http.index) : stdout;
        if (code !== 0) return `exit code ${code}\n${stdout}\n${stderr}`;
        if (http) {
          const status = Number(http[1]);
          if (step.status !== undefined ? status !== step.status : status < 200 || status > 299) {
            return `HTTP ${status} (documented: ${step.status ?? '2xx'})\n${body}`;
          }
        } else if (step.status !== undefined) return `no HTTP status (documented: ${step.status})\n${stdout}`;
        if (!step.skeleton) return null;
        let actual: unknown;
        try {
          actual = JSON.parse(body.trim());
        } catch {
          return `the answer is not JSON\n${body}`;
        }
        const found = new Map<string, string>();
        const miss = match(parseSkeleton(step.skeleton), actual, captured, found);
        if (miss) return `${miss}\n${body}`;
        found.forEach((value, name) => captured.set(name, value));
        return null;
      };
      let failure = await attempt();
      if (failure && isRead(step.command)) {
        // A read of something a worker does "within a second": asked again until it matches.
        failure = await pollUntil(async () => ((await attempt()) === null ? 'ok' : null), { timeoutMs: 40_000 }).then(
          () => null,
          () => attempt(),
        );
      }
      if (failure) throw new Error(`${step.where}: ${step.command}\n${failure}`);
    }
  }, 300_000);
});
