// Chargebee emulator CLI (`npm run --silent chargebee -- <command>`): plays the customer and Chargebee
// Billing against the emulator (infra/local/emulators/chargebee) through its /_emulator control endpoints.
// The events it triggers go, with the webhook's Basic credentials, to the emulator's webhook URL exactly as
// in the tests; stdout is the JSON result. Exit 2 on bad arguments, 1 when the emulator refuses or is
// down, or when the service answered an event 404 (the demo account is on another provider: a one-line
// hint names DEMO_PROVIDER). `serve` runs an emulator on its own (until Ctrl-C) and prints its URL, site,
// API key and webhook credentials (emulator values, not real secrets). The help has the structure of
// `stripe`'s (infra/cli-help.ts).
import { parseArgs } from 'node:util';
import { formatHelp, usageOf as usage } from './cli-help';
import { runCliMain, runEmulatorCli } from './emulator-cli';
import { EMULATOR_PORT, startChargebeeEmulator } from './local/emulators/chargebee';
import { readRuntimeFile } from './local/runtime-file';

/** CHARGEBEE_EMULATOR_URL, else the running `npm start`'s emulator (DATA_DIR/runtime.json), else the default port. */
export function emulatorUrl(): string {
  const fromEnv = process.env.CHARGEBEE_EMULATOR_URL;
  if (fromEnv) return fromEnv.replace(/\/+$/, '');
  const fromFile = readRuntimeFile()?.emulator_urls?.chargebee;
  return (fromFile ?? `http://127.0.0.1:${EMULATOR_PORT}`).replace(/\/+$/, '');
}

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

/** A Chargebee id: letters, digits, `_`, `-`, `.` (what the emulator and Chargebee's own ids use). */
function cbId(flag: string, value: string | undefined): string {
  if (value === undefined || !/^[A-Za-z0-9_.-]{1,100}$/.test(value))
    throw new UsageError(`--${flag} must be a Chargebee id (letters, digits, _ - .), got "${value ?? ''}"`);
  return value;
}

function positiveInt(flag: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw new UsageError(`--${flag} must be a positive integer, got "${value}"`);
  return Number(value);
}

function taxRate(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n >= 100) throw new UsageError(`--tax-percent must be a number from 0 to below 100, got "${value}"`);
  return n / 100;
}

const bySubscription = (path: string, summary: string): Command => ({
  args: '--subscription <subscription_id>',
  summary,
  flags: ['subscription'],
  required: ['subscription'],
  path,
  body: (v) => ({ subscription_id: cbId('subscription', v.subscription) }),
});

