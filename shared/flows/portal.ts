// What the member portal shows (docs/portal.md), all of it scoped by
// the portal session's account and member: nothing here takes a member id from the request.
//
// The member sees their own email and payout address, but of the users they referred only a masked
// identifier (domain/portal.ts maskIdentifier); no provider ids, payment ids or other members' ids.
import type { LedgerReward, Payout } from '../domain/lifecycle';
import type { Campaign, Referral } from '../domain/models';
import { formatCents } from '../domain/money';
import { memberStatsView, payoutMethodView } from '../domain/views';
import { campaignTermsInput, discountText, maskIdentifier, PORTAL_SESSION_ENDED, shareLink, termsText } from '../domain/portal';
import { DetailError, NotFoundError } from '../domain/errors';
import type { PayoutMethod } from '../domain/payout-methods';
import type { RailKind } from '../rails/definition';
import { getItem } from '../store/ops';
import { toMember, updateMember, withRelations, type MemberWithRelations } from '../store/members';
import { listRewards, listPayouts } from '../store/money-lists';
import { listReferrals } from '../store/referrals';
import type { PortalSession } from '../store/portal';
import { dayOf, readDays, subScope } from '../store/reports';
import { keys } from '../store/table';
import { memberChanged } from './members';
import { checkPayoutMethod, connectedRails } from './payout-methods';
import { bucketStart, type Interval } from './reports';

const DAY = 86_400;

function campaignTerms(c: Campaign | null) {
  if (!c) return null;
  const terms = campaignTermsInput(c);
  const { reward_type: type, amount, percent, currency, months } = terms;
  return {
    name: c.name,
    reward_type: type,
    reward_amount: percent === null && type !== null ? formatCents(amount) : null,
    reward_percent: percent === null ? null : formatCents(percent),
    currency,
    commission_months: months,
    reward_threshold: formatCents(c.reward_threshold),
    hold_days: type === 'commission' ? c.hold_days : null,
    min_payout: type === 'commission' ? formatCents(c.min_payout) : null,
    referred_discount: discountText(c),
    description: termsText(terms),
  };
}

/** What GET and PATCH /portal/v1/me/ answer. */
function meView(
  session: PortalSession,
  { member, campaign, subscription }: MemberWithRelations,
  account: Record<string, unknown>,
  taxGiven: boolean,
  rails: readonly RailKind[],
) {
  const referralUrl = typeof account.referral_url === 'string' ? account.referral_url : null;
  return {
    // `payout_methods`: the rails the programme connected, the methods the member may choose (besides none).
    program: { name: String(account.name ?? ''), portal: portalName(session.accountId, account), payout_methods: [...rails] },
    member: {
      first_name: member.first_name,
      last_name: member.last_name,
      email: member.email,
      code: member.code,
      link: shareLink(referralUrl, member.code),
      email_opt_out: member.email_opt_out,
      payout_email: member.payout_email,
      ...payoutMethodView(member),
      has_subscription: subscription !== null,
      joined_at: member.created_at,
    },
    campaign: campaignTerms(campaign),
    stats: memberStatsView(member, campaign),
    session: { expires_at: session.expiresAt, return_url: session.returnUrl, mode: session.mode },
    tax_details: { required: account.tax_details_required === true, provided: taxGiven },
  };
}

/** The account's name in portal paths: its slug, else its id. */
export const portalName = (accountId: string, account: Record<string, unknown>): string =>
  typeof account.slug === 'string' && account.slug.length > 0 ? account.slug : accountId;

export async function accountOf(session: PortalSession): Promise<Record<string, unknown>> {
  const account = await getItem(keys.account(session.accountId), false);
  if (!account) throw new NotFoundError();
  return account;
}

/** GET /portal/v1/me/: who the member is, their link, their campaign's terms, their totals and the session. */
export async function portalMe(session: PortalSession) {
  // The member's item as stored (its `tax_details_at` is not part of the Member model), then its relations.
  const read = async () => {
    const item = await getItem(keys.member(session.accountId, session.memberId));
    const member = toMember(item);
    if (!member) throw new NotFoundError();
    const [related] = await withRelations(session.accountId, [member]);
    return { related: related as MemberWithRelations, taxGiven: typeof item?.tax_details_at === 'number' };
  };
  const [{ related, taxGiven }, account, rails] = await Promise.all([
    memberOf(session, read),
    accountOf(session),
    connectedRails(session.accountId),
  ]);
  return meView(session, related, account, taxGiven, rails);
}

/** The session's member; a member deleted since the session opened ends it (401, as a revocation does). */
export async function memberOf<T>(_session: PortalSession, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof NotFoundError) throw new DetailError(401, PORTAL_SESSION_ENDED, { 'WWW-Authenticate': 'Bearer' });
    throw err;
  }
}

