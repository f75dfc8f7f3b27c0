// What the emulator CLIs (infra/paddle.ts, paddle-billing.ts, stripe.ts) share: one call to an emulator's
// /_emulator/ control endpoint, its JSON answer printed on stdout. Exit code 0, or 1 when the emulator is
// down, answers something that is not JSON, or refuses (its `error` printed on one stderr line), or when
// the service answered a webhook it triggered 404 (the demo account is on another provider: a hint names
// the DEMO_PROVIDER to start with).
import { definitionOf, type ProviderKind } from '../shared/billing/registry';

export interface EmulatorCall {
  /** The CLI's name, the prefix of its error lines ("paddle", "stripe"). */
  cli: string;
  /** How the emulator is called in messages ("Paddle emulator"). */
  label: string;
  /** The emulator's base URL (no trailing slash). */
  base: string;
  /** The control path below /_emulator/. */
  path: string;
  /** A JSON body makes it a POST; none, a GET. */
  body?: Record<string, unknown>;
  timeoutMs: number;
  /** Appended to "not reachable": what to start. */
  hint: string;
  /**
   * The provider kind of the emulator (`DEMO_PROVIDER`'s value for it). A webhook the service answered 404
   * means the demo account is not connected to this provider: one line says which DEMO_PROVIDER to start
   * with, and the exit code is 1 (the action happened in the emulator, but the service saw none of it).
   */
  provider?: ProviderKind;
}

/** The HTTP statuses of the webhooks an emulator's answer reports (`notifications`, `events` or `alerts`). */
export function deliveryStatuses(body: unknown): (number | null)[] {
  const lists = Array.isArray(body)
    ? [body]
    : typeof body === 'object' && body !== null
      ? ['notifications', 'events', 'alerts'].map((k) => (body as Record<string, unknown>)[k])
      : [];
  const out: (number | null)[] = [];
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const d of list)
      if (typeof d === 'object' && d !== null && 'status' in d) out.push(typeof d.status === 'number' ? d.status : null);
  }
  return out;
}

/** The one-line hint for webhooks answered 404: the demo account is on another provider. */
export function notConnectedHint(cli: string, provider: ProviderKind, count: number): string {
  const definition = definitionOf(provider);
  return `${cli}: the service answered 404 to ${count} webhook(s): the demo account is not connected to ${definition.name}; restart with DEMO_PROVIDER=${provider} npm start (on a fresh DATA_DIR if the demo already mirrors another provider's subscriptions), or connect your account with \`npm run --silent admin -- account ${definition.cli.command}\``;
}

/** Why an emulator refused, in its own words: `error` (ours), else `message` (PayPal's), else `errors[0].message` (Wise's). */
function refusal(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as { error?: unknown; message?: unknown; errors?: unknown };
  if (typeof b.error === 'string') return b.error;
  if (typeof b.message === 'string') return b.message;
  const first: unknown = Array.isArray(b.errors) ? b.errors[0] : undefined;
  const nested = typeof first === 'object' && first !== null ? (first as { message?: unknown }).message : undefined;
  return typeof nested === 'string' ? nested : null;
}

export async function callEmulator(call: EmulatorCall): Promise<number> {
  let res: Response;
  try {
    res = await fetch(`${call.base}/_emulator/${call.path}`, {
      method: call.body ? 'POST' : 'GET',
      headers: call.body ? { 'content-type': 'application/json' } : {},
      body: call.body ? JSON.stringify(call.body) : undefined,
      signal: AbortSignal.timeout(call.timeoutMs),
    });
  } catch {
    process.stderr.write(`${call.label} not reachable at ${call.base}; ${call.hint}\n`);
    return 1;
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    process.stderr.write(`${call.cli}: ${call.base} answered HTTP ${res.status} with a body that is not JSON; is it the ${call.label}?\n`);
    return 1;
  }
  if (!res.ok) {
    const message = refusal(body);
    process.stderr.write(`${call.cli}: ${message ?? `HTTP ${res.status}`}\n`.replace(/\s*\n\s*(?=.)/g, ' '));
    return 1;
  }
  process.stdout.write(`${JSON.stringify(body)}\n`);
  const notFound = deliveryStatuses(body).filter((status) => status === 404).length;
  if (call.provider && notFound > 0) {
    process.stderr.write(`${notConnectedHint(call.cli, call.provider, notFound)}\n`);
    return 1;
  }
  return 0;
}

/** What one emulator CLI (infra/paddle.ts, paddle-billing.ts, stripe.ts, chargebee.ts) tells runEmulatorCli. */
export interface EmulatorCli<P extends { command: { path: string }; body?: Record<string, unknown> | null }> {
  /** The CLI's name, the prefix of its error lines. */
  name: string;
  help(): string;
  usageOf(command: string | undefined): string;
  /** The command's one-line summary, or undefined for an unknown command. */
  summaryOf(command: string): string | undefined;
  /** The command and its body from argv; throws a one-line usage problem. */
  parse(argv: string[]): P;
  /** `serve`: runs an emulator in the foreground (the CLIs that have one). */
  serve?(argv: string[]): Promise<number>;
  /** The call's other settings (read after parsing: the emulator's URL may come from the environment). */
  call(): Omit<EmulatorCall, 'path' | 'body'>;
}

/**
 * An emulator CLI's dispatch: no command prints the help on stderr and exits 2 (a script that forgot its
 * arguments must not look successful); `help`/`--help`/`-h` print the help or a command's usage; `serve`
 * when the CLI has one; otherwise one control call (callEmulator). A usage problem is one stderr line, what
 * is wrong then the command's usage, exit 2.
 */
export async function runEmulatorCli<P extends { command: { path: string }; body?: Record<string, unknown> | null }>(
  argv: string[],
  cli: EmulatorCli<P>,
): Promise<number> {
  if (argv.length === 0) {
    process.stderr.write(cli.help());
    return 2;
  }
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    const name = argv[0] === 'help' ? argv[1] : argv[0];
    const summary = name === undefined ? undefined : cli.summaryOf(name);
    process.stdout.write(summary !== undefined ? `${cli.usageOf(name)}\n\n${summary}\n` : cli.help());
    return 0;
  }
  if (argv[0] === 'serve' && cli.serve) return cli.serve(argv.slice(1));
  let parsed: P;
  try {
    parsed = cli.parse(argv);
  } catch (err) {
    process.stderr.write(`${cli.name}: ${err instanceof Error ? err.message : String(err)}; ${cli.usageOf(argv[0])}\n`);
    return 2;
  }
  return callEmulator({ ...cli.call(), path: parsed.command.path, ...(parsed.body ? { body: parsed.body } : {}) });
}

/** Runs a CLI's main with the process's arguments: its exit code, or 1 with the error's first line. */
export function runCliMain(name: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${name}: ${String(err).split('\n')[0]}\n`);
      process.exitCode = 1;
    },
  );
}
