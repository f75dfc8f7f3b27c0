// Affiliate programmes (docs/affiliates.md): slugs, a campaign's sign-up settings, the account's
// attribution model, its theme for the public pages, and which optional affiliate emails it sends. Pure.

/** An account's or a campaign's slug: lower-case letters, digits and inner dashes, 1 to 40 characters. */
export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

/**
 * Never an account's slug: they are path segments beside the account's under /portal/ and /join/
 * (`/portal/v1/…`, `/join/confirm/…`) or names a reader would take for the service's own.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = /* @__PURE__ */ new Set([
  'v1',
  'v2',
  'login',
  'assets',
  'app',
  'js',
  'api',
  'confirm',
  'join',
  'portal',
]);

export const isSlug = (value: unknown): value is string => typeof value === 'string' && SLUG.test(value);

/** A slug from a name: "Acme Cloud, Inc." -> "acme-cloud-inc"; "" when nothing is left (the caller picks another). */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
}

/** The slug to try the n-th time (n >= 2 adds `-n`), staying within 40 characters. */
export function slugCandidate(base: string, n: number): string {
  const root = base === '' ? 'programme' : base;
  if (n < 2) return root;
  const suffix = `-${n}`;
  return `${root.slice(0, 40 - suffix.length).replace(/-+$/g, '')}${suffix}`;
}

// ---- a campaign's sign-up page ----

export const QUESTION_TYPES = ['text', 'url', 'choice'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

export interface SignupQuestion {
  /** The key of its answer in an application's `answers`. */
  id: string;
  label: string;
  type: QuestionType;
  required: boolean;
  /** `choice` only: the options (2 to 20). */
  options: string[] | null;
}

export interface SignupSettings {
  enabled: boolean;
  approval: 'auto' | 'manual';
  terms_url: string | null;
  questions: SignupQuestion[];
}

export const MAX_QUESTIONS = 10;
export const QUESTION_ID = /^[a-z0-9_]{1,30}$/;

/** A campaign's sign-up settings until an operator opens it: closed, manual approval, no questions. */
export const SIGNUP_CLOSED: SignupSettings = { enabled: false, approval: 'manual', terms_url: null, questions: [] };

/**
 * The stored settings (absent on campaigns from before sign-up pages: closed). What is stored was
 * validated on its way in (shared/schemas/campaign.ts), so only absent keys are filled here.
 */
export function storedSignup(value: unknown): SignupSettings {
  const s = (value ?? {}) as Partial<SignupSettings>;
  return {
    enabled: s.enabled === true,
    approval: s.approval === 'auto' ? 'auto' : 'manual',
    terms_url: s.terms_url ?? null,
    questions: s.questions ?? [],
  };
}

// ---- the account's attribution, theme and affiliate emails ----

export const ATTRIBUTION_MODELS = ['first_click', 'last_click'] as const;
export type AttributionModel = (typeof ATTRIBUTION_MODELS)[number];
export const DEFAULT_ATTRIBUTION_DAYS = 60;
export const MAX_ATTRIBUTION_DAYS = 365;

/** The look of the public pages (the join page, the hosted portal): the portal's fragment theme, stored. */
export interface Theme {
  accent?: string;
  background?: string;
  text?: string;
  radius?: string;
  font?: string;
}

export const THEME_COLOUR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
export const THEME_RADIUS = /^(?:[0-9]|[12][0-9]|3[0-2])px$/;
export const THEME_FONT = /^[A-Za-z0-9 ,'"-]{1,100}$/;

/** A stored theme's valid values; anything else is dropped (a page never receives an unchecked value). */
export function storedTheme(value: unknown): Theme {
  if (!value || typeof value !== 'object') return {};
  const t = value as Record<string, unknown>;
  const theme: Theme = {};
  for (const key of ['accent', 'background', 'text'] as const) {
    const colour = t[key];
    if (typeof colour === 'string' && THEME_COLOUR.test(colour)) theme[key] = colour.toLowerCase();
  }
  if (typeof t.radius === 'string' && THEME_RADIUS.test(t.radius)) theme.radius = t.radius;
  if (typeof t.font === 'string' && THEME_FONT.test(t.font)) theme.font = t.font;
  return theme;
}

export interface AffiliateEmailSettings {
  /** "Someone signed up through your link" (off by default). */
  new_referral: boolean;
  /** Last month's clicks, referrals, conversions and earnings, on the 1st (off by default). */
  monthly_summary: boolean;
}

/** The affiliate-programme settings of an account item (absent attributes: the defaults). */
export interface AffiliateSettings {
  slug: string | null;
  attribution_model: AttributionModel;
  attribution_days: number;
  tax_details_required: boolean;
  affiliate_emails: AffiliateEmailSettings;
  theme: Theme;
}

export function affiliateSettingsOf(account: Record<string, unknown> | undefined): AffiliateSettings {
  const a = account ?? {};
  const days = Number(a.attribution_days);
  const emails = (a.affiliate_emails ?? {}) as Record<string, unknown>;
  return {
    slug: isSlug(a.slug) ? a.slug : null,
    attribution_model: a.attribution_model === 'last_click' ? 'last_click' : 'first_click',
    attribution_days: Number.isInteger(days) && days >= 1 && days <= MAX_ATTRIBUTION_DAYS ? days : DEFAULT_ATTRIBUTION_DAYS,
    tax_details_required: a.tax_details_required === true,
    affiliate_emails: { new_referral: emails.new_referral === true, monthly_summary: emails.monthly_summary === true },
    theme: storedTheme(a.theme),
  };
}

/** The public page of a campaign's programme. */
export const joinPageUrl = (baseUrl: string, accountSlug: string, campaignSlug: string): string =>
  `${baseUrl}/join/${accountSlug}/${campaignSlug}/`;
