// PayPal Payouts emulator CLI (`npm run --silent paypal -- <command>`): moves the payout batches and items of
// the emulator `npm start` runs (infra/local/emulators/paypal-payouts) by hand, through its /_emulator/
// control endpoints, as PayPal would: settle a batch, set an item to SUCCESS, UNCLAIMED, FAILED…, or choose
// what a receiver's next items become. Each change is a signed webhook, recorded by the emulator (and
// POSTed once a webhook URL is set). stdout is the emulator's JSON answer, on one line; the exit codes are
// infra/rail-emulator-cli.ts's.
import { localUrl } from './local/runtime-file';
import { mainOf, type RailCli, type RailCommand, UsageError } from './rail-emulator-cli';

/** What an item can be set to (the emulator's transaction_status values). */
const STATUSES = ['SUCCESS', 'FAILED', 'UNCLAIMED', 'RETURNED', 'ONHOLD', 'BLOCKED', 'REFUNDED', 'REVERSED', 'PENDING'];

function status(value: string | undefined): string {
  const v = (value ?? '').toUpperCase();
  if (!STATUSES.includes(v)) throw new UsageError(`--status must be one of ${STATUSES.join('|')}, got "${value ?? ''}"`);
  return v;
}

function id(flag: string, value: string | undefined): string {
  if (value === undefined || !/^[A-Za-z0-9_-]{1,127}$/.test(value))
    throw new UsageError(`--${flag} must be a PayPal id, got "${value ?? ''}"`);
  return value;
}

const commands: Record<string, RailCommand> = {
  batches: {
    args: '',
    summary: "The emulator's payout batches and their items (ids, receivers, amounts, statuses), as JSON.",
    flags: [],
    required: [],
    path: 'batches',
  },
  settle: {
    args: '[--batch <payout_batch_id>]',
    summary: "Settle the pending items now (of one batch, or of all), each to its receiver's outcome (PAYMENT.PAYOUTS-ITEM.*).",
    flags: ['batch'],
    required: [],
    path: 'settle',
    body: (v) => (v.batch !== undefined ? { payout_batch_id: id('batch', v.batch) } : {}),
  },
  'item-status': {
    args: `--item <payout_item_id> --status ${STATUSES.join('|')}`,
    summary: 'Move one item to a status (its PAYMENT.PAYOUTS-ITEM.* webhook).',
    flags: ['item', 'status'],
    required: ['item', 'status'],
    path: 'item-status',
    body: (v) => ({ payout_item_id: id('item', v.item), status: status(v.status) }),
  },
  outcome: {
    args: `--receiver <email> --status ${STATUSES.join('|')}`,
    summary: "What a receiver's items settle to from now on (a failure knob per receiver: FAILED, UNCLAIMED, ONHOLD…).",
    flags: ['receiver', 'status'],
    required: ['receiver', 'status'],
    path: 'outcome',
    body(v) {
      if (!/^[^@\s]+@[^@\s]+$/.test(v.receiver ?? ''))
        throw new UsageError(`--receiver must be an email address, got "${v.receiver ?? ''}"`);
      return { receiver: v.receiver, status: status(v.status) };
    },
  },
};

export const cli: RailCli = {
  program: 'paypal',
  label: 'PayPal Payouts emulator',
  intro: 'Moves payout batches and items by hand in the PayPal Payouts emulator `npm start` runs (a payout rail).',
  commands,
  notes: [
    'Run `npm run --silent paypal -- <command> --help` for one command.',
    '',
    'environment:',
    '  PAYPAL_EMULATOR_URL  the emulator (default http://127.0.0.1:$PAYPAL_PORT or 12131, the one `npm start` runs)',
    '',
    "Prints the emulator's JSON answer on stdout. Exit codes: 0 done (and help); 1 the emulator refused or is unreachable;",
    '2 bad arguments (and no command).',
  ],
  baseUrl: () => process.env.PAYPAL_EMULATOR_URL || localUrl('PAYPAL_PORT', (f) => f.paypal_url ?? 'http://127.0.0.1:12131', 12131),
  hint: 'is `npm start` running? PAYPAL_EMULATOR_URL or PAYPAL_PORT sets its address',
};

// Run as a program; imported, the module only exports its commands (runRailCli(cli, argv) runs them).
if (require.main === module) mainOf(cli);
