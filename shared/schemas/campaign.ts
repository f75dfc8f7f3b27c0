// Campaign bodies. Create has the specification's defaults; update (PATCH) takes any subset.
import * as v from 'valibot';
import { DISCOUNT_TYPES, type DiscountType } from '../domain/discounts';
import { REQUIRED, boolean, choice, currency, decimal, field, nullableInteger, text } from './fields';

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
  },
  REQUIRED,
);

export const updateCampaignBody = v.partial(v.object(fields, REQUIRED));

export type CreateCampaignInput = v.InferOutput<typeof createCampaignBody>;
export type UpdateCampaignInput = v.InferOutput<typeof updateCampaignBody>;