/** PATCH /portal/v1/me/: the member's only writes, their payout address and method and their email opt-out. */
export async function updatePortalMe(
  session: PortalSession,
  patch: { payout_email?: string | null | undefined; email_opt_out?: boolean | undefined; payout_method?: PayoutMethod | null | undefined },
) {
  const changes = {
    ...(patch.payout_email !== undefined ? { payout_email: patch.payout_email } : {}),
    ...(patch.email_opt_out !== undefined ? { email_opt_out: patch.email_opt_out } : {}),
    ...(patch.payout_method !== undefined ? { payout_method: patch.payout_method } : {}),
  };
  // One Query of the connected rails, beside the member's reads: the check of a method chosen (before the
  // write) and the answer's list.
  const railsRead = connectedRails(session.accountId);
  railsRead.catch(() => undefined);
  const guard = changes.payout_method ? checkPayoutMethod(session.accountId, changes.payout_method, railsRead) : undefined;
  const related = await memberOf(session, () => updateMember(session.accountId, session.memberId, changes, guard));
  // What follows from the change (a payout email or method), as after PATCH /v1/members/{id}/.
  const [account, item, rails] = await Promise.all([
    accountOf(session),
    getItem(keys.member(session.accountId, session.memberId)),
    railsRead,
    memberChanged(session.accountId, related.member, changes),
  ]);
  return meView(session, related, account, typeof item?.tax_details_at === 'number', rails);
}

/** How far back each interval of the portal's chart reaches. */
export const STATS_WINDOW: Record<Interval, number> = { day: 30, week: 12 * 7, month: 365 };

/**
 * GET /portal/v1/stats/: clicks, referrals and conversions per bucket over the interval's window (one Query);
 * with `sub`, those through one of the member's sub-ids.
 */
export async function portalStats(session: PortalSession, interval: Interval, now = Math.floor(Date.now() / 1000), sub?: string) {
  const to = now;
  const from = bucketStart(dayOf(now - (STATS_WINDOW[interval] - 1) * DAY), interval);
  const scope = sub ? subScope(session.memberId, sub) : `M#${session.memberId}`;
  const days = await readDays(session.accountId, scope, dayOf(from), dayOf(to));
  const buckets: { start: number; link_clicks: number; referrals: number; conversions: number }[] = [];
  const index = new Map<number, (typeof buckets)[number]>();
  for (let day = from; day <= to; day += DAY) {
    const start = bucketStart(dayOf(day), interval);
    if (!index.has(start)) {
      const bucket = { start, link_clicks: 0, referrals: 0, conversions: 0 };
      index.set(start, bucket);
      buckets.push(bucket);
    }
  }
  for (const [day, values] of days) {
    const bucket = index.get(bucketStart(day, interval));
    if (!bucket) continue;
    bucket.link_clicks += values.link_clicks ?? 0;
    bucket.referrals += values.referrals ?? 0;
    bucket.conversions += values.conversions ?? 0;
  }
  return { interval, from, to, buckets };
}

function referralStatus(r: Referral): 'signed_up' | 'paying' | 'canceled' {
  if (r.converted_at === null) return 'signed_up';
  return r.subscription && r.subscription.status === 'deleted' ? 'canceled' : 'paying';
}

export function portalReferralView(r: Referral) {
  const earned = r.rewards.filter((w) => (w as { status?: string }).status !== 'voided').reduce((a, w) => a + w.amount, 0);
  return {
    id: r.id,
    user: maskIdentifier(r.user_identifier),
    created_at: r.created_at,
    converted_at: r.converted_at,
    status: referralStatus(r),
    sub: r.sub ?? null,
    earned: formatCents(earned),
    currency: r.currency,
  };
}

/** Where a credit stands at the payment provider, for the member. */
function creditStanding(r: LedgerReward, hasSubscription: boolean): 'applied' | 'next_bill' | 'needs_subscription' | null {
  if (r.type !== 'credit' || r.amount <= 0) return null;
  if (r.status === 'applied') return 'applied';
  if (r.status !== 'pending') return null;
  return hasSubscription ? 'next_bill' : 'needs_subscription';
}

/**
 * A reward as its member sees it. A held one (docs/fraud.md "Holds") says so (`held`) and shows no approval
 * date: it is approved only if an operator releases it.
 */
export function portalRewardView(r: LedgerReward, hasSubscription: boolean) {
  return {
    id: r.id,
    type: r.type,
    amount: formatCents(r.amount),
    currency: r.currency,
    status: r.status,
    created_at: r.created_at,
    approves_at: r.status === 'held' ? null : r.approves_at,
    approved_at: r.approved_at,
    paid_at: r.paid_at,
    voided_at: r.voided_at,
    void_reason: r.void_reason,
    is_clawback: r.reverses !== undefined,
    credit_standing: creditStanding(r, hasSubscription),
  };
}

export function portalPayoutView(p: Payout) {
  return {
    id: p.id,
    amount: formatCents(p.amount),
    currency: p.currency,
    status: p.status,
    reward_count: p.reward_ids.length,
    created_at: p.created_at,
    paid_at: p.paid_at,
    payout_email: p.payout_email,
  };
}

type Page = { pageSize: number; cursor?: string | undefined };

export async function portalReferrals(session: PortalSession, page: Page) {
  const result = await listReferrals(session.accountId, page, session.memberId);
  return { ...result, results: result.items.map(portalReferralView) };
}

export async function portalRewards(session: PortalSession, page: Page) {
  const [result, member] = await Promise.all([
    listRewards(session.accountId, page, { member: session.memberId }),
    getItem(keys.member(session.accountId, session.memberId)),
  ]);
  const hasSubscription = member?.subscription_id !== undefined && member?.subscription_id !== null;
  return { ...result, results: result.items.map((r) => portalRewardView(r, hasSubscription)) };
}

export async function portalPayouts(session: PortalSession, page: Page) {
  const result = await listPayouts(session.accountId, page, { member: session.memberId });
  return { ...result, results: result.items.map(portalPayoutView) };
}
