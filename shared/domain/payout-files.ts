// The CSV files of a payout batch. Pure: the caller loads the batch's payouts and stores the text.
// Sources for the two provider layouts:
// - PayPal Payouts web upload format (no header row; recipient, amount, currency, customer id, note,
//   recipient wallet);
// - Wise batch payments, "send by email" CSV template (name, recipientEmail, paymentReference, ...).
// `csv` is our own generic export with one column per PayoutFileRow field.
//
// Every file: one currency, at most FORMAT_LIMITS[format] rows (at least one), amounts as integer cents
// (positive, at most maxPayoutCents: domain/money-limits.ts) written with formatCents ("100.50"), fields quoted per RFC 4180, lines ending in CRLF (also the last).
// Every text cell (never amounts, counts or timestamps, which are digits), the recipient address included,
// starting with = + - @ tab or CR gets a leading `'` so a spreadsheet opening the file does not run it as a
// formula (CSV injection).

import { formatCents } from './money';
import { formatInCurrency } from './currency';
import { maxPayoutCents } from './money-limits';

export type PayoutFileFormat = 'paypal' | 'wise' | 'csv';

export interface PayoutFileRow {
  /** 'po_' + 32 hex chars. */
  payout_id: string;
  member_id: string;
  member_identifier: string;
  member_email: string;
  /** "First Last" or null. */
  member_name: string | null;
  /** Where the money goes. */
  payout_email: string;
  /** Cents, > 0. */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  reward_count: number;
  /** Unix seconds. */
  period_start: number | null;
  period_end: number | null;
  status: string;
  paid_at: number | null;
  reference: string | null;
}

export const FORMAT_LIMITS: Record<PayoutFileFormat, number> = { paypal: 5000, wise: 1000, csv: 100000 };

/** PayPal's customer id ("Sender Item ID"): at most 30 characters, no spaces. */
export const PAYPAL_CUSTOMER_ID_LENGTH = 30;
/** PayPal's note to the recipient: at most 400 characters. */
export const PAYPAL_NOTE_LENGTH = 400;
/** Wise's payment reference is short: cut to 35 characters. */
export const WISE_REFERENCE_LENGTH = 35;

export const WISE_HEADER = 'name,recipientEmail,paymentReference,receiverType,amountCurrency,amount,sourceCurrency,targetCurrency';
export const CSV_HEADER =
  'payout_id,member_id,member_identifier,member_email,member_name,payout_email,amount,currency,reward_count,period_start,period_end,status,paid_at,reference';

export interface Options {
  /** PayPal: note to the recipient; Wise: payment reference. */
  note: string;
  /** Wise: the currency the batch is paid from (default: the payouts' currency). */
  sourceCurrency?: string;
}

export class PayoutFileError extends Error {
  override name = 'PayoutFileError';
}

