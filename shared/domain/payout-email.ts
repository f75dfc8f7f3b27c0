// What a payout email may be (docs/rewards.md "Payout emails"). The address goes as it is into the payout
// files that PayPal and Wise import, and an operator opens them in a spreadsheet first, so it is held to
// a plain mailbox syntax, stricter than a member's contact email (schemas/fields.ts):
// - local part: dot-separated runs of letters, digits and _ % + ' - (at most 64 characters), starting with
//   a letter, a digit or _ (so never with = + - @, which a spreadsheet runs as a formula);
// - domain: two labels or more of letters, digits and inner hyphens, the last one letters (or xn--);
// - 254 characters at most.

const LOCAL = /^[A-Za-z0-9_][A-Za-z0-9_%+'-]*(?:\.[A-Za-z0-9_%+'-]+)*$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const TOP = /^(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;

export const FORMULA_START = /^[=+\-@\t\r]/;

/** Why `value` (trimmed) is not a payout email, or null when it is one. */
export function payoutEmailProblem(value: string): string | null {
  if (FORMULA_START.test(value)) return 'A payout email cannot start with =, +, - or @ (a spreadsheet would run it as a formula).';
  if (value.length > 254) return 'Enter a valid email address.';
  const at = value.indexOf('@');
  if (at < 1 || at !== value.lastIndexOf('@')) return 'Enter a valid email address.';
  const local = value.slice(0, at);
  const labels = value.slice(at + 1).split('.');
  if (local.length > 64 || !LOCAL.test(local)) return 'Enter a valid email address.';
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || !TOP.test(labels[labels.length - 1]!))
    return 'Enter a valid email address.';
  return null;
}

export const isPayoutEmail = (value: string): boolean => payoutEmailProblem(value) === null;
