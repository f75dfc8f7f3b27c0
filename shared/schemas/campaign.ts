// Campaign bodies. Create has the specification's defaults; update (PATCH) takes any subset.
import * as v from 'valibot';
import { REQUIRED, boolean, currency, decimal, nullableInteger, text } from './fields';

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
  },
  REQUIRED,
);

export const updateCampaignBody = v.partial(v.object(fields, REQUIRED));

export type CreateCampaignInput = v.InferOutput<typeof createCampaignBody>;
export type UpdateCampaignInput = v.InferOutput<typeof updateCampaignBody>;