/** One CSV field per RFC 4180: quoted only when it holds a comma, a double quote, CR or LF. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A text value made safe from formula injection (not quoted yet). */
function guard(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/**
 * A cell of an export: numbers and decimal amounts (a clawback's "-2.50") as they are, any other text
 * guarded from formula injection, then quoted per RFC 4180.
 */
export function safeCsvField(value: string | number | null): string {
  if (value === null || typeof value === 'number' || /^-?\d+(\.\d+)?$/.test(value)) return csvField(value);
  return csvField(guard(value));
}

/** At most `max` characters (code points, so no surrogate pair is split). */
function cut(value: string, max: number): string {
  const chars = Array.from(value);
  return chars.length > max ? chars.slice(0, max).join('') : value;
}

const text = (value: string | null): string => (value === null ? '' : csvField(guard(value)));
/**
 * A recipient address is guarded like every other cell. A payout email is validated as a plain mailbox
 * when it is saved (domain/payout-email.ts), so it never starts with = + - or @ and the guard leaves it
 * as it is; an older address that does gets the `'`, which PayPal or Wise refuse (the row is not paid)
 * rather than a spreadsheet running it. (The batch skips such a member anyway: flows/payouts.ts.)
 */
const recipient = (value: string): string => text(value);
/** The note, guarded first so the `'` counts toward the provider's length limit. */
const note = (value: string, max: number): string => csvField(cut(guard(value), max));

function isoSeconds(seconds: number | null): string {
  return seconds === null ? '' : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function check(format: PayoutFileFormat, rows: PayoutFileRow[]): void {
  const limit = FORMAT_LIMITS[format];
  if (limit === undefined) throw new PayoutFileError(`Unknown payout file format: ${String(format)}.`);
  if (rows.length === 0) throw new PayoutFileError('A payout file needs at least one payout.');
  if (rows.length > limit) {
    throw new PayoutFileError(`A ${format} payout file holds at most ${limit} payouts (got ${rows.length}).`);
  }
  const currency = rows[0]!.currency;
  for (const row of rows) {
    if (row.currency !== currency) {
      throw new PayoutFileError(`A payout file holds one currency: found ${currency} and ${row.currency}.`);
    }
    if (!Number.isInteger(row.amount) || row.amount <= 0) {
      throw new PayoutFileError(`Payout ${row.payout_id} has amount ${row.amount}: must be a positive number of cents.`);
    }
    if (row.amount > maxPayoutCents(row.currency)) {
      throw new PayoutFileError(
        `Payout ${row.payout_id} has amount ${formatCents(row.amount)}: above the maximum of ${formatCents(maxPayoutCents(row.currency))} ${row.currency} per payout.`,
      );
    }
  }
}

function paypalLine(row: PayoutFileRow, opts: Options): string[] {
  return [
    recipient(row.payout_email),
    // PayPal and Wise take no decimals in a zero-decimal currency (JPY "120"): domain/currency.ts.
    formatInCurrency(row.amount, row.currency),
    text(row.currency),
    // The payout id is 35 characters ('po_' + 32 hex) but PayPal takes at most 30 with no spaces, so the
    // file carries its first 30: 'po_' + the first 27 hex chars (108 bits, still unique in a batch).
    text(row.payout_id.slice(0, PAYPAL_CUSTOMER_ID_LENGTH)),
    note(opts.note, PAYPAL_NOTE_LENGTH),
    'PAYPAL',
  ];
}

function wiseLine(row: PayoutFileRow, opts: Options): string[] {
  return [
    text(row.member_name || row.member_identifier),
    recipient(row.payout_email),
    // Wise payment references are short: the note is cut to 35 characters.
    note(opts.note, WISE_REFERENCE_LENGTH),
    'PERSON',
    // `target`: the amount is what the member receives, in targetCurrency.
    'target',
    formatInCurrency(row.amount, row.currency),
    text(opts.sourceCurrency ?? row.currency),
    text(row.currency),
  ];
}

function csvLine(row: PayoutFileRow): string[] {
  return [
    text(row.payout_id),
    text(row.member_id),
    text(row.member_identifier),
    text(row.member_email),
    text(row.member_name),
    text(row.payout_email),
    formatCents(row.amount),
    text(row.currency),
    csvField(row.reward_count),
    isoSeconds(row.period_start),
    isoSeconds(row.period_end),
    text(row.status),
    isoSeconds(row.paid_at),
    text(row.reference),
  ];
}

/** The file's text; throws PayoutFileError when the rows cannot go in one file of this format. */
export function payoutFile(format: PayoutFileFormat, rows: PayoutFileRow[], opts: Options): string {
  check(format, rows);
  let lines: string[][];
  switch (format) {
    case 'paypal':
      lines = rows.map((row) => paypalLine(row, opts));
      break;
    case 'wise':
      lines = [WISE_HEADER.split(','), ...rows.map((row) => wiseLine(row, opts))];
      break;
    case 'csv':
      lines = [CSV_HEADER.split(','), ...rows.map(csvLine)];
      break;
  }
  return `${lines.map((fields) => fields.join(',')).join('\r\n')}\r\n`;
}
