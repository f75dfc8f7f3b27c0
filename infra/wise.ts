// Wise emulator CLI (`npm run --silent wise -- <command>`): looks at and moves the state of the Wise
// emulator `npm start` runs (infra/local/emulators/wise) by hand, through its /_emulator/ control endpoints:
// the balance that funds batch groups, whether funding asks for SCA, and a transfer's state as Wise's
// sandbox simulation moves it (each change a signed `transfers#state-change`). stdout is the emulator's JSON
// answer, on one line; the exit codes are infra/rail-emulator-cli.ts's.
import { localUrl } from './local/runtime-file';
import { mainOf, type RailCli, type RailCommand, UsageError } from './rail-emulator-cli';

/** The states the emulator's simulation moves a transfer to, in order. */
const STATES = ['processing', 'funds_converted', 'outgoing_payment_sent', 'bounced_back', 'funds_refunded'];

const commands: Record<string, RailCommand> = {
  state: {
    args: '',
    summary: "The emulator's profile, balances, SCA switch, batch groups and transfers, as JSON.",
    flags: [],
    required: [],
    path: 'state',
  },
  balance: {
    args: '--amount <major units, e.g. 2500.00> [--currency EUR]',
    summary: "Set the business profile's balance in a currency (what funds the batch groups).",
    flags: ['amount', 'currency'],
    required: ['amount'],
    path: 'balance',
    body(v) {
      if (!/^\d+(\.\d{1,2})?$/.test(v.amount ?? ''))
        throw new UsageError(`--amount must be a non-negative amount like 2500.00, got "${v.amount ?? ''}"`);
      const currency = (v.currency ?? 'EUR').toUpperCase();
      if (!/^[A-Z]{3}$/.test(currency)) throw new UsageError(`--currency must be a three-letter code like EUR, got "${v.currency}"`);
      return { currency, amount: Number(v.amount) };
    },
  },
  sca: {
    args: 'on|off',
    summary: 'Whether funding a batch group asks for SCA (403 with x-2fa-approval) from now on.',
    flags: [],
    required: [],
    positionals: 1,
    path: 'sca',
    body(_v, [word]) {
      if (word !== 'on' && word !== 'off') throw new UsageError(`sca takes on or off, got "${word ?? ''}"`);
      return { on: word === 'on' };
    },
  },
  simulate: {
    args: `--transfer <transfer id> --state ${STATES.join('|')}`,
    summary: "Move a funded transfer to a state, as Wise's sandbox simulation does (transfers#state-change).",
    flags: ['transfer', 'state'],
    required: ['transfer', 'state'],
    path: 'simulate',
    body(v) {
      if (!/^\d{1,18}$/.test(v.transfer ?? ''))
        throw new UsageError(`--transfer must be a Wise transfer id (digits), got "${v.transfer ?? ''}"`);
      if (!STATES.includes(v.state ?? '')) throw new UsageError(`--state must be one of ${STATES.join('|')}, got "${v.state ?? ''}"`);
      return { transfer_id: v.transfer, state: v.state };
    },
  },
};

export const cli: RailCli = {
  program: 'wise',
  label: 'Wise emulator',
  intro: 'Looks at and moves the state of the Wise emulator `npm start` runs (a payout rail) by hand.',
  commands,
  notes: [
    'Run `npm run --silent wise -- <command> --help` for one command.',
    '',
    'environment:',
    '  WISE_EMULATOR_URL  the emulator (default http://127.0.0.1:$WISE_PORT or 12121, the one `npm start` runs)',
    '',
    "Prints the emulator's JSON answer on stdout. Exit codes: 0 done (and help); 1 the emulator refused or is unreachable;",
    '2 bad arguments (and no command).',
  ],
  baseUrl: () => process.env.WISE_EMULATOR_URL || localUrl('WISE_PORT', (f) => f.wise_url ?? 'http://127.0.0.1:12121', 12121),
  hint: 'is `npm start` running? WISE_EMULATOR_URL or WISE_PORT sets its address',
};

// Run as a program; imported, the module only exports its commands (runRailCli(cli, argv) runs them).
if (require.main === module) mainOf(cli);
