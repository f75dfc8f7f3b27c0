// Paddle Billing emulator CLI (`npm run --silent paddle-billing -- <command>`): plays the customer and
// Paddle's billing against the emulator (infra/local/emulators/paddle-billing) through its /_emulator
// control endpoints. The notifications it triggers go, signed, to the emulator's webhook URL exactly as in
// the tests; stdout is the JSON result. Exit 2 on bad arguments, 1 when the emulator refuses or is down, or
// when the service answered a notification 404 (the demo account is on another provider: a one-line hint
// names DEMO_PROVIDER). `serve` runs an emulator on its own (until Ctrl-C) and prints its URL, API key and
// destination secret (emulator values, not real secrets). The help has the structure of `admin`'s and
// `paddle`'s (infra/cli-help.ts).
import { parseArgs } from 'node:util';
import { startPaddleBillingEmulator } from './local/emulators/paddle-billing';
import { formatHelp, usageOf as usage } from './cli-help';
import { runCliMain, runEmulatorCli } from './emulator-cli';
import { localUrl } from './local/runtime-file';

/** `npm start`'s Paddle Billing emulator: the port it was given (PADDLE_BILLING_PORT), else 8026. */
const defaultPort = () => Number(process.env.PADDLE_BILLING_PORT || '8026');
/** PADDLE_BILLING_PORT, else the running `npm start`'s emulator (DATA_DIR/runtime.json), else port 8026. */
const defaultUrl = () => localUrl('PADDLE_BILLING_PORT', (f) => f.paddle_billing_url, 8026);
// Webhook deliveries happen inside the control call, each with a 5 s timeout.
const TIMEOUT_MS = 60_000;

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

function paddleId(flag: string, prefix: string, value: string | undefined): string {
  if (value === undefined || !new RegExp(`^${prefix}_[a-z0-9]{1,60}$`).test(value)) {
    throw new UsageError(`--${flag} must be a Paddle id like ${prefix}_01h…, got "${value ?? ''}"`);
  }
  return value;
}

function positiveInt(flag: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw new UsageError(`--${flag} must be a positive integer, got "${value}"`);
  return Number(value);
}

const by = (flag: string, prefix: string, path: string, key: string, summary: string): Command => ({
  args: `--${flag} ${prefix}_…`,
  summary,
  flags: [flag],
  required: [flag],
  path,
  body: (v) => ({ [key]: paddleId(flag, prefix, v[flag]) }),
});

const commands: Record<string, Command> = {
  checkout: {
    args: '--email <email> [--price pri_…] [--currency USD] [--quantity 1] [--custom-data \'{"refloop_referral_id":"…"}\'] [--discount-code CODE]',
    summary: 'A customer buys: a subscription and its first transaction, with their notifications.',
    flags: ['email', 'price', 'currency', 'quantity', 'custom-data', 'discount-code'],
    required: ['email'],
    path: 'checkout',
    body(v) {
      if (!/^[^@\s]+@[^@\s]+$/.test(v.email ?? '')) throw new UsageError(`--email must be an email address, got "${v.email ?? ''}"`);
      if (v.currency !== undefined && !/^[A-Z]{3}$/.test(v.currency))
        throw new UsageError(`--currency must be a three-letter code like USD, got "${v.currency}"`);
      let customData: unknown;
      if (v['custom-data'] !== undefined) {
        try {
          customData = JSON.parse(v['custom-data']);
        } catch {
          throw new UsageError('--custom-data must be a JSON object');
        }
        if (typeof customData !== 'object' || customData === null || Array.isArray(customData))
          throw new UsageError('--custom-data must be a JSON object');
      }
      if (v['discount-code'] !== undefined && !/^[A-Za-z0-9]{1,32}$/.test(v['discount-code']))
        throw new UsageError('--discount-code must be 1-32 letters and digits');
      return {
        email: v.email,
        ...(v.price !== undefined ? { price_id: paddleId('price', 'pri', v.price) } : {}),
        ...(v.currency !== undefined ? { currency: v.currency } : {}),
        ...(v.quantity !== undefined ? { quantity: positiveInt('quantity', v.quantity) } : {}),
        // What Paddle.js Checkout.open({customData}) was given (e.g. {"refloop_referral_id": "…"}).
        ...(customData !== undefined ? { custom_data: customData } : {}),
        ...(v['discount-code'] !== undefined ? { discount_code: v['discount-code'] } : {}),
      };
    },
  },
  renew: by(
    'subscription',
    'sub',
    'renew',
    'subscription_id',
    'The next renewal of a subscription is paid (transaction.completed, subscription.updated).',
  ),
  fail: by('subscription', 'sub', 'fail', 'subscription_id', 'The next renewal fails (transaction.payment_failed, subscription.past_due).'),
  cancel: by('subscription', 'sub', 'cancel', 'subscription_id', 'Cancel a subscription (subscription.canceled).'),
  refund: {
    args: '--transaction txn_… [--amount <minor units>]',
    summary: 'Ask for a refund, in full or in part (adjustment.created, pending until approve).',
    flags: ['transaction', 'amount'],
    required: ['transaction'],
    path: 'refund',
    body: (v) => ({
      transaction_id: paddleId('transaction', 'txn', v.transaction),
      ...(v.amount !== undefined ? { amount: positiveInt('amount', v.amount) } : {}),
    }),
  },
  approve: by('adjustment', 'adj', 'approve', 'adjustment_id', 'Approve a pending refund (adjustment.updated).'),
  chargeback: by('transaction', 'txn', 'chargeback', 'transaction_id', 'A chargeback on a transaction (adjustment.created, approved).'),
  state: {
    args: '',
    summary: "The emulator's subscriptions, transactions and adjustments, as JSON.",
    flags: [],
    required: [],
    path: 'state',
  },
  serve: {
    args: '[--port 8026] [--webhook-url <url>] [--api-key <key>] [--webhook-secret <secret>]',
    summary: 'Run an emulator on its own until Ctrl-C; prints its URL, API key and notification secret.',
    flags: ['port', 'webhook-url', 'api-key', 'webhook-secret'],
    required: [],
    path: '',
  },
};

