// What the payout rails' emulator CLIs (infra/paypal.ts, infra/wise.ts) share: a table of commands, each
// one call to the emulator's /_emulator/ control endpoint (infra/emulator-cli.ts), with the help built as
// `admin`'s, `paddle`'s and `stripe`'s are (infra/cli-help.ts). Exit codes: 0 done (and help); 1 the emulator
// refused or is unreachable; 2 bad arguments (and no command, the help then on stderr).
import { parseArgs } from 'node:util';
import { formatHelp, usageOf as usage } from './cli-help';
import { callEmulator } from './emulator-cli';

/** Bad arguments: exit code 2. */
export class UsageError extends Error {}

export type Values = Record<string, string>;

export interface RailCommand {
  /** The flags as the help shows them. */
  args: string;
  /** One short line for the help. */
  summary: string;
  flags: string[];
  required: string[];
  /** Words after the command (`sca on`): how many it takes; default none. */
  positionals?: number;
  /** GET /_emulator/<path> without a body, or POST with the JSON body `body(values, positionals)` builds. */
  path: string;
  body?(values: Values, positionals: string[]): Record<string, unknown>;
}

export interface RailCli {
  /** The npm script's name ("paypal"), the prefix of its error lines. */
  program: string;
  /** How the emulator is called in messages ("PayPal Payouts emulator"). */
  label: string;
  intro: string;
  commands: Record<string, RailCommand>;
  notes: string[];
  /** The emulator's base URL: its *_EMULATOR_URL, else *_PORT, else the running `npm start`'s, else the default port. */
  baseUrl(): string;
  /** Appended to "not reachable": what to start. */
  hint: string;
}

// Webhook deliveries happen inside the control call, each with its own timeout.
const TIMEOUT_MS = 60_000;

function parse(cli: RailCli, argv: string[]): { command: RailCommand; body?: Record<string, unknown> } {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : cli.commands[name];
  if (!command) throw new UsageError(`unknown command "${name ?? ''}"`);
  let values: Values;
  let positionals: string[];
  try {
    const options = Object.fromEntries(command.flags.map((f) => [f, { type: 'string' as const }]));
    const parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: (command.positionals ?? 0) > 0 });
    values = parsed.values as Values;
    positionals = parsed.positionals;
  } catch (err) {
    throw new UsageError((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'bad arguments');
  }
  if (positionals.length !== (command.positionals ?? 0)) throw new UsageError(`${name} takes ${command.args}`);
  for (const flag of command.required) if (values[flag] === undefined) throw new UsageError(`--${flag} is required`);
  return command.body ? { command, body: command.body(values, positionals) } : { command };
}

export async function runRailCli(cli: RailCli, argv: string[]): Promise<number> {
  const help = () => formatHelp(cli.program, cli.intro, cli.commands, cli.notes);
  const usageOf = (name: string | undefined) => usage(cli.program, cli.commands, name);
  if (argv.length === 0) {
    process.stderr.write(help());
    return 2;
  }
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    const name = argv[0] === 'help' ? argv[1] : argv[0];
    const command = name === undefined ? undefined : cli.commands[name];
    process.stdout.write(command ? `${usageOf(name)}\n\n${command.summary}\n` : help());
    return 0;
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(cli, argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    // One line: what is wrong, then the command's usage.
    process.stderr.write(`${cli.program}: ${err.message}; ${usageOf(argv[0])}\n`);
    return 2;
  }
  return callEmulator({
    cli: cli.program,
    label: cli.label,
    base: cli.baseUrl().replace(/\/+$/, ''),
    path: parsed.command.path,
    ...(parsed.body ? { body: parsed.body } : {}),
    timeoutMs: TIMEOUT_MS,
    hint: cli.hint,
  });
}

/** Runs the CLI as a script: its exit code, or 1 and one stderr line when something unexpected throws. */
export function mainOf(cli: RailCli): void {
  runRailCli(cli, process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`${cli.program}: ${String(err).split('\n')[0]}\n`);
      process.exitCode = 1;
    },
  );
}
