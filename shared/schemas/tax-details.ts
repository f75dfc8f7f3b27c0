// The body of PUT /portal/v1/tax-details/ (docs/portal.md "Tax details"): legal name, country, address,
// and either the US form (`us`: a TIN and the W-9 certification) or the W-8BEN fields (`w8ben`), as the
// country says. Errors name nested fields with a dot (`{"us.tin": ["..."]}`), so the portal's form can put
// each under its field.
import * as v from 'valibot';
import { type FieldErrors, ValidationError } from '../domain/errors';
import { REQUIRED, field, text } from './fields';
import { listQuery } from './query';

const regions = new Intl.DisplayNames(['en'], { type: 'region' });
/** An ISO 3166-1 alpha-2 code that names a region (`US`, `DE`), upper case. */
export const isCountryCode = (code: string): boolean => /^[A-Z]{2}$/.test(code) && regions.of(code) !== code && code !== 'ZZ';

const country = field<string>(
  (value) => {
    if (typeof value !== 'string') return { ok: false, message: value === null ? 'This field may not be null.' : 'Not a valid string.' };
    const code = value.trim().toUpperCase();
    if (code === '') return { ok: false, message: 'This field may not be blank.' };
    return isCountryCode(code)
      ? { ok: true, value: code }
      : { ok: false, message: 'Enter a country as its ISO 3166-1 alpha-2 code, e.g. US or DE.' };
  },
  {
    type: 'string',
    minLength: 2,
    maxLength: 2,
    description: 'ISO 3166-1 alpha-2 country code (any case; stored upper case).',
    examples: ['DE'],
  },
);

const optionalCountry = field<string | null>(
  (value) => {
    if (value === null || value === undefined || (typeof value === 'string' && value.trim() === '')) return { ok: true, value: null };
    if (typeof value !== 'string') return { ok: false, message: 'Not a valid string.' };
    const code = value.trim().toUpperCase();
    return isCountryCode(code)
      ? { ok: true, value: code }
      : { ok: false, message: 'Enter a country as its ISO 3166-1 alpha-2 code, e.g. US or DE.' };
  },
  { type: ['string', 'null'], maxLength: 2, description: 'ISO 3166-1 alpha-2 country code, or null.' },
);

const mustBeTrue = (what: string) =>
  field<true>((value) => (value === true ? { ok: true, value: true } : { ok: false, message: `Confirm the ${what} to continue.` }), {
    type: 'boolean',
    const: true,
  });

/** A US SSN, ITIN or EIN: nine digits, with or without the usual dashes; stored as the digits. */
const tin = field<string>(
  (value) => {
    if (typeof value !== 'string') return { ok: false, message: value === null ? 'This field may not be null.' : 'Not a valid string.' };
    const t = value.trim();
    if (!/^(?:\d{3}-?\d{2}-?\d{4}|\d{2}-\d{7})$/.test(t))
      return { ok: false, message: 'Enter a 9-digit US taxpayer identification number (SSN, ITIN or EIN).' };
    return { ok: true, value: t.replace(/-/g, '') };
  },
  { type: 'string', pattern: '^(\\d{3}-?\\d{2}-?\\d{4}|\\d{2}-\\d{7})$', description: 'SSN, ITIN or EIN (9 digits; dashes allowed).' },
);

const optionalText = (max: number) =>
  field<string | null>(
    (value) => {
      if (value === null || value === undefined) return { ok: true, value: null };
      if (typeof value !== 'string') return { ok: false, message: 'Not a valid string.' };
      const t = value.trim();
      if (t.length > max) return { ok: false, message: `Ensure this field has no more than ${max} characters.` };
      return { ok: true, value: t === '' ? null : t };
    },
    { type: ['string', 'null'], maxLength: max },
  );

/** YYYY-MM-DD, a real day, at least 13 and at most 130 years ago. */
const birthDate = field<string>(
  (value) => {
    if (typeof value !== 'string') return { ok: false, message: value === null ? 'This field may not be null.' : 'Not a valid string.' };
    const t = value.trim();
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
    const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
    if (!date || date.toISOString().slice(0, 10) !== t) return { ok: false, message: 'Enter a date as YYYY-MM-DD.' };
    const years = (Date.now() - date.getTime()) / (365.25 * 86_400_000);
    if (years < 13 || years > 130) return { ok: false, message: 'Enter your date of birth.' };
    return { ok: true, value: t };
  },
  { type: 'string', format: 'date' },
);

export const usTaxBody = v.object({ tin, w9_certified: mustBeTrue('W-9 certification') }, REQUIRED);

export const w8benBody = v.object(
  {
    name: text(200),
    country_of_citizenship: country,
    permanent_address: text(500),
    foreign_tin: v.optional(optionalText(50), null),
    date_of_birth: birthDate,
    treaty_country: v.optional(optionalCountry, null),
    certified: mustBeTrue('W-8BEN certification'),
  },
  REQUIRED,
);

export const taxDetailsBody = v.object(
  {
    legal_name: text(200),
    country,
    address: text(500),
    us: v.optional(usTaxBody),
    w8ben: v.optional(w8benBody),
  },
  REQUIRED,
);

export type TaxDetailsInput = v.InferOutput<typeof taxDetailsBody>;

/**
 * Validates the body: every field's first error, nested ones named `us.tin`; then exactly one form: `us`
 * (W-9) for a US person, always with a US address, `w8ben` for everyone else.
 */
export function validateTaxDetails(input: unknown): TaxDetailsInput {
  const result = v.safeParse(taxDetailsBody, input, { abortPipeEarly: true });
  const fields: FieldErrors = Object.create(null) as FieldErrors;
  if (!result.success) {
    for (const issue of result.issues) {
      const key = (issue.path ?? []).map((p) => String(p.key)).join('.') || 'non_field_errors';
      if (!Object.hasOwn(fields, key)) fields[key] = [issue.message];
    }
    throw new ValidationError(fields);
  }
  const body = result.output;
  if (body.us && body.w8ben) fields.non_field_errors = ['Give either the US details (W-9) or the W-8BEN details, not both.'];
  else if (body.country === 'US' && !body.us)
    fields.us = ['With a US address, give a taxpayer identification number with the W-9 certification.'];
  else if (!body.us && !body.w8ben) fields.w8ben = ['Give the W-8BEN details (or, as a US person, the US details).'];
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  return body;
}

const taxPageSize = field<number>(
  (value) => {
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(n) || n < 1 || n > 1_000) return { ok: false, message: 'Ensure this value is between 1 and 1000.' };
    return { ok: true, value: n };
  },
  { type: 'integer', minimum: 1, maximum: 1_000, default: 1_000, description: 'Rows per response (at most 1,000).' },
);

/** GET /v1/exports/tax-details.csv: its page size and the cursor of the `Link: rel="next"` header, nothing else. */
export const taxExportQuery = listQuery({
  page_size: v.optional(taxPageSize, 1_000),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(600), v.description('From the `Link: rel="next"` header.'))),
});
