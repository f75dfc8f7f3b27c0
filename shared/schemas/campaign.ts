// Campaign bodies. Create has the specification's defaults; update (PATCH) takes any subset.
import * as v from 'valibot';
import { DISCOUNT_TYPES, type DiscountType } from '../domain/discounts';
import {
  MAX_QUESTIONS,
  QUESTION_ID,
  QUESTION_TYPES,
  SLUG,
  type QuestionType,
  type SignupQuestion,
  type SignupSettings,
} from '../domain/affiliates';
import { REQUIRED, boolean, choice, currency, decimal, field, nullableInteger, text } from './fields';

/** An account's or campaign's slug (docs/affiliates.md "Slugs"). */
export const slug = text(40, {
  pattern: SLUG,
  patternMessage: 'Use 1 to 40 lower-case letters, digits and dashes, starting and ending with a letter or digit.',
});

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** An http(s) URL of at most 500 characters, or null. */
export function httpUrlOrNull(value: unknown): { ok: true; value: string | null } | { ok: false; message: string } {
  if (value === null || value === '') return { ok: true, value: null };
  if (typeof value !== 'string' || value.length > 500) return { ok: false, message: 'Enter a valid URL.' };
  try {
    const url = new URL(value.trim());
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password)
      return { ok: false, message: 'Enter an http or https URL.' };
    return { ok: true, value: url.toString() };
  } catch {
    return { ok: false, message: 'Enter a valid URL.' };
  }
}

function question(q: unknown, i: number): { ok: true; value: SignupQuestion } | { ok: false; message: string } {
  const at = `Question ${i + 1}`;
  if (!isRecord(q)) return { ok: false, message: `${at}: expected an object.` };
  const id = q.id;
  if (typeof id !== 'string' || !QUESTION_ID.test(id))
    return { ok: false, message: `${at}: id must be 1 to 30 lower-case letters, digits or underscores.` };
  const label = typeof q.label === 'string' ? q.label.trim() : '';
  if (label.length < 1 || label.length > 200) return { ok: false, message: `${at}: label must be 1 to 200 characters.` };
  const type = q.type ?? 'text';
  if (typeof type !== 'string' || !(QUESTION_TYPES as readonly string[]).includes(type))
    return { ok: false, message: `${at}: type must be one of ${QUESTION_TYPES.join(', ')}.` };
  if (q.required !== undefined && typeof q.required !== 'boolean') return { ok: false, message: `${at}: required must be a boolean.` };
  let options: string[] | null = null;
  if (type === 'choice') {
    const raw = q.options;
    if (!Array.isArray(raw) || raw.length < 2 || raw.length > 20) return { ok: false, message: `${at}: a choice needs 2 to 20 options.` };
    options = [];
    for (const o of raw) {
      if (typeof o !== 'string' || o.trim().length < 1 || o.trim().length > 100)
        return { ok: false, message: `${at}: each option is 1 to 100 characters.` };
      options.push(o.trim());
    }
    if (new Set(options).size !== options.length) return { ok: false, message: `${at}: the options must differ.` };
  } else if (q.options !== undefined && q.options !== null) {
    return { ok: false, message: `${at}: only a choice has options.` };
  }
  return { ok: true, value: { id, label, type: type as QuestionType, required: q.required === true, options } };
}

/**
 * A campaign's sign-up page settings. Any subset of the keys: PATCH merges it over the current settings,
 * create over the closed defaults. `questions`, when given, replaces the list.
 */
export const signup = field<Partial<SignupSettings>>(
  (value) => {
    if (!isRecord(value)) return { ok: false, message: 'Expected an object with enabled, approval, terms_url and questions.' };
    const unknown = Object.keys(value).filter((k) => !['enabled', 'approval', 'terms_url', 'questions'].includes(k));
    if (unknown.length > 0) return { ok: false, message: `Unknown setting: ${unknown[0]?.slice(0, 40)}.` };
    const out: Partial<SignupSettings> = {};
    if (value.enabled !== undefined) {
      if (typeof value.enabled !== 'boolean') return { ok: false, message: 'enabled must be a boolean.' };
      out.enabled = value.enabled;
    }
    if (value.approval !== undefined) {
      if (value.approval !== 'auto' && value.approval !== 'manual') return { ok: false, message: 'approval must be "auto" or "manual".' };
      out.approval = value.approval;
    }
    if (value.terms_url !== undefined) {
      const url = httpUrlOrNull(value.terms_url);
      if (!url.ok) return { ok: false, message: `terms_url: ${url.message}` };
      out.terms_url = url.value;
    }
    if (value.questions !== undefined) {
      if (!Array.isArray(value.questions)) return { ok: false, message: 'questions must be a list.' };
      if (value.questions.length > MAX_QUESTIONS) return { ok: false, message: `At most ${MAX_QUESTIONS} questions.` };
      const questions: SignupQuestion[] = [];
      for (const [i, q] of value.questions.entries()) {
        const parsed = question(q, i);
        if (!parsed.ok) return parsed;
        questions.push(parsed.value);
      }
      if (new Set(questions.map((q) => q.id)).size !== questions.length) return { ok: false, message: 'Each question needs its own id.' };
      out.questions = questions;
    }
    return { ok: true, value: out };
  },
  {
    type: 'object',
    properties: {
      enabled: { type: 'boolean' },
      approval: { type: 'string', enum: ['auto', 'manual'] },
      terms_url: { type: ['string', 'null'], format: 'uri', maxLength: 500 },
      questions: {
        type: 'array',
        maxItems: MAX_QUESTIONS,
        items: {
          type: 'object',
          required: ['id', 'label'],
          properties: {
            id: { type: 'string', pattern: QUESTION_ID.source },
            label: { type: 'string', minLength: 1, maxLength: 200 },
            type: { type: 'string', enum: [...QUESTION_TYPES] },
            required: { type: 'boolean' },
            options: { type: ['array', 'null'], items: { type: 'string', maxLength: 100 }, minItems: 2, maxItems: 20 },
          },
          additionalProperties: false,
        },
      },
    },
    additionalProperties: false,
    description:
      'The public sign-up page (docs/affiliates.md): `enabled`, `approval` (`auto` | `manual`), `terms_url` and up to 10 `questions` `{id, label, type: text|url|choice, required, options}`. A PATCH merges the keys it gives.',
  },
);

