// Query-string schemas for the list endpoints. A list refuses a parameter it does not take (400 keyed by
// the parameter, docs/api.md "Query parameters"), so a misspelt filter never silently lists everything.
import * as v from 'valibot';
import { field } from './fields';
import { PAYOUT_STATUSES, REWARD_STATUSES, type PayoutStatus, type RewardStatus } from '../domain/lifecycle';
import { isCurrencyCode } from '../domain/currency';
import { SUB, SUB_MESSAGE } from '../domain/links';

export const pageSize = field<number>(
  (value) => {
    // Query values are strings; the number is the schema's own default (so the document says `default: 20`).
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n)) return { ok: false, message: 'A valid integer is required.' };
    if (n < 1) return { ok: false, message: 'Ensure this value is greater than or equal to 1.' };
    if (n > 100) return { ok: false, message: 'Ensure this value is less than or equal to 100.' };
    return { ok: true, value: n };
  },
  { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Results per page.' },
);

const cursor = v.optional(
  v.pipe(v.string(), v.description('Opaque cursor from a `next` or `previous` link; only valid with the filters it was issued for.')),
);

export const pageQuery = { page_size: v.optional(pageSize, 20), cursor };

/** A list's query: these parameters and no other (an unknown one is a 400 that names it). */
export function listQuery<E extends v.ObjectEntries>(entries: E) {
  const names = Object.keys(entries);
  const accepted = names.length > 0 ? `This list takes: ${names.join(', ')}.` : 'This list takes none.';
  return v.strictObject(entries, (issue) =>
    issue.expected === 'never' ? `Unknown query parameter. ${accepted}` : 'Invalid query string.',
  );
}

/** Lists that return everything at once (the team, the API keys): no parameter at all. */
export const noQuery = listQuery({});

const search = (description: string) =>
  v.optional(v.pipe(v.string(), v.maxLength(320, 'Ensure this field has no more than 320 characters.'), v.description(description)));

/** A sub-id filter (reports, referrals, exports): with `member`, since a sub-id is one member's. */
const subFilter = (description: string) =>
  v.optional(v.pipe(v.string(), v.regex(SUB, SUB_MESSAGE), v.description(`${description} Needs \`member\`.`)));

export const listReferralsQuery = listQuery({
  ...pageQuery,
  member: v.optional(v.pipe(v.string(), v.description('Only referrals made by this member (id).'))),
  sub: subFilter("Only referrals made through this sub-id (a named link's slug)."),
  search: search('Only the referral of this referred user: their `user_identifier`, exactly (case-sensitive).'),
});
export const listMembersQuery = listQuery({
  ...pageQuery,
  campaign: v.optional(v.pipe(v.string(), v.description('Only members of this campaign (id).'))),
  search: search(
    'Only members whose email or code equals this (either case), or whose identifier equals it as typed or in lower case. Exact matches, not substrings.',
  ),
});
export const listCampaignsQuery = listQuery(pageQuery);
/** Lists without filters (webhook endpoints, deliveries). */
export const pageOnlyQuery = listQuery(pageQuery);