const HELP_NOTES = [
  'Run `npm run --silent paddle-billing -- <command> --help` for one command.',
  '',
  '--custom-data is what Paddle.js Checkout.open({customData}) was given, e.g. \'{"refloop_referral_id": "<id>"}\':',
  'the notification then converts that referral. The demo account must be on Paddle Billing (`DEMO_PROVIDER=paddle-billing npm start`).',
  '',
  'environment:',
  '  PADDLE_BILLING_EMULATOR_URL  the emulator (default http://127.0.0.1:$PADDLE_BILLING_PORT or 8026, the one `npm start` runs)',
  '',
  "Prints the emulator's JSON answer on stdout. Exit codes: 0 done (and help); 1 the emulator refused or is unreachable, or the service",
  'answered a notification 404 (the demo account is on another provider: a hint names DEMO_PROVIDER); 2 bad arguments (and no command).',
];

const help = () =>
  formatHelp(
    'paddle-billing',
    "Plays the customer and Paddle Billing against the Paddle Billing emulator `npm start` runs; its notifications reach the service's webhook.",
    commands,
    HELP_NOTES,
  );

/** The usage of one command, or a pointer to the help when there is none. */
const usageOf = (name: string | undefined): string => usage('paddle-billing', commands, name);

function parse(argv: string[]): { command: Command; body?: Record<string, unknown> } {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (!command) throw new UsageError(`unknown command "${name ?? ''}"`);
  let values: Values;
  try {
    const options = Object.fromEntries(command.flags.map((f) => [f, { type: 'string' as const }]));
    values = parseArgs({ args: rest, options, strict: true, allowPositionals: false }).values as Values;
  } catch (err) {
    throw new UsageError((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'bad arguments');
  }
  for (const flag of command.required) if (values[flag] === undefined) throw new UsageError(`--${flag} is required`);
  return command.body ? { command, body: command.body(values) } : { command };
}

async function serve(argv: string[]): Promise<number> {
  let v: Values;
  try {
    const options = Object.fromEntries(['port', 'webhook-url', 'api-key', 'webhook-secret'].map((f) => [f, { type: 'string' as const }]));
    v = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Values;
    if (v.port !== undefined) positiveInt('port', v.port);
    if (v['webhook-url'] !== undefined && !/^https?:\/\//.test(v['webhook-url']))
      throw new UsageError('--webhook-url must be an http(s) URL');
  } catch (err) {
    process.stderr.write(`paddle-billing: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}; ${usageOf('serve')}\n`);
    return 2;
  }
  const emulator = await startPaddleBillingEmulator({
    port: v.port !== undefined ? Number(v.port) : defaultPort(),
    webhookUrl: v['webhook-url'] ?? null,
    ...(v['api-key'] !== undefined ? { apiKey: v['api-key'] } : {}),
    ...(v['webhook-secret'] !== undefined ? { webhookSecret: v['webhook-secret'] } : {}),
  });
  process.stdout.write(
    `${JSON.stringify({
      api_url: emulator.url,
      api_key: emulator.apiKey,
      webhook_secret: emulator.webhookSecret,
      webhook_url: v['webhook-url'] ?? null,
    })}\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await emulator.stop();
  return 0;
}

/** The CLI on `argv`: its exit code (the tests run it in their process, test/support/cli-in-process.ts). */
export function main(argv: string[]): Promise<number> {
  return runEmulatorCli(argv, {
    name: 'paddle-billing',
    help,
    usageOf,
    summaryOf: (command) => commands[command]?.summary,
    parse,
    serve,
    call: () => ({
      cli: 'paddle-billing',
      label: 'Paddle Billing emulator',
      base: (process.env.PADDLE_BILLING_EMULATOR_URL || defaultUrl()).replace(/\/+$/, ''),
      timeoutMs: TIMEOUT_MS,
      hint: 'is `npm start` running (or `npm run --silent paddle-billing -- serve`)? PADDLE_BILLING_EMULATOR_URL or PADDLE_BILLING_PORT sets its address',
      provider: 'paddle-billing',
    }),
  });
}

// Run as a program (`npm run paddle-billing`); imported, the module only exports main.
if (require.main === module) runCliMain('paddle-billing', main);