/** `percentage`, `flat` or null (no discount for the referred user). */
const discountType = field<DiscountType | null>((value) => {
  if (value === null) return { ok: true, value: null };
  if (typeof value === 'string' && (DISCOUNT_TYPES as string[]).includes(value)) return { ok: true, value: value as DiscountType };
  // Only scalars are quoted back: String() of an object can throw.
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
    return { ok: false, message: 'Not a valid string.' };
  return { ok: false, message: `"${String(value).slice(0, 40)}" is not a valid choice.` };
});

const holdDays = field<number>(
  (value) => {
    const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
    if (value === null) return { ok: false, message: 'This field may not be null.' };
    if (typeof n !== 'number' || !Number.isInteger(n)) return { ok: false, message: 'A valid integer is required.' };
    if (n < 0) return { ok: false, message: 'Ensure this value is greater than or equal to 0.' };
    if (n > 365) return { ok: false, message: 'Ensure this value is less than or equal to 365.' };
    return { ok: true, value: n };
  },
  { type: 'integer', minimum: 0, maximum: 365 },
);

const fields = {
  name: text(100),
  allows_credit: boolean,
  credit_amount: decimal,
  credit_currency: currency,
  allows_commission: boolean,
  commission_amount: decimal,
  commission_currency: currency,
  commission_months: nullableInteger(1),
  reward_threshold: decimal,
  // Double-sided campaigns (additive): the referred user's discount, see shared/domain/discounts.ts.
  referred_discount_type: discountType,
  referred_discount_amount: decimal,
  referred_discount_recurring: boolean,
  // Money terms (additive, docs/design/money.md "Commission terms").
  commission_type: choice(['fixed', 'percentage'] as const),
  commission_percent: decimal,
  hold_days: holdDays,
  approval: choice(['auto', 'manual'] as const),
  min_payout: decimal,
  // Affiliate programmes (additive, docs/affiliates.md).
  slug,
  signup,
};

export const createCampaignBody = v.object(
  {
    name: fields.name,
    allows_credit: v.optional(fields.allows_credit, false),
    credit_amount: v.optional(fields.credit_amount, 0),
    credit_currency: v.optional(fields.credit_currency, 'USD'),
    allows_commission: v.optional(fields.allows_commission, false),
    commission_amount: v.optional(fields.commission_amount, 0),
    commission_currency: v.optional(fields.commission_currency, 'USD'),
    commission_months: v.optional(fields.commission_months, null),
    reward_threshold: v.optional(fields.reward_threshold, 0),
    referred_discount_type: v.optional(fields.referred_discount_type, null),
    referred_discount_amount: v.optional(fields.referred_discount_amount, 0),
    referred_discount_recurring: v.optional(fields.referred_discount_recurring, false),
    commission_type: v.optional(fields.commission_type, 'fixed'),
    commission_percent: v.optional(fields.commission_percent, 0),
    hold_days: v.optional(fields.hold_days, 30),
    approval: v.optional(fields.approval, 'auto'),
    min_payout: v.optional(fields.min_payout, 0),
    // Derived from the name when absent (store/campaigns.ts).
    slug: v.optional(fields.slug),
    signup: v.optional(fields.signup),
  },
  REQUIRED,
);

export const updateCampaignBody = v.partial(v.object(fields, REQUIRED));

export type CreateCampaignInput = v.InferOutput<typeof createCampaignBody>;
export type UpdateCampaignInput = v.InferOutput<typeof updateCampaignBody>;