export const SUBSCRIPTION_STATUSES = ['active', 'trialling', 'past_due', 'deleted', 'paused'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** The specification's status words; Paddle's spelling `trialing` is accepted for `trialling`. */
export const statusFilter = field<SubscriptionStatus>(
  (value) => {
    const s = value === 'trialing' ? 'trialling' : value;
    if (typeof s === 'string' && (SUBSCRIPTION_STATUSES as readonly string[]).includes(s)) {
      return { ok: true, value: s as SubscriptionStatus };
    }
    return { ok: false, message: `Select a valid choice. ${String(value)} is not one of the available choices.` };
  },
  {
    type: 'string',
    enum: [...SUBSCRIPTION_STATUSES, 'trialing'],
    description: "Only subscriptions in this status (Paddle's `trialing` is accepted for `trialling`).",
  },
);

export const listSubscriptionsQuery = listQuery({ ...pageQuery, status: v.optional(statusFilter) });

// ---- money (docs/design/money.md) ----

function choiceFilter<T extends string>(choices: readonly T[], description: string) {
  return field<T>(
    (value) => {
      if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return { ok: true, value: value as T };
      return { ok: false, message: `Select a valid choice. ${String(value)} is not one of the available choices.` };
    },
    { type: 'string', enum: [...choices], description },
  );
}

const currencyFilter = field<string>(
  (value) => {
    if (typeof value === 'string' && isCurrencyCode(value.trim())) return { ok: true, value: value.trim().toUpperCase() };
    return { ok: false, message: `"${String(value).slice(0, 20)}" is not a valid currency code.` };
  },
  { type: 'string', description: 'Only payouts in this currency (ISO 4217).' },
);

export const listRewardsQuery = listQuery({
  ...pageQuery,
  status: v.optional(choiceFilter<RewardStatus>(REWARD_STATUSES, 'Only rewards in this status.')),
  member: v.optional(v.pipe(v.string(), v.description('Only rewards of this member (id).'))),
  campaign: v.optional(v.pipe(v.string(), v.description('Only rewards of referrals made in this campaign (id).'))),
  type: v.optional(choiceFilter(['credit', 'commission'] as const, 'Only credits or only commissions.')),
});

export const listPayoutsQuery = listQuery({
  ...pageQuery,
  status: v.optional(choiceFilter<PayoutStatus>(PAYOUT_STATUSES, 'Only payouts in this status.')),
  member: v.optional(v.pipe(v.string(), v.description("Only this member's payouts (id)."))),
  currency: v.optional(currencyFilter),
  batch_id: v.optional(v.pipe(v.string(), v.description("Only this batch's payouts (pb_…); not combined with the other filters."))),
});

export const listPayoutBatchesQuery = listQuery({
  ...pageQuery,
  status: v.optional(choiceFilter(['processing', 'paid', 'failed'] as const, 'Only batches in this status.')),
});

// ---- reports (docs/design/money.md "Reports") ----
const unixSeconds = (description: string) =>
  field<number>(
    (value) => {
      const n = typeof value === 'string' && /^\s*\d{1,11}\s*$/.test(value) ? Number(value) : NaN;
      if (!Number.isInteger(n)) return { ok: false, message: 'A valid integer is required (unix seconds).' };
      if (n > 4_102_444_800) return { ok: false, message: 'Ensure this value is less than or equal to 4102444800.' };
      return { ok: true, value: n };
    },
    { type: 'integer', minimum: 0, description },
  );

const reportRange = {
  from: v.optional(unixSeconds('Start of the range, UTC unix seconds (default: 30 days before `to`).')),
  to: v.optional(unixSeconds('End of the range, UTC unix seconds (default: now). A range is at most 400 days.')),
  campaign: v.optional(v.pipe(v.string(), v.description('Only this campaign (id).'))),
  member: v.optional(v.pipe(v.string(), v.description('Only this member (id).'))),
};

export const timeseriesQuery = v.object({
  sub: subFilter("Only the member's clicks, referrals and conversions through this sub-id (a named link's slug)."),
  metric: choiceFilter(
    ['link_clicks', 'referrals', 'conversions', 'revenue', 'refunds', 'credit_earned', 'commission_earned', 'commission_paid'] as const,
    'What to count: a number per bucket, or money per currency.',
  ),
  interval: v.optional(choiceFilter(['day', 'week', 'month'] as const, 'Bucket size (weeks start on Monday, UTC).'), 'day'),
  ...reportRange,
});

export const overviewQuery = v.object(reportRange);

const limit = field<number>(
  (value) => {
    // The default is the schema's own number; query values are strings.
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > 100) return { ok: false, message: 'Ensure this value is between 1 and 100.' };
    return { ok: true, value: n };
  },
  { type: 'integer', minimum: 1, maximum: 100, default: 10 },
);

export const topMembersQuery = v.object({
  sort: v.optional(
    choiceFilter(
      ['conversions', 'revenue', 'commission'] as const,
      'Rank by conversions, revenue of referred users, or commission earned.',
    ),
    'conversions',
  ),
  from: reportRange.from,
  to: reportRange.to,
  limit: v.optional(limit, 10),
  currency: v.optional(currencyFilter),
});

const exportPageSize = field<number>(
  (value) => {
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > 10_000) return { ok: false, message: 'Ensure this value is between 1 and 10000.' };
    return { ok: true, value: n };
  },
  {
    type: 'integer',
    minimum: 1,
    maximum: 10_000,
    default: 10_000,
    description: 'Rows per response; follow the `Link: rel="next"` header for the rest.',
  },
);

/** Every list's filters (each export uses its own: members campaign; referrals member; rewards status, member, campaign, type; payouts status, member, currency; payout batches status; subscriptions status). */
export const exportQuery = listQuery({
  page_size: v.optional(exportPageSize, 10_000),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(600), v.description('From the `Link: rel="next"` header.'))),
  status: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[a-z_]{1,20}$/),
      v.description("rewards, payouts, payout-batches, subscriptions: the list's status filter."),
    ),
  ),
  member: v.optional(v.pipe(v.string(), v.maxLength(64), v.description('referrals, rewards, payouts: one member (id).'))),
  sub: subFilter('referrals: only those made through this sub-id.'),
  campaign: v.optional(v.pipe(v.string(), v.maxLength(64), v.description('members, rewards: one campaign (id).'))),
  type: v.optional(choiceFilter(['credit', 'commission'] as const, 'rewards: credits or commissions.')),
  currency: v.optional(currencyFilter),
});
