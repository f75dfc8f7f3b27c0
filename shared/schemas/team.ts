// Bodies of the dashboard's endpoints: login links, sessions, the team, API keys and the account settings.
import * as v from 'valibot';
import { ROLES } from '../domain/team';
import { JS_REFERRAL_MODES } from '../domain/accounts';
import { REQUIRED, boolean, choice, email, field, pythonType, text } from './fields';
import {
  ATTRIBUTION_MODELS,
  MAX_ATTRIBUTION_DAYS,
  THEME_COLOUR,
  THEME_FONT,
  THEME_RADIUS,
  storedTheme,
  type AffiliateEmailSettings,
  type Theme,
} from '../domain/affiliates';
import { slug } from './campaign';
import type { ConnectionField } from '../billing/definition';
import { PROVIDER_DEFINITIONS, PROVIDER_KINDS } from '../billing/registry';

export const loginLinkBody = v.object({ email }, REQUIRED);
export const sessionBody = v.object({ token: text(100) }, REQUIRED);

export const inviteBody = v.object({ email, role: choice(ROLES) }, REQUIRED);
export const roleBody = v.object({ role: choice(ROLES) }, REQUIRED);

export const apiKeyBody = v.object({ name: v.optional(text(100)) }, REQUIRED);

export const MAX_EMBED_ORIGINS = 20;

/** `https://host[:port]` (http only on loopback): exactly what a browser sends as an Origin. */
export function parseOrigin(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.origin === 'null' || url.username || url.password || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash)
    return null;
  if (value.replace(/\/$/, '') !== url.origin) return null;
  if (url.protocol === 'https:') return url.origin;
  if (url.protocol === 'http:' && /^(localhost|127\.0\.0\.1|\[::1\])$/.test(url.hostname)) return url.origin;
  return null;
}

const embedOrigins = field<string[]>(
  (value) => {
    if (value === null) return { ok: false, message: 'This field may not be null.' };
    if (!Array.isArray(value)) return { ok: false, message: `Expected a list of items but got type "${pythonType(value)}".` };
    if (value.length > MAX_EMBED_ORIGINS)
      return { ok: false, message: `Ensure this field has no more than ${MAX_EMBED_ORIGINS} elements.` };
    const out: string[] = [];
    for (const item of value) {
      const origin = typeof item === 'string' && item.length <= 200 ? parseOrigin(item.trim()) : null;
      if (!origin)
        return {
          ok: false,
          message: `"${typeof item === 'string' ? item.slice(0, 60) : pythonType(item)}" is not an origin: use https://host[:port] with no path.`,
        };
      if (!out.includes(origin)) out.push(origin);
    }
    return { ok: true, value: out };
  },
  {
    type: 'array',
    items: { type: 'string', format: 'uri' },
    maxItems: MAX_EMBED_ORIGINS,
    description: 'Sites allowed to frame the member portal: `https://host[:port]`, no path (http only on localhost).',
  },
);

const senderName = text(100);
const emailSender = field<{ address: string; name: string } | null>(
  (value) => {
    if (value === null) return { ok: true, value: null };
    if (typeof value !== 'object' || Array.isArray(value))
      return { ok: false, message: `Invalid data. Expected a dictionary, but got ${pythonType(value)}.` };
    const parsed = v.safeParse(v.object({ address: email, name: v.optional(senderName, '') }, REQUIRED), value);
    if (!parsed.success) {
      const issue = parsed.issues[0];
      const key = issue?.path?.[0]?.key;
      return { ok: false, message: `${typeof key === 'string' ? `${key}: ` : ''}${issue?.message ?? 'Invalid.'}` };
    }
    return { ok: true, value: parsed.output };
  },
  {
    type: ['object', 'null'],
    properties: { address: { type: 'string', format: 'email' }, name: { type: 'string', maxLength: 100 } },
    required: ['address'],
    description: 'From whom member emails are sent (the address must be verified in SES); null for the service default.',
  },
);

/** The page members' links point to (`<referral_url>?via=<code>`): http(s) only; null to unset. */
const referralUrl = field<string | null>(
  (value) => {
    if (value === null || value === '') return { ok: true, value: null };
    if (typeof value !== 'string' || value.length > 500) return { ok: false, message: 'Enter a valid URL.' };
    let url: URL;
    try {
      url = new URL(value.trim());
    } catch {
      return { ok: false, message: 'Enter a valid URL.' };
    }
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || url.hash)
      return { ok: false, message: 'Enter an http or https URL without a #fragment.' };
    return { ok: true, value: url.toString() };
  },
  {
    type: ['string', 'null'],
    format: 'uri',
    maxLength: 500,
    description:
      "Where members' referral links point, e.g. `https://example.com/`: a member's link is this URL with `?via=<code>`. Shown in the member portal.",
  },
);