const commands: Record<string, Command> = {
  checkout: {
    args: '--email <email> [--customer <id>] [--referral-id <referral id>] [--referral-on customer-cf|customer-meta|subscription-cf] [--coupon CODE] [--item-price pro-USD-monthly] [--tax-percent 20] [--trial-days 14]',
    summary:
      'A customer completes a hosted checkout: the subscription and its first paid invoice (customer_created, subscription_created, payment_succeeded).',
    flags: ['email', 'customer', 'referral-id', 'referral-on', 'coupon', 'item-price', 'tax-percent', 'trial-days'],
    required: ['email'],
    path: 'checkout',
    body(v) {
      if (!/^[^@\s]+@[^@\s]+$/.test(v.email ?? '')) throw new UsageError(`--email must be an email address, got "${v.email ?? ''}"`);
      const on = v['referral-on'];
      if (on !== undefined && !['customer-cf', 'customer-meta', 'subscription-cf'].includes(on))
        throw new UsageError(`--referral-on must be customer-cf, customer-meta or subscription-cf, got "${on}"`);
      if (on !== undefined && v['referral-id'] === undefined) throw new UsageError('--referral-on needs --referral-id');
      const ref = v['referral-id'];
      if (ref !== undefined && (ref === '' || ref.length > 200)) throw new UsageError('--referral-id must be 1 to 200 characters');
      if (v.coupon !== undefined && !/^[A-Za-z0-9_-]{1,50}$/.test(v.coupon))
        throw new UsageError('--coupon must be a coupon id or code (letters, digits, _ and -)');
      return {
        email: v.email,
        ...(v.customer !== undefined ? { customer_id: cbId('customer', v.customer) } : {}),
        // What the app wrote before opening the checkout: the referral id on the customer (a custom field or
        // meta_data) or, with subscription-cf, on the subscription.
        ...(ref !== undefined ? { referral_id: ref } : {}),
        ...(on !== undefined ? { referral_on: on } : {}),
        ...(v.coupon !== undefined ? { coupon_code: v.coupon } : {}),
        ...(v['item-price'] !== undefined ? { item_price_id: cbId('item-price', v['item-price']) } : {}),
        ...(v['tax-percent'] !== undefined ? { tax_rate: taxRate(v['tax-percent']) } : {}),
        ...(v['trial-days'] !== undefined ? { trial_days: positiveInt('trial-days', v['trial-days']) } : {}),
      };
    },
  },
  complete: {
    args: '--hosted-page <hosted_page_id> [--email <email>] [--tax-percent 20]',
    summary: 'The customer completes a hosted page the app opened (checkout_new_for_items): state created -> succeeded.',
    flags: ['hosted-page', 'email', 'tax-percent'],
    required: ['hosted-page'],
    path: 'complete',
    body(v) {
      if (v.email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(v.email))
        throw new UsageError(`--email must be an email address, got "${v.email}"`);
      return {
        hosted_page_id: cbId('hosted-page', v['hosted-page']),
        ...(v.email !== undefined ? { email: v.email } : {}),
        ...(v['tax-percent'] !== undefined ? { tax_rate: taxRate(v['tax-percent']) } : {}),
      };
    },
  },
  renew: bySubscription(
    'renew',
    "The next term is billed and paid, the customer's promotional credits first (subscription_renewed, payment_succeeded).",
  ),
  fail: bySubscription('fail', 'The next term is billed and the payment fails (subscription_renewed, payment_failed: past due).'),
  cancel: bySubscription('cancel', 'Cancel a subscription now (subscription_cancelled).'),
  refund: {
    args: '--invoice <invoice_id> [--amount <minor units>] [--pending]',
    summary:
      'Refund a paid invoice, all that is left or part of it: a credit note (credit_note_created, payment_refunded; refund_initiated with --pending).',
    flags: ['invoice', 'amount', 'pending'],
    required: ['invoice'],
    path: 'refund',
    body: (v) => ({
      invoice_id: cbId('invoice', v.invoice),
      ...(v.amount !== undefined ? { amount: positiveInt('amount', v.amount) } : {}),
      ...(v.pending !== undefined ? { pending: true } : {}),
    }),
  },
  'settle-refund': {
    args: '--credit-note cn_…',
    summary: "A pending refund's money goes back (payment_refunded; the note refunded).",
    flags: ['credit-note'],
    required: ['credit-note'],
    path: 'settle-refund',
    body: (v) => ({ credit_note_id: cbId('credit-note', v['credit-note']) }),
  },
  dispute: {
    args: '--invoice <invoice_id>',
    summary:
      'A chargeback on a paid invoice, as the emulator assumes it (credit_note_created with reason_code chargeback, payment_refunded).',
    flags: ['invoice'],
    required: ['invoice'],
    path: 'dispute',
    body: (v) => ({ invoice_id: cbId('invoice', v.invoice) }),
  },
  credits: {
    args: '--customer <customer_id>',
    summary: "A customer's promotional credits: the balance per currency and every add and deduct.",
    flags: ['customer'],
    required: ['customer'],
    path: 'credits',
    body: (v) => ({ customer_id: cbId('customer', v.customer) }),
  },
  state: {
    args: '',
    summary: "The emulator's item prices, customers, subscriptions, invoices, credit notes and coupon codes, as JSON.",
    flags: [],
    required: [],
    path: 'state',
  },
  serve: {
    args: `[--port ${EMULATOR_PORT}] [--webhook-url <url>] [--api-key test_…] [--site <site>]`,
    summary: 'Run an emulator on its own until Ctrl-C; prints its URL, site, API key and webhook credentials.',
    flags: ['port', 'webhook-url', 'api-key', 'site'],
    required: [],
    path: '',
  },
};

