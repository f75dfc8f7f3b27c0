// POST /v1/fraud-rules/preview/ (docs/fraud.md "Preview"): what one rule, with the action and thresholds
// an operator is about to save, would have done over the last 90 days of recorded facts. Read-only.
//
// The rule runs as the screening worker runs it (shared/flows/fraud-screen.ts), with the same pure
// functions (domain/fraud-rules.ts):
// - duplicate_ip and disposable_email: each referral and application created in the 90 days, against the
//   referrals (of its member) and applications of its window;
// - click_spam, refund_rate, velocity: each member at the end of each day of the 90 on which the worker
//   would have screened it (a conversion or a refund of one of its referrals that day), one finding per
//   rule, member and day at most (the dedupe key);
// - self_referral is decided inside the conversion's transaction from what the provider tells at that
//   moment, which is recorded nowhere else: the preview counts the referrals it flagged in the 90 days.
// `would_hold` counts the unpaid commissions (neither voided nor paid) those holds would have put in `held`,
// each once. Reads are bounded: at most PREVIEW_REFERRALS referrals (newest first), PREVIEW_APPLICATIONS
// applications and PREVIEW_MEMBERS members; `partial` says a cap was reached.
import type { FraudAction, FraudFinding, FraudPreview, FraudRule, FraudSettings } from '../domain/fraud';
import { ValidationError } from '../domain/errors';
import {
  type ApplicationFact,
  evaluateApplication,
  evaluateMember,
  evaluateReferral,
  memberDaysNeeded,
  type ReferralFact,
  utcDay,
} from '../domain/fraud-rules';
import { THRESHOLD_LIMITS } from '../schemas/fraud';
import { loadFraudSettings } from '../store/fraud-settings';
import { applicationKeys, listKeys } from '../store/table';
import { idFrom, memberDays, queryNewest, REFERRAL_FACT_ATTRIBUTES, refundTimes, toApplicationFact, toReferralFact } from './fraud-facts';

const DAY = 86_400;
const HOUR = 3600;
export const PREVIEW_DAYS = 90;
export const PREVIEW_REFERRALS = 20_000;
export const PREVIEW_APPLICATIONS = 5000;
export const PREVIEW_MEMBERS = 1000;
const EXAMPLES = 10;
/** Members' buckets read at once. */
const CONCURRENCY = 8;

export interface PreviewRequest {
  rule: FraudRule;
  action?: FraudAction | undefined;
  thresholds?: Record<string, number> | undefined;
}

/** The thresholds checked against the rule's limits (400 keyed `thresholds`). */
export function checkThresholds(rule: FraudRule, thresholds: Record<string, number>): void {
  const limits: Record<string, [number, number]> = THRESHOLD_LIMITS[rule];
  const names = Object.keys(limits);
  for (const [name, value] of Object.entries(thresholds)) {
    const limit = Object.hasOwn(limits, name) ? limits[name] : undefined;
    if (!limit)
      throw ValidationError.field(
        'thresholds',
        names.length
          ? `${name.slice(0, 40)}: not a threshold of ${rule} (${names.join(', ')}).`
          : `${name.slice(0, 40)}: ${rule} takes no thresholds.`,
      );
    if (!Number.isInteger(value)) throw ValidationError.field('thresholds', `${name}: a valid integer is required.`);
    if (value < limit[0] || value > limit[1])
      throw ValidationError.field('thresholds', `${name}: must be between ${limit[0]} and ${limit[1]}.`);
  }
}

/** The account's settings with only `rule` on, at the action and thresholds tried. */
function trial(current: FraudSettings, req: PreviewRequest): { settings: FraudSettings; action: FraudAction } {
  const settings = structuredClone(current) as FraudSettings;
  for (const rule of Object.keys(settings) as FraudRule[]) settings[rule].action = 'off';
  const action = req.action ?? current[req.rule].action;
  Object.assign(settings[req.rule], req.thresholds ?? {}, { action });
  return { settings, action };
}

type Stored = Record<string, unknown>;

