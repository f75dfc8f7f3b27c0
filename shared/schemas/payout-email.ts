// The payout email field (member create and update, the portal's PATCH me): null or blank is null;
// otherwise a mailbox that can safely go into a payout file (domain/payout-email.ts), its domain
// lower-cased. A refusal is a field error in the contract's shape: {"payout_email": ["..."]}.
import { payoutEmailProblem } from '../domain/payout-email';
import { field } from './fields';

export const nullablePayoutEmail = field<string | null>(
  (value) => {
    if (value === null || (typeof value === 'string' && value.trim() === '')) return { ok: true, value: null };
    if (typeof value !== 'string') return { ok: false, message: 'Not a valid string.' };
    const t = value.trim();
    const problem = payoutEmailProblem(t);
    if (problem) return { ok: false, message: problem };
    const at = t.lastIndexOf('@');
    return { ok: true, value: t.slice(0, at) + t.slice(at).toLowerCase() };
  },
  { type: ['string', 'null'], format: 'email', maxLength: 254, description: 'Blank is stored as null.' },
);