const attributionDays = field<number>(
  (value) => {
    const n = typeof value === 'string' && /^\s*\d{1,4}\s*$/.test(value) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n)) return { ok: false, message: 'A valid integer is required.' };
    if (n < 1) return { ok: false, message: 'Ensure this value is greater than or equal to 1.' };
    if (n > MAX_ATTRIBUTION_DAYS) return { ok: false, message: `Ensure this value is less than or equal to ${MAX_ATTRIBUTION_DAYS}.` };
    return { ok: true, value: n };
  },
  { type: 'integer', minimum: 1, maximum: MAX_ATTRIBUTION_DAYS },
);

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** `{new_referral?, monthly_summary?}`: the optional affiliate emails; a PATCH merges the switches it gives. */
const affiliateEmails = field<Partial<AffiliateEmailSettings>>(
  (value) => {
    if (!isRecord(value)) return { ok: false, message: 'Expected an object with new_referral and monthly_summary.' };
    const out: Partial<AffiliateEmailSettings> = {};
    for (const [k, x] of Object.entries(value)) {
      if (k !== 'new_referral' && k !== 'monthly_summary') return { ok: false, message: `Unknown email: ${k.slice(0, 40)}.` };
      if (typeof x !== 'boolean') return { ok: false, message: `${k} must be a boolean.` };
      out[k] = x;
    }
    return { ok: true, value: out };
  },
  {
    type: 'object',
    properties: { new_referral: { type: 'boolean' }, monthly_summary: { type: 'boolean' } },
    additionalProperties: false,
    description: 'The optional affiliate emails, off by default: `new_referral`, `monthly_summary`. A PATCH merges the switches it gives.',
  },
);

/** The public pages' look: `accent`, `background`, `text` (#rgb or #rrggbb), `radius` (0px..32px), `font`. Replaces the stored theme. */
const theme = field<Theme>(
  (value) => {
    if (value === null) return { ok: true, value: {} };
    if (!isRecord(value)) return { ok: false, message: 'Expected an object with accent, background, text, radius and font.' };
    for (const [k, x] of Object.entries(value)) {
      if (x === null || x === undefined || x === '') continue;
      const ok =
        k === 'accent' || k === 'background' || k === 'text'
          ? typeof x === 'string' && THEME_COLOUR.test(x)
          : k === 'radius'
            ? typeof x === 'string' && THEME_RADIUS.test(x)
            : k === 'font'
              ? typeof x === 'string' && THEME_FONT.test(x)
              : null;
      if (ok === null) return { ok: false, message: `Unknown theme setting: ${k.slice(0, 40)}.` };
      if (!ok)
        return {
          ok: false,
          message:
            k === 'radius'
              ? 'radius: 0px to 32px.'
              : k === 'font'
                ? 'font: letters, digits, spaces, commas, quotes and dashes.'
                : `${k}: a colour like #1a73e8.`,
        };
    }
    return { ok: true, value: storedTheme(value) };
  },
  {
    type: ['object', 'null'],
    properties: {
      accent: { type: ['string', 'null'], pattern: THEME_COLOUR.source },
      background: { type: ['string', 'null'], pattern: THEME_COLOUR.source },
      text: { type: ['string', 'null'], pattern: THEME_COLOUR.source },
      radius: { type: ['string', 'null'], pattern: THEME_RADIUS.source },
      font: { type: ['string', 'null'], pattern: THEME_FONT.source },
    },
    additionalProperties: false,
    description: 'The look of the sign-up page and the hosted portal: accent, background, text, radius, font. Replaces the stored theme.',
  },
);

export const updateAccountBody = v.object({
  referral_url: v.optional(referralUrl),
  // Affiliate programmes (docs/affiliates.md).
  slug: v.optional(slug),
  attribution_model: v.optional(choice(ATTRIBUTION_MODELS)),
  attribution_days: v.optional(attributionDays),
  tax_details_required: v.optional(boolean),
  affiliate_emails: v.optional(affiliateEmails),
  theme: v.optional(theme),
  name: v.optional(text(100)),
  email_sender: v.optional(emailSender),
  embed_origins: v.optional(embedOrigins),
  js_referrals: v.optional(choice(JS_REFERRAL_MODES)),
});

const secret = text(500);
const vendorId = field<number>(
  (value) => {
    const n = typeof value === 'string' && /^\s*\d{1,12}\s*$/.test(value) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) return { ok: false, message: 'A valid integer is required.' };
    return { ok: true, value: n };
  },
  { type: 'integer', minimum: 1 },
);
const pem = text(8000);
const apiUrl = field<string | null>(
  (value) => {
    if (value === null || value === undefined || value === '') return { ok: true, value: null };
    if (typeof value !== 'string' || value.length > 300 || !/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(value))
      return { ok: false, message: 'Enter a valid URL.' };
    return { ok: true, value: value.replace(/\/+$/, '') };
  },
  {
    type: ['string', 'null'],
    format: 'uri',
    description: "The provider API's base URL; only settable where the service allows emulators (under `npm start`).",
  },
);

/** The body schema of each form field type (shared/billing/definition.ts ConnectionField). */
const FIELD_SCHEMA: Record<ConnectionField['type'], typeof secret | typeof vendorId | typeof pem> = {
  text: secret,
  password: secret,
  textarea: pem,
  integer: vendorId,
};

/**
 * One body for every provider, made of the definitions' form fields (shared/billing/registry.ts): `kind`
 * picks which fields are required (checked by the handler, which reports every missing one at once).
 * Secrets are write-only: no answer ever shows them.
 */
export const providerBody = v.object(
  {
    kind: choice(PROVIDER_KINDS),
    ...Object.fromEntries(PROVIDER_DEFINITIONS.flatMap((d) => d.fields.map((f) => [f.name, v.optional(FIELD_SCHEMA[f.type])] as const))),
    api_url: v.optional(apiUrl),
  },
  REQUIRED,
);
export type ProviderBody = v.InferOutput<typeof providerBody>;
