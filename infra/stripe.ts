// Stripe emulator CLI (`npx tsx infra/stripe.ts <command>`): plays the customer and Stripe Billing against
// the emulator (shared/providers/stripe/emulator) through its /_emulator control endpoints. The events it
// triggers go, signed (`Stripe-Signature`, whsec_ secret), to the emulator's webhook URL exactly as in the
// tests; stdout is the JSON result. Exit 2 on bad arguments, 1 when the emulator refuses or is down.
// `serve [--port 12111] [--webhook-url URL] [--secret-key K] [--webhook-secret S]` runs an emulator on its
// own (until Ctrl-C) and prints its URL, key and signing secret (emulator values, not real secrets).
import { parseArgs } from 'node:util';
import { startStripeEmulator } from '../shared/providers/stripe/emulator/server';
import { callEmulator } from './emulator-cli';

const USAGE =
  'usage: stripe checkout --email <email> [--price price_…] [--currency usd] [--quantity 1]' +
  ' [--client-reference-id <referral id>] [--subscription-metadata \'{"refloop_referral_id":"…"}\'] [--promotion-code CODE]' +
  ' | renew --subscription sub_… | fail --subscription sub_… | cancel --subscription sub_…' +
  ' | refund (--invoice in_… | --charge ch_…) [--amount <minor units>] | dispute (--invoice in_… | --charge ch_…) | state' +
  ' | serve [--port 12111] [--webhook-url URL] [--secret-key K] [--webhook-secret S]';
const DEFAULT_URL = 'http://127.0.0.1:12111';
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

function stripeId(flag: string, prefix: string, value: string | undefined): string {
  if (value === undefined || !new RegExp(`^${prefix}_[A-Za-z0-9_]{1,250}$`).test(value)) {
    throw new UsageError(`--${flag} must be a Stripe id like ${prefix}_1Pz…, got "${value ?? ''}"`);
  }
  return value;
}

function positiveInt(flag: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) throw new UsageError(`--${flag} must be a positive integer, got "${value}"`);
  return Number(value);
}

function metadataFlag(flag: string, value: string | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UsageError(`--${flag} must be a JSON object of strings`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
    throw new UsageError(`--${flag} must be a JSON object of strings`);
  }
  return parsed as Record<string, string>;
}

/** Exactly one of --invoice / --charge. */
function chargeTarget(v: Values): Record<string, string> {
  if ((v.invoice === undefined) === (v.charge === undefined)) throw new UsageError('give exactly one of --invoice in_… or --charge ch_…');
  return v.invoice !== undefined ? { invoice_id: stripeId('invoice', 'in', v.invoice) } : { charge_id: stripeId('charge', 'ch', v.charge) };
}

const bySubscription = (path: string): Command => ({
  flags: ['subscription'],
  required: ['subscription'],
  path,
  body: (v) => ({ subscription_id: stripeId('subscription', 'sub', v.subscription) }),
});

const commands: Record<string, Command> = {
  checkout: {
    flags: ['email', 'price', 'currency', 'quantity', 'client-reference-id', 'metadata', 'subscription-metadata', 'promotion-code'],
    required: ['email'],
    path: 'checkout',
    body(v) {
      if (!/^[^@\s]+@[^@\s]+$/.test(v.email ?? '')) throw new UsageError(`--email must be an email address, got "${v.email ?? ''}"`);
      if (v.currency !== undefined && !/^[A-Za-z]{3}$/.test(v.currency)) throw new UsageError(`--currency must be a three-letter code like usd, got "${v.currency}"`);
      const ref = v['client-reference-id'];
      if (ref !== undefined && (ref === '' || ref.length > 200)) throw new UsageError('--client-reference-id must be 1 to 200 characters');
      if (v['promotion-code'] !== undefined && !/^[A-Za-z0-9-]{1,500}$/.test(v['promotion-code'])) throw new UsageError('--promotion-code must be letters, digits and -');
      const metadata = metadataFlag('metadata', v.metadata);
      const subscriptionMetadata = metadataFlag('subscription-metadata', v['subscription-metadata']);
      return {
        email: v.email,
        ...(v.price !== undefined ? { price_id: stripeId('price', 'price', v.price) } : {}),
        ...(v.currency !== undefined ? { currency: v.currency.toLowerCase() } : {}),
        ...(v.quantity !== undefined ? { quantity: positiveInt('quantity', v.quantity) } : {}),
        // What the app's Checkout Session was created with: client_reference_id and subscription_data.metadata.
        ...(ref !== undefined ? { client_reference_id: ref } : {}),
        ...(metadata ? { metadata } : {}),
        ...(subscriptionMetadata ? { subscription_metadata: subscriptionMetadata } : {}),
        ...(v['promotion-code'] !== undefined ? { promotion_code: v['promotion-code'] } : {}),
      };
    },
  },
  renew: bySubscription('renew'),
  fail: bySubscription('fail'),
  cancel: bySubscription('cancel'),
  refund: {
    flags: ['invoice', 'charge', 'amount'],
    required: [],
    path: 'refund',
    body: (v) => ({ ...chargeTarget(v), ...(v.amount !== undefined ? { amount: positiveInt('amount', v.amount) } : {}) }),
  },
  dispute: { flags: ['invoice', 'charge'], required: [], path: 'dispute', body: chargeTarget },
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
    const options = Object.fromEntries(['port', 'webhook-url', 'secret-key', 'webhook-secret'].map((f) => [f, { type: 'string' as const }]));
    v = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Values;
    if (v.port !== undefined) positiveInt('port', v.port);
    if (v['webhook-url'] !== undefined && !/^https?:\/\//.test(v['webhook-url'])) throw new UsageError('--webhook-url must be an http(s) URL');
    if (v['secret-key'] !== undefined && !/^(sk|rk)_test_[A-Za-z0-9]{8,}$/.test(v['secret-key'])) throw new UsageError('--secret-key must look like sk_test_…');
    if (v['webhook-secret'] !== undefined && !/^whsec_[A-Za-z0-9]{8,}$/.test(v['webhook-secret'])) throw new UsageError('--webhook-secret must look like whsec_…');
  } catch (err) {
    process.stderr.write(`stripe: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}; ${USAGE}\n`);
    return 2;
  }
  const emulator = await startStripeEmulator({
    port: Number(v.port ?? new URL(DEFAULT_URL).port),
    webhookUrl: v['webhook-url'] ?? null,
    ...(v['secret-key'] !== undefined ? { secretKey: v['secret-key'] } : {}),
    ...(v['webhook-secret'] !== undefined ? { webhookSecret: v['webhook-secret'] } : {}),
  });
  process.stdout.write(JSON.stringify({ api_url: emulator.url, secret_key: emulator.secretKey, webhook_secret: emulator.webhookSecret, webhook_url: v['webhook-url'] ?? null }) + '\n');
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
    process.stderr.write(`stripe: ${err instanceof Error ? err.message : String(err)}; ${USAGE}\n`);
    return 2;
  }
  const base = (process.env.STRIPE_EMULATOR_URL || DEFAULT_URL).replace(/\/+$/, '');
  return callEmulator({ cli: 'stripe', label: 'Stripe emulator', base, path: parsed.command.path, ...(parsed.body ? { body: parsed.body } : {}), timeoutMs: TIMEOUT_MS, hint: 'is it running?' });
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`stripe: ${String(err).split('\n')[0]}\n`);
    process.exitCode = 1;
  },
);
