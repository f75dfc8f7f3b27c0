// Members' tax details in the portal (docs/portal.md "Tax details") and the operator's tax export. What the
// member sees is masked (the last four characters of a TIN, the start of the address); only the export,
// for owner and finance sessions, has them in full.
import { safeCsvField } from '../domain/payout-files';
import type { TaxDetailsInput } from '../schemas/tax-details';
import type { PortalSession } from '../store/portal';
import { getTaxDetails, listTaxDetails, putTaxDetails, type TaxDetails } from '../store/tax-details';
import { refreshMemberPayouts } from './payouts';
import { accountOf, memberOf } from './portal';

/** The last four characters of an identifier, the rest as dots: `123456789` -> `•••••6789`. */
export function maskTin(value: string): string {
  const chars = [...value.replace(/[\s-]/g, '')];
  if (chars.length <= 4) return '•'.repeat(chars.length);
  return `${'•'.repeat(Math.min(5, chars.length - 4))}${chars.slice(-4).join('')}`;
}

/** The first characters of an address, enough to recognise it. */
const maskAddress = (value: string): string => {
  const chars = [...value];
  return chars.length <= 6 ? '•••' : `${chars.slice(0, 6).join('')}•••`;
};

function taxView(account: Record<string, unknown>, details: TaxDetails | null) {
  const tin = details?.us?.tin ?? details?.w8ben?.foreign_tin ?? null;
  return {
    required: account.tax_details_required === true,
    provided: details !== null,
    form: details ? (details.us ? ('w9' as const) : ('w8ben' as const)) : null,
    legal_name: details?.legal_name ?? null,
    country: details?.country ?? null,
    address: details ? maskAddress(details.address) : null,
    tin: tin ? maskTin(tin) : null,
    updated_at: details?.updated_at ?? null,
  };
}

/** GET /portal/v1/tax-details/: the member's tax details, masked (nothing when they gave none). */
export async function portalTaxDetails(session: PortalSession) {
  const [account, details] = await Promise.all([accountOf(session), getTaxDetails(session.accountId, session.memberId)]);
  return taxView(account, details);
}

/** PUT /portal/v1/tax-details/: stores them encrypted (replacing any before) and answers them masked. */
export async function putPortalTaxDetails(session: PortalSession, input: TaxDetailsInput) {
  const details = await memberOf(session, () => putTaxDetails(session.accountId, session.memberId, input));
  // Payouts that waited for them become due at once (as after a payout email is given).
  const [account] = await Promise.all([accountOf(session), refreshMemberPayouts(session.accountId, session.memberId)]);
  return taxView(account, details);
}

/** The tax export's columns: one row per member who gave tax details. */
export const TAX_EXPORT_HEADER = [
  'member_id',
  'form',
  'legal_name',
  'country',
  'address',
  'tin',
  'w9_certified',
  'w8ben_name',
  'w8ben_country_of_citizenship',
  'w8ben_permanent_address',
  'w8ben_foreign_tin',
  'w8ben_date_of_birth',
  'w8ben_treaty_country',
  'w8ben_certified',
  'updated_at',
];

function taxRow(t: TaxDetails): (string | null)[] {
  return [
    t.member_id,
    t.us ? 'w9' : 'w8ben',
    t.legal_name,
    t.country,
    t.address,
    t.us?.tin ?? null,
    t.us ? 'true' : null,
    t.w8ben?.name ?? null,
    t.w8ben?.country_of_citizenship ?? null,
    t.w8ben?.permanent_address ?? null,
    t.w8ben?.foreign_tin ?? null,
    t.w8ben?.date_of_birth ?? null,
    t.w8ben?.treaty_country ?? null,
    t.w8ben ? 'true' : null,
    new Date(t.updated_at * 1000).toISOString().replace('.000Z', 'Z'),
  ];
}

/** One page of GET /v1/exports/tax-details.csv: the CSV text, its rows and the next page's cursor. */
export async function taxExportPage(accountId: string, pageSize: number, cursor: string | undefined) {
  const page = await listTaxDetails(accountId, { pageSize, cursor });
  // The header row on the first page only, as the other exports.
  const lines = [...(cursor ? [] : [TAX_EXPORT_HEADER.join(',')]), ...page.items.map((t) => taxRow(t).map(safeCsvField).join(','))];
  return { csv: lines.length ? `${lines.join('\r\n')}\r\n` : '', rows: page.items.length, nextCursor: page.nextCursor };
}