/** The unpaid commissions of a referral item (neither voided nor paid): what a hold would take. */
function unpaidCommissions(item: Stored): string[] {
  const rewards = (item.rewards as Stored[] | undefined) ?? [];
  return rewards
    .filter((r) => r.type === 'commission' && typeof r.amount === 'number' && r.amount > 0)
    .filter((r) => r.status !== 'voided' && r.status !== 'paid' && r.status !== 'applied')
    .map((r) => String(r.id));
}

async function inBatches<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

interface Found {
  finding: FraudFinding;
  at: number;
  /** The reward ids its hold would take. */
  rewards: string[];
}

/** The read caps (the tests lower them to show `partial`). */
export interface PreviewCaps {
  referrals: number;
  applications: number;
  members: number;
}
const CAPS: PreviewCaps = { referrals: PREVIEW_REFERRALS, applications: PREVIEW_APPLICATIONS, members: PREVIEW_MEMBERS };

export async function previewRule(accountId: string, req: PreviewRequest, now: number, caps: PreviewCaps = CAPS): Promise<FraudPreview> {
  checkThresholds(req.rule, req.thresholds ?? {});
  const { settings, action } = trial(await loadFraudSettings(accountId), req);
  const answer = (found: Found[], partial: boolean): FraudPreview => {
    const unique = [...new Map(found.map((f) => [f.finding.dedupe_key, f])).values()].sort(
      (a, b) => b.at - a.at || (a.finding.subject.id < b.finding.subject.id ? 1 : a.finding.subject.id > b.finding.subject.id ? -1 : 0),
    );
    const held = new Set(action === 'hold' ? unique.flatMap((f) => f.rewards) : []);
    return {
      rule: req.rule,
      action,
      window_days: PREVIEW_DAYS,
      would_flag: action === 'off' ? 0 : unique.length,
      would_hold: held.size,
      examples:
        action === 'off'
          ? []
          : unique.slice(0, EXAMPLES).map((f) => ({
              subject_type: f.finding.subject.type,
              subject_id: f.finding.subject.id,
              member_id: f.finding.member_id,
              detail: f.finding.detail,
              at: f.at,
            })),
      partial,
    };
  };
  if (action === 'off') return answer([], false);

  const from = now - PREVIEW_DAYS * DAY;
  const rule = req.rule;
  // How far before the 90 days the facts of a window reach back.
  const lookback =
    rule === 'duplicate_ip'
      ? settings.duplicate_ip.window_hours * HOUR
      : rule === 'refund_rate' || rule === 'velocity' || rule === 'click_spam'
        ? Math.max(settings.refund_rate.window_days, settings.velocity.history_days, PREVIEW_DAYS) * DAY
        : 0;
  const wantsApplications = rule === 'duplicate_ip' || rule === 'disposable_email';
  const wantsMembers = rule === 'click_spam' || rule === 'refund_rate' || rule === 'velocity';

  const [referrals, applications, members] = await Promise.all([
    queryNewest({
      partitionValue: listKeys.referralCollection(accountId),
      from: idFrom(from - lookback),
      cap: caps.referrals,
      attributes: REFERRAL_FACT_ATTRIBUTES,
    }),
    wantsApplications
      ? queryNewest({
          partitionValue: applicationKeys.applicationCollection(accountId),
          from: `app_${idFrom(from - lookback)}`,
          cap: caps.applications,
        })
      : Promise.resolve({ items: [], truncated: false }),
    wantsMembers
      ? queryNewest({ partitionValue: listKeys.memberCollection(accountId), from: '0', cap: caps.members })
      : Promise.resolve({ items: [], truncated: false }),
  ]);
  const partial = referrals.truncated || applications.truncated || members.truncated;
  const referralItems = referrals.items.filter((i) => i.type === 'Referral');
  const facts = referralItems.map((item) => ({ item, fact: toReferralFact(item) }));
  const found: Found[] = [];

  if (rule === 'self_referral') {
    for (const { item, fact } of facts) {
      const flags = ((item.fraud_flags as Stored[] | undefined) ?? []).filter(
        (f) => f.rule === 'self_referral' && typeof f.at === 'number' && f.at >= from,
      );
      const flag = flags[0];
      if (!flag) continue;
      found.push({
        finding: {
          rule,
          subject: { type: 'referral', id: fact.id },
          member_id: fact.member_id,
          detail: String(flag.detail ?? ''),
          evidence: { referral_ids: [fact.id] },
          dedupe_key: `self_referral#referral#${fact.id}`,
        },
        at: flag.at as number,
        rewards: unpaidCommissions(item),
      });
    }
    return answer(found, partial);
  }

  if (rule === 'duplicate_ip' || rule === 'disposable_email') {
    // A referral's window: its member's referrals from the same network (grouped once).
    const byNetwork = new Map<string, ReferralFact[]>();
    for (const { fact } of facts) {
      if (!fact.ip_hash) continue;
      const key = `${fact.member_id}|${fact.ip_hash}`;
      byNetwork.set(key, [...(byNetwork.get(key) ?? []), fact]);
    }
    for (const { item, fact } of facts) {
      if (fact.created_at < from) continue;
      const sameMember = fact.ip_hash ? (byNetwork.get(`${fact.member_id}|${fact.ip_hash}`) ?? []) : [];
      for (const finding of evaluateReferral(settings, fact, { sameMember }, now)) {
        found.push({ finding, at: fact.created_at, rewards: unpaidCommissions(item) });
      }
    }
    const apps = applications.items.filter((i) => i.type === 'Application').map(toApplicationFact);
    const appsByNetwork = new Map<string, ApplicationFact[]>();
    for (const a of apps) if (a.ip_hash) appsByNetwork.set(a.ip_hash, [...(appsByNetwork.get(a.ip_hash) ?? []), a]);
    for (const a of apps) {
      if (a.created_at < from) continue;
      const recent = a.ip_hash ? (appsByNetwork.get(a.ip_hash) ?? []) : [];
      for (const finding of evaluateApplication(settings, a, { recent }, now)) found.push({ finding, at: a.created_at, rewards: [] });
    }
    return answer(found, partial);
  }

  // Member-level: each member on each day the worker would have screened it.
  const byMember = new Map<string, { fact: ReferralFact; item: Stored }[]>();
  for (const f of facts) byMember.set(f.fact.member_id, [...(byMember.get(f.fact.member_id) ?? []), f]);
  const memberIds = members.items.filter((i) => i.type === 'Member').map((i) => String(i.sk));
  const bucketDays = PREVIEW_DAYS + memberDaysNeeded(settings);
  await inBatches(memberIds, CONCURRENCY, async (memberId) => {
    const own = byMember.get(memberId) ?? [];
    const days = await memberDays(accountId, memberId, bucketDays, now);
    const screened = new Set<string>();
    for (const d of days) if (d.conversions > 0 && d.day >= utcDay(from)) screened.add(d.day);
    for (const { item } of own) for (const t of refundTimes(item)) if (t >= from && t <= now) screened.add(utcDay(t));
    if (screened.size === 0) return;
    const converted = own.filter((o) => o.fact.converted_at !== null).map((o) => ({ fact: o.fact, refunds: refundTimes(o.item) }));
    const rewards = own.flatMap((o) => unpaidCommissions(o.item));
    for (const day of screened) {
      const at = Math.min(now, Date.parse(`${day}T23:59:59Z`) / 1000);
      const upTo = days.filter((d) => d.day <= day);
      // The referrals as they stood then: converted by then, refunded by then.
      const then = converted
        .filter((c) => (c.fact.converted_at as number) <= at)
        .map((c) => ({ ...c.fact, refunded: c.refunds.some((t) => t <= at) }));
      for (const finding of evaluateMember(settings, memberId, { days: upTo, converted: then }, at)) {
        found.push({ finding, at, rewards });
      }
    }
  });
  return answer(found, partial);
}
