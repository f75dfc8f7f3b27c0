// Stripe emulator CLI (`npm run --silent stripe -- <command>`): plays the customer and Stripe Billing against
// the emulator (infra/local/emulators/stripe) through its /_emulator control endpoints. The events it
// triggers go, signed (`Stripe-Signature`, whsec_ secret), to the emulator's webhook URL exactly as in the
// tests; stdout is the JSON result. Exit 2 on bad arguments, 1 when the emulator refuses or is down, or when
// the service answered an event 404 (the demo account is on another provider: a one-line hint names
// DEMO_PROVIDER). `serve` runs an emulator on its own (until Ctrl-C) and prints its URL, key and signing
// secret (emulator values, not real secrets). The help has the structure of `admin`'s and `paddle`'s
// (infra/cli-help.ts).
import { parseArgs } from 'node:util';
import { startStripeEmulator } from './local/emulators/stripe';
import { formatHelp, usageOf as usage } from './cli-help';
import { runCliMain, runEmulatorCli } from './emulator-cli';
import { localUrl } from './local/runtime-file';

/** `npm start`'s Stripe emulator: the port it was given (STRIPE_PORT), else 12111. */
const defaultPort = () => Number(process.env.STRIPE_PORT || '12111');
/** STRIPE_PORT, else the running `npm start`'s emulator (DATA_DIR/runtime.json), else port 12111. */
const defaultUrl = () => localUrl('STRIPE_PORT', (f) => f.stripe_url, 12111);
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

function stripeId(flag: string, prefix: string, value: string | undefined): string {
  if (value === undefined || !new RegExp(`^${prefix}_[A-Za-z0-9_]{1,250}$`).test(value)) {
    throw new UsageError(`--${flag} must be a Stripe id like ${prefix}_1Pz…, got "${value ?? ''}"`);
  }
  return value;
}

function positiveInt(flag: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw new UsageError(`--${flag} must be a positive integer, got "${value}"`);
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
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    !Object.values(parsed).every((v) => typeof v === 'string')
  ) {
    throw new UsageError(`--${flag} must be a JSON object of strings`);
  }
  return parsed as Record<string, string>;
}

/** Exactly one of --invoice / --charge. */
function chargeTarget(v: Values): Record<string, string> {
  if ((v.invoice === undefined) === (v.charge === undefined)) throw new UsageError('give exactly one of --invoice in_… or --charge ch_…');
  return v.invoice !== undefined ? { invoice_id: stripeId('invoice', 'in', v.invoice) } : { charge_id: stripeId('charge', 'ch', v.charge) };
}

const bySubscription = (path: string, summary: string): Command => ({
  args: '--subscription sub_…',
  summary,
  flags: ['subscription'],
  required: ['subscription'],
  path,
  body: (v) => ({ subscription_id: stripeId('subscription', 'sub', v.subscription) }),
});