/** Flags that take no value. */
const BOOLEAN_FLAGS = new Set(['pending']);

const HELP_NOTES = [
  'Run `npm run --silent chargebee -- <command> --help` for one command.',
  '',
  '--referral-id is what the app wrote before the checkout (cf_refloop_referral_id on the customer by default):',
  'the events then convert that referral. The demo account must be on Chargebee (`DEMO_PROVIDER=chargebee npm start`).',
  '',
  'environment:',
  `  CHARGEBEE_EMULATOR_URL  the emulator (default: the one \`npm start\` runs, from DATA_DIR/runtime.json, else http://127.0.0.1:${EMULATOR_PORT})`,
  '',
  "Prints the emulator's JSON answer on stdout. Exit codes: 0 done (and help); 1 the emulator refused or is unreachable, or the service",
  'answered an event 404 (the demo account is on another provider: a hint names DEMO_PROVIDER); 2 bad arguments (and no command).',
];

const help = () =>
  formatHelp(
    'chargebee',
    "Plays the customer and Chargebee Billing against the Chargebee emulator `npm start` runs; its events reach the service's webhook.",
    commands,
    HELP_NOTES,
  );

const usageOf = (name: string | undefined): string => usage('chargebee', commands, name);

function parse(argv: string[]): { command: Command; body?: Record<string, unknown> } {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (!command || name === 'serve') throw new UsageError(`unknown command "${name ?? ''}"`);
  let values: Values;
  try {
    const options = Object.fromEntries(
      command.flags.map((f) => [f, { type: BOOLEAN_FLAGS.has(f) ? ('boolean' as const) : ('string' as const) }]),
    );
    const parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: false }).values as Record<string, string | boolean>;
    values = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
  } catch (err) {
    throw new UsageError((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'bad arguments');
  }
  for (const flag of command.required) if (values[flag] === undefined) throw new UsageError(`--${flag} is required`);
  return command.body ? { command, body: command.body(values) } : { command };
}

async function serve(argv: string[]): Promise<number> {
  let v: Values;
  try {
    const options = Object.fromEntries(['port', 'webhook-url', 'api-key', 'site'].map((f) => [f, { type: 'string' as const }]));
    v = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Values;
    if (v.port !== undefined) positiveInt('port', v.port);
    if (v['webhook-url'] !== undefined && !/^https?:\/\//.test(v['webhook-url']))
      throw new UsageError('--webhook-url must be an http(s) URL');
    if (v['api-key'] !== undefined && !/^[A-Za-z0-9_]{8,100}$/.test(v['api-key']))
      throw new UsageError('--api-key must be 8 to 100 letters, digits or _');
    if (v.site !== undefined && !/^[a-z0-9-]{1,60}$/.test(v.site)) throw new UsageError('--site must be lowercase letters, digits and -');
  } catch (err) {
    process.stderr.write(`chargebee: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}; ${usageOf('serve')}\n`);
    return 2;
  }
  const emulator = await startChargebeeEmulator({
    port: v.port !== undefined ? Number(v.port) : EMULATOR_PORT,
    webhookUrl: v['webhook-url'] ?? null,
    ...(v['api-key'] !== undefined ? { apiKey: v['api-key'] } : {}),
    ...(v.site !== undefined ? { site: v.site } : {}),
  });
  process.stdout.write(
    `${JSON.stringify({
      api_url: emulator.url,
      site: emulator.site,
      api_key: emulator.apiKey,
      webhook_username: emulator.webhookUsername,
      webhook_password: emulator.webhookPassword,
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
    name: 'chargebee',
    help,
    usageOf,
    summaryOf: (command) => commands[command]?.summary,
    parse,
    serve,
    call: () => ({
      cli: 'chargebee',
      label: 'Chargebee emulator',
      base: emulatorUrl(),
      timeoutMs: TIMEOUT_MS,
      hint: 'is `npm start` running (or `npm run --silent chargebee -- serve`)? CHARGEBEE_EMULATOR_URL sets its address',
      provider: 'chargebee',
    }),
  });
}

if (require.main === module) runCliMain('chargebee', main);
