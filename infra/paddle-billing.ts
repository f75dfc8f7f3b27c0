// Paddle Billing emulator CLI (`npx tsx infra/paddle-billing.ts <command>`): plays the customer and
// Paddle's billing against the emulator (shared/providers/paddle-billing/emulator) through its /_emulator
// control endpoints. The notifications it triggers go, signed, to the emulator's webhook URL exactly as in
// the tests; stdout is the JSON result. Exit 2 on bad arguments, 1 when the emulator refuses or is down.
// `serve [--port 8026] [--webhook-url URL] [--api-key K] [--webhook-secret S]` runs an emulator on its own
// (until Ctrl-C) and prints its URL, API key and destination secret (emulator values, not real secrets).
import { parseArgs } from 'node:util';
import { startPaddleBillingEmulator } from '../shared/providers/paddle-billing/emulator/server';
import { callEmulator } from './emulator-cli';

const USAGE =
  'usage: paddle-billing checkout --email <email> [--price pri_…] [--currency USD] [--quantity 1]' +
  ' [--custom-data \'{"refloop_referral_id":"…"}\'] [--discount-code CODE]' +
  ' | renew --subscription sub_… | fail --subscription sub_… | cancel --subscription sub_…' +
  ' | refund --transaction txn_… [--amount <minor units>] | approve --adjustment adj_… | chargeback --transaction txn_… | state' +
  ' | serve [--port 8026] [--webhook-url URL] [--api-key K] [--webhook-secret S]';
const DEFAULT_URL = 'http://127.0.0.1:8026';
// Webhook deliveries happen inside the control call, each with a 5 s timeout.
const TIMEOUT_MS = 60_000;

class UsageError extends Error {}

type Values = Record<string, string>;

interface Command {
  flags: string[];
  required: string[];
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
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) throw new UsageError(`--${flag} must be a positive integer, got "${value}"`);
  return Number(value);
}

const by = (flag: string, prefix: string, path: string, key: string): Command => ({
  flags: [flag],
  required: [flag],
  path,
  body: (v) => ({ [key]: paddleId(flag, prefix, v[flag]) }),
});

const commands: Record<string, Command> = {
  checkout: {
    flags: ['email', 'price', 'currency', 'quantity', 'custom-data', 'discount-code'],
    required: ['email'],
    path: 'checkout',
    body(v) {
      if (!/^[^@\s]+@[^@\s]+$/.test(v.email ?? '')) throw new UsageError(`--email must be an email address, got "${v.email ?? ''}"`);
      if (v.currency !== undefined && !/^[A-Z]{3}$/.test(v.currency)) throw new UsageError(`--currency must be a three-letter code like USD, got "${v.currency}"`);
      let customData: unknown;
      if (v['custom-data'] !== undefined) {
        try {
          customData = JSON.parse(v['custom-data']);
        } catch {
          throw new UsageError('--custom-data must be a JSON object');
        }
        if (typeof customData !== 'object' || customData === null || Array.isArray(customData)) throw new UsageError('--custom-data must be a JSON object');
      }
      if (v['discount-code'] !== undefined && !/^[A-Za-z0-9]{1,32}$/.test(v['discount-code'])) throw new UsageError('--discount-code must be 1-32 letters and digits');
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
  renew: by('subscription', 'sub', 'renew', 'subscription_id'),
  fail: by('subscription', 'sub', 'fail', 'subscription_id'),
  cancel: by('subscription', 'sub', 'cancel', 'subscription_id'),
  refund: {
    flags: ['transaction', 'amount'],
    required: ['transaction'],
    path: 'refund',
    body: (v) => ({
      transaction_id: paddleId('transaction', 'txn', v.transaction),
      ...(v.amount !== undefined ? { amount: positiveInt('amount', v.amount) } : {}),
    }),
  },
  approve: by('adjustment', 'adj', 'approve', 'adjustment_id'),
  chargeback: by('transaction', 'txn', 'chargeback', 'transaction_id'),
  state: { flags: [], required: [], path: 'state' },
};

function parse(argv: string[]): { command: Command; body?: Record<string, unknown> } {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (!command) throw new UsageError(name === undefined ? 'a command is required' : `unknown command "${name}"`);
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
    if (v['webhook-url'] !== undefined && !/^https?:\/\//.test(v['webhook-url'])) throw new UsageError('--webhook-url must be an http(s) URL');
  } catch (err) {
    process.stderr.write(`paddle-billing: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}; ${USAGE}\n`);
    return 2;
  }
  const emulator = await startPaddleBillingEmulator({
    port: Number(v.port ?? new URL(DEFAULT_URL).port),
    webhookUrl: v['webhook-url'] ?? null,
    ...(v['api-key'] !== undefined ? { apiKey: v['api-key'] } : {}),
    ...(v['webhook-secret'] !== undefined ? { webhookSecret: v['webhook-secret'] } : {}),
  });
  process.stdout.write(JSON.stringify({ api_url: emulator.url, api_key: emulator.apiKey, webhook_secret: emulator.webhookSecret, webhook_url: v['webhook-url'] ?? null }) + '\n');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await emulator.stop();
  return 0;
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (argv[0] === 'serve') return serve(argv.slice(1));
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`paddle-billing: ${err instanceof Error ? err.message : String(err)}; ${USAGE}\n`);
    return 2;
  }
  const base = (process.env.PADDLE_BILLING_EMULATOR_URL || DEFAULT_URL).replace(/\/+$/, '');
  return callEmulator({ cli: 'paddle-billing', label: 'Paddle Billing emulator', base, path: parsed.command.path, ...(parsed.body ? { body: parsed.body } : {}), timeoutMs: TIMEOUT_MS, hint: 'is it running?' });
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`paddle-billing: ${String(err).split('\n')[0]}\n`);
    process.exitCode = 1;
  },
);