const commands: Record<string, Command> = {
  checkout: {
    args: '--email <email> [--price price_…] [--currency usd] [--quantity 1] [--client-reference-id <referral id>] [--metadata \'{…}\'] [--subscription-metadata \'{"refloop_referral_id":"…"}\'] [--promotion-code CODE]',
    summary:
      'A customer completes a Checkout Session: the subscription and its first paid invoice (checkout.session.completed, invoice.paid, …).',
    flags: ['email', 'price', 'currency', 'quantity', 'client-reference-id', 'metadata', 'subscription-metadata', 'promotion-code'],
    required: ['email'],
    path: 'checkout',
    body(v) {
      if (!/^[^@\s]+@[^@\s]+$/.test(v.email ?? '')) throw new UsageError(`--email must be an email address, got "${v.email ?? ''}"`);
      if (v.currency !== undefined && !/^[A-Za-z]{3}$/.test(v.currency))
        throw new UsageError(`--currency must be a three-letter code like usd, got "${v.currency}"`);
      const ref = v['client-reference-id'];
      if (ref !== undefined && (ref === '' || ref.length > 200)) throw new UsageError('--client-reference-id must be 1 to 200 characters');
      if (v['promotion-code'] !== undefined && !/^[A-Za-z0-9-]{1,500}$/.test(v['promotion-code']))
        throw new UsageError('--promotion-code must be letters, digits and -');
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
  renew: bySubscription('renew', 'The next invoice of a subscription is paid (invoice.paid).'),
  fail: bySubscription('fail', 'The next invoice fails (invoice.payment_failed, customer.subscription.updated past_due).'),
  cancel: bySubscription('cancel', 'Cancel a subscription (customer.subscription.deleted).'),
  refund: {
    args: '(--invoice in_… | --charge ch_…) [--amount <minor units>]',
    summary: 'Refund a charge, in full or in part (charge.refunded).',
    flags: ['invoice', 'charge', 'amount'],
    required: [],
    path: 'refund',
    body: (v) => ({ ...chargeTarget(v), ...(v.amount !== undefined ? { amount: positiveInt('amount', v.amount) } : {}) }),
  },
  dispute: {
    args: '(--invoice in_… | --charge ch_…)',
    summary: 'A dispute on a charge (charge.dispute.created).',
    flags: ['invoice', 'charge'],
    required: [],
    path: 'dispute',
    body: chargeTarget,
  },
  // Stripe Connect (the Stripe payout rail): the emulator's /_emulator/connect/ control endpoints.
  'connect-onboard': {
    args: '--account acct_… [--outcome complete|incomplete]',
    summary: "Finish a connected account's onboarding without the page (account.updated; payouts enabled when complete).",
    flags: ['account', 'outcome'],
    required: ['account'],
    path: 'connect/onboard-account',
    body(v) {
      if (v.outcome !== undefined && v.outcome !== 'complete' && v.outcome !== 'incomplete')
        throw new UsageError(`--outcome must be complete or incomplete, got "${v.outcome}"`);
      return { account_id: stripeId('account', 'acct', v.account), ...(v.outcome !== undefined ? { outcome: v.outcome } : {}) };
    },
  },
  'connect-balance': {
    args: '--amount <minor units> [--currency usd]',
    summary: "Set the platform's available balance (0 makes the next transfers fail with balance_insufficient).",
    flags: ['amount', 'currency'],
    required: ['amount'],
    path: 'connect/balance',
    body(v) {
      if (!/^\d+$/.test(v.amount ?? '') || !Number.isSafeInteger(Number(v.amount)))
        throw new UsageError(`--amount must be a non-negative integer (minor units), got "${v.amount ?? ''}"`);
      if (v.currency !== undefined && !/^[A-Za-z]{3}$/.test(v.currency))
        throw new UsageError(`--currency must be a three-letter code like usd, got "${v.currency}"`);
      return { currency: (v.currency ?? 'usd').toLowerCase(), amount: Number(v.amount) };
    },
  },
  'connect-reverse': {
    args: '--transfer tr_… [--amount <minor units>]',
    summary: 'Reverse a transfer, all that is left or part of it (transfer.reversed).',
    flags: ['transfer', 'amount'],
    required: ['transfer'],
    path: 'connect/reverse',
    body: (v) => ({
      transfer_id: stripeId('transfer', 'tr', v.transfer),
      ...(v.amount !== undefined ? { amount: positiveInt('amount', v.amount) } : {}),
    }),
  },
  'connect-state': {
    args: '',
    summary: "The Connect side's balance, connected accounts and transfers, as JSON.",
    flags: [],
    required: [],
    path: 'connect/state',
  },
  state: {
    args: '',
    summary: "The emulator's customers, subscriptions, invoices and charges, as JSON.",
    flags: [],
    required: [],
    path: 'state',
  },
  serve: {
    args: '[--port 12111] [--webhook-url <url>] [--secret-key sk_test_…] [--webhook-secret whsec_…]',
    summary: 'Run an emulator on its own until Ctrl-C; prints its URL, secret key and signing secret.',
    flags: ['port', 'webhook-url', 'secret-key', 'webhook-secret'],
    required: [],
    path: '',
  },
};

const HELP_NOTES = [
  'Run `npm run --silent stripe -- <command> --help` for one command.',
  '',
  "--client-reference-id and --subscription-metadata are what the app's Checkout Session was created with",
  '(client_reference_id, subscription_data.metadata): the events then convert that referral.',
  'The demo account must be on Stripe (`DEMO_PROVIDER=stripe npm start`).',
  'The connect-* commands move the Connect side (the Stripe payout rail) on the same emulator.',
  '',
  'environment:',
  '  STRIPE_EMULATOR_URL  the emulator (default http://127.0.0.1:$STRIPE_PORT or 12111, the one `npm start` runs)',
  '',
  "Prints the emulator's JSON answer on stdout. Exit codes: 0 done (and help); 1 the emulator refused or is unreachable, or the service",
  'answered an event 404 (the demo account is on another provider: a hint names DEMO_PROVIDER); 2 bad arguments (and no command).',
];

const help = () =>
  formatHelp(
    'stripe',
    "Plays the customer and Stripe Billing against the Stripe emulator `npm start` runs; its events reach the service's webhook.",
    commands,
    HELP_NOTES,
  );

/** The usage of one command, or a pointer to the help when there is none. */
const usageOf = (name: string | undefined): string => usage('stripe', commands, name);

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
    const options = Object.fromEntries(
      ['port', 'webhook-url', 'secret-key', 'webhook-secret'].map((f) => [f, { type: 'string' as const }]),
    );
    v = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Values;
    if (v.port !== undefined) positiveInt('port', v.port);
    if (v['webhook-url'] !== undefined && !/^https?:\/\//.test(v['webhook-url']))
      throw new UsageError('--webhook-url must be an http(s) URL');
    if (v['secret-key'] !== undefined && !/^(sk|rk)_test_[A-Za-z0-9]{8,}$/.test(v['secret-key']))
      throw new UsageError('--secret-key must look like sk_test_…');
    if (v['webhook-secret'] !== undefined && !/^whsec_[A-Za-z0-9]{8,}$/.test(v['webhook-secret']))
      throw new UsageError('--webhook-secret must look like whsec_…');
  } catch (err) {
    process.stderr.write(`stripe: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}; ${usageOf('serve')}\n`);
    return 2;
  }
  const emulator = await startStripeEmulator({
    port: v.port !== undefined ? Number(v.port) : defaultPort(),
    webhookUrl: v['webhook-url'] ?? null,
    ...(v['secret-key'] !== undefined ? { secretKey: v['secret-key'] } : {}),
    ...(v['webhook-secret'] !== undefined ? { webhookSecret: v['webhook-secret'] } : {}),
  });
  process.stdout.write(
    `${JSON.stringify({
      api_url: emulator.url,
      secret_key: emulator.secretKey,
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
    name: 'stripe',
    help,
    usageOf,
    summaryOf: (command) => commands[command]?.summary,
    parse,
    serve,
    call: () => ({
      cli: 'stripe',
      label: 'Stripe emulator',
      base: (process.env.STRIPE_EMULATOR_URL || defaultUrl()).replace(/\/+$/, ''),
      timeoutMs: TIMEOUT_MS,
      hint: 'is `npm start` running (or `npm run --silent stripe -- serve`)? STRIPE_EMULATOR_URL or STRIPE_PORT sets its address',
      provider: 'stripe',
    }),
  });
}

// Run as a program (`npm run stripe`); imported, the module only exports main.
if (require.main === module) runCliMain('stripe', main);
