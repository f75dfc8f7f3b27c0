// Named links and sub-ids (docs/attribution.md). Pure: the sub-id's shape, a generated slug, and a link's URL.
//
// A member's default link is `<referral_url>?via=<code>` (never stored). A named link adds a sub-id:
// `<referral_url origin><destination_path>?via=<code>&sub=<slug>`, so a click, the referral it leads to and
// that referral's conversion all carry the sub-id it came through.
import { randomInt } from 'node:crypto';

/** A sub-id (a named link's slug): lower-case letters, digits and inner dashes, 1 to 40 characters. */
export const SUB = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
export const SUB_MESSAGE = 'Use 1 to 40 lower-case letters, digits and dashes, starting and ending with a letter or a digit.';
export const isSub = (value: unknown): value is string => typeof value === 'string' && SUB.test(value);

/** Named links per member (the default link is not one of them). */
export const MAX_NAMED_LINKS = 20;
export const MAX_DESTINATION_PATH = 500;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A slug for a link created without one: 8 random lower-case letters and digits. */
export function generatedSlug(): string {
  let out = '';
  for (let i = 0; i < 8; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/**
 * Why a destination path is refused, or null: it must be a path of the account's own site (starting with
 * one `/`, no scheme or host, no backslash or control character), at most 500 characters.
 */
export function destinationPathProblem(path: string): string | null {
  if (path.length > MAX_DESTINATION_PATH) return `Ensure this field has no more than ${MAX_DESTINATION_PATH} characters.`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (!path.startsWith('/') || path.startsWith('//') || /[\\\s\u0000-\u001f\u007f]/.test(path)) {
    return 'Enter a path of your site starting with "/" (no scheme or host), e.g. /pricing.';
  }
  try {
    const base = new URL('https://site.invalid');
    if (new URL(path, base).origin !== base.origin) return 'Enter a path of your site starting with "/" (no scheme or host).';
  } catch {
    return 'Enter a valid path.';
  }
  return null;
}

/**
 * A named link's URL: the origin of `referralUrl` with `destinationPath` (or `referralUrl` itself without
 * one), `via` and `sub` merged into its query. Null while the account has no `referral_url`.
 */
export function namedLinkUrl(referralUrl: string | null, code: string, sub: string, destinationPath: string | null): string | null {
  if (!referralUrl) return null;
  let url: URL;
  try {
    url = destinationPath ? new URL(destinationPath, new URL(referralUrl).origin) : new URL(referralUrl);
  } catch {
    return null;
  }
  url.searchParams.set('via', code);
  url.searchParams.set('sub', sub);
  return url.toString();
}

// ---- attribution (docs/attribution.md) ----

export type AttributionModel = 'first_click' | 'last_click';

/** What the browser script follows: the account's model and its cookie's lifetime in days. */
export interface Attribution {
  model: AttributionModel;
  days: number;
}

export const DEFAULT_ATTRIBUTION: Attribution = { model: 'first_click', days: 60 };

/** The account item's `attribution_model` and `attribution_days` (absent or out of range: the defaults). */
export function attributionOf(account: Record<string, unknown> | undefined): Attribution {
  const days = Number(account?.attribution_days);
  return {
    model: account?.attribution_model === 'last_click' ? 'last_click' : 'first_click',
    days: Number.isInteger(days) && days >= 1 && days <= 365 ? days : DEFAULT_ATTRIBUTION.days,
  };
}
