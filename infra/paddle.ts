// Paddle emulator CLI (`npm run --silent paddle -- <command>`): plays the customer and Paddle's billing
// against the emulator `npm start` runs, through its /_emulator control endpoints. The alerts it
// triggers go to the service's webhook exactly as in the tests; stdout is the JSON result.
import { parseArgs } from 'node:util';
import { formatHelp, usageOf as usage } from './cli-help';
import { runCliMain, runEmulatorCli } from './emulator-cli';
import { localUrl } from './local/runtime-file';

/** `npm start`'s Paddle emulator: PADDLE_PORT, else the running service's (DATA_DIR/runtime.json), else port 8025. */
const defaultUrl = () => localUrl('PADDLE_PORT', (f) => f.paddle_url, 8025);
// Webhook deliveries happen inside the control call, each with a 5 s timeout.
const TIMEOUT_MS = 60_000;

/** Bad arguments: exit code 2. */
class UsageError extends Error {}

type Values = Record<string, string>;

interface Command {
  /** The flags as the help shows them. */
  args: string;
  /** One short line for the help. */
  summary: string;
  flags: string[];
  required: string[];
  /** GET /_emulator/<path> without a body, or POST with the JSON body `body(values)` builds. */
  path: string;
  body?(values: Values): Record<string, unknown>;
}

function int(flag: string, value: string | undefined, min = 1): number {
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${flag} must be an integer${min > 0 ? ` >= ${min}` : ''}, got "${value ?? ''}"`);
  }
  return Number(value);
}

const bySubscription = (path: string, summary: string): Command => ({
  args: '--subscription <id>',
  summary,
  flags: ['subscription'],
  required: ['subscription'],
  path,
  body: (v) => ({ subscription_id: int('subscription', v.subscription) }),
});

const commands: Record<string, Command> = {
  checkout: {
    args: '--plan <id> --email <email> [--currency USD] [--quantity 1] [--coupon <code>] [--passthrough <string>]',
    summary:
      'A customer buys a plan: the subscription and its first payment (alerts subscription_created, subscription_payment_succeeded).',
    flags: ['plan', 'email', 'currency', 'quantity', 'passthrough', 'coupon'],
    required: ['plan', 'email'],
    path: 'checkout',
    body(v) {
      if (!/^[^@\s]+@[^@\s]+$/.test(v.email ?? '')) throw new UsageError(`--email must be an email address, got "${v.email ?? ''}"`);
      if (v.currency !== undefined && !/^[A-Z]{3}$/.test(v.currency)) {
        throw new UsageError(`--currency must be a three-letter code like USD, got "${v.currency}"`);
      }
      return {
        plan_id: int('plan', v.plan),
        email: v.email,
        ...(v.currency !== undefined ? { currency: v.currency } : {}),
        ...(v.quantity !== undefined ? { quantity: int('quantity', v.quantity) } : {}),
        // What Paddle Checkout was given as `passthrough` (e.g. the browser script's refloop.passthrough()).
        ...(v.passthrough !== undefined ? { passthrough: v.passthrough } : {}),
        ...(v.coupon !== undefined ? { coupon: v.coupon } : {}),
      };
    },
  },
  renew: bySubscription('renew', 'The next payment of a subscription succeeds (subscription_payment_succeeded).'),
  fail: bySubscription('fail', 'The next payment of a subscription fails (subscription_payment_failed, status past_due).'),
  cancel: bySubscription('cancel', 'Cancel a subscription (subscription_cancelled).'),
  refund: {
    args: '--payment <id> [--amount 5.00]',
    summary: 'Refund a payment, in full or (with --amount) in part (subscription_payment_refunded).',
    flags: ['payment', 'amount'],
    required: ['payment'],
    path: 'refund',
    body(v) {
      if (v.amount !== undefined && !/^\d+(\.\d{1,2})?$/.test(v.amount)) {
        throw new UsageError(`--amount must be a decimal amount like 5.00, got "${v.amount}"`);
      }
      return { payment_id: int('payment', v.payment), ...(v.amount !== undefined ? { amount: v.amount } : {}) };
    },
  },
  state: {
    args: '',
    summary: "The emulator's plans, subscriptions, payments and modifiers, as JSON.",
    flags: [],
    required: [],
    path: 'state',
  },
};

const HELP_NOTES = [
  'Run `npm run --silent paddle -- <command> --help` for one command.',
  '',
  '--passthrough is what Paddle Checkout was given as `passthrough`, e.g. \'{"refloop_referral_id": "<id>"}\'',
  "(what the browser script's refloop.passthrough() returns): the alert then converts that referral.",
  '',
  'environment:',
  '  PADDLE_EMULATOR_URL  the emulator (default http://127.0.0.1:$PADDLE_PORT or 8025, the one `npm start` runs)',
  '',
  "Prints the emulator's JSON answer on stdout. Exit codes: 0 done (and help); 1 the emulator refused or is unreachable, or the service",
  'answered an alert 404 (the demo account is on another provider: a hint names DEMO_PROVIDER); 2 bad arguments (and no command).',
];

const help = () =>
  formatHelp(
    'paddle',
    "Plays the customer and Paddle's billing against the Paddle emulator `npm start` runs; its alerts reach the service's webhook.",
    commands,
    HELP_NOTES,
  );

/** The usage of one command, or a pointer to the help when there is none. */
const usageOf = (name: string | undefined): string => usage('paddle', commands, name);

function parse(argv: string[]): { command: Command; body?: Record<string, unknown> } {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (!command) throw new UsageError(`unknown command "${name ?? ''}"`);
  let values: Values;
  try {
    const options = Object.fromEntries(command.flags.map((f) => [f, { type: 'string' as const }]));
    values = parseArgs({ args: rest, options, strict: true, allowPositionals: false }).values as Values;
  } catch (err) {
    // parseArgs messages can span lines; the first one says what is wrong.
    throw new UsageError((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'bad arguments');
  }
  for (const flag of command.required) {
    if (values[flag] === undefined) throw new UsageError(`--${flag} is required`);
  }
  return command.body ? { command, body: command.body(values) } : { command };
}

/** The CLI on `argv`: its exit code (the tests run it in their process, test/support/cli-in-process.ts). */
export function main(argv: string[]): Promise<number> {
  return runEmulatorCli(argv, {
    name: 'paddle',
    help,
    usageOf,
    summaryOf: (command) => commands[command]?.summary,
    parse,
    call: () => ({
      cli: 'paddle',
      label: 'Paddle emulator',
      base: (process.env.PADDLE_EMULATOR_URL || defaultUrl()).replace(/\/+$/, ''),
      timeoutMs: TIMEOUT_MS,
      hint: 'is `npm start` running? PADDLE_EMULATOR_URL or PADDLE_PORT sets its address',
      provider: 'paddle-classic',
    }),
  });
}

// Run as a program (`npm run paddle`); imported, the module only exports main.
if (require.main === module) runCliMain('paddle', main);
