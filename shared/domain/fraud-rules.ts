// The fraud rules as pure functions over recorded facts (docs/fraud.md "The rules"). Each returns the
// findings of the rules whose action is not `off`, each explaining itself in words an operator reads
// without the settings at hand ("4 referrals from one network in 2 hours (more than 3 in 24 hours)"), with
// the evidence it counted and the key that makes a repeat of the same finding record nothing new.
//
// - Referral-level (duplicate_ip, disposable_email) and application rules flag their subject; their key is
//   `<rule>#referral#<id>` / `<rule>#application#<id>`, so a subject is flagged once per rule.
// - Member-level rules (click_spam, refund_rate, velocity) flag the member; their key carries the UTC day
//   they were found (`<rule>#member#<id>#<YYYY-MM-DD>`): at most one flag per rule, member and day.
// The facts are loaded by shared/flows/fraud-facts.ts. The disposable-address list (./disposable-domains.ts,
// about 170 KB of JSON) is required on the first email looked up: in a Lambda bundle it is a file of its own
// (infra/cloud/bundling.ts lazyModules), so only a function that runs disposable_email reads it.
import type { FraudFinding, FraudSettings } from './fraud';

/** The listed disposable-address domain an email is at (its own or a parent domain), or null. */
export function disposableDomainOf(email: string | null): string | null {
  if (!email) return null;
  return (require('./disposable-domains') as typeof import('./disposable-domains')).disposableDomainOf(email);
}

/** A referral as the rules see it. */
export interface ReferralFact {
  id: string;
  member_id: string;
  /** Unix seconds. */
  created_at: number;
  /** The client address's digest (domain/visitors.ts ipHash): browser-script referrals only, else null. */
  ip_hash: string | null;
  /** The referred user's email: the user identifier when it is an address, else the subscription's; null when unknown. */
  email: string | null;
  converted_at: number | null;
  /** A payment of its subscription was refunded (a reward voided as refunded, or a clawback). */
  refunded: boolean;
}

/** An application as the rules see it. */
export interface ApplicationFact {
  id: string;
  campaign_id: string;
  /** Unix seconds. */
  created_at: number;
  ip_hash: string | null;
  email: string;
  /** The member an approval created (null or absent while pending or rejected). */
  member_id?: string | null;
}

/** One UTC day of a member's report bucket. */
export interface MemberDay {
  /** `YYYY-MM-DD`. */
  day: string;
  link_clicks: number;
  conversions: number;
  /** Referrals created that day (the member's history: velocity). */
  referrals: number;
}

const DAY = 86_400;
/** At most this many ids in a finding's evidence (the figures give the full count). */
export const EVIDENCE_IDS = 100;

/** `YYYY-MM-DD` (UTC) of unix seconds. */
export const utcDay = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);
/** Unix seconds of a `YYYY-MM-DD` day's start (UTC). */
const dayStart = (day: string): number => Date.parse(`${day}T00:00:00Z`) / 1000;

const n = (value: number): string => value.toLocaleString('en-US');
const plural = (count: number, one: string, many = `${one}s`): string => `${n(count)} ${count === 1 ? one : many}`;

/** A span of time in words: minutes under an hour, else hours under two days, else days. */
export function span(seconds: number): string {
  const s = Math.max(0, seconds);
  if (s < 3600) return plural(Math.max(1, Math.round(s / 60)), 'minute');
  if (s < 2 * DAY) return plural(Math.round(s / 3600), 'hour');
  return plural(Math.round(s / DAY), 'day');
}

const within = (windowSeconds: number, subjectAt: number) => (at: number) => at <= subjectAt && subjectAt - at < windowSeconds;

/** Newest first, by creation time then id (ids are time-ordered). */
const newestFirst = <T extends { id: string; created_at: number }>(a: T, b: T) =>
  b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** The subject and its window's others with the same address digest, once each. */
function sameNetwork<T extends { id: string; created_at: number; ip_hash: string | null }>(
  subject: T,
  others: T[],
  windowHours: number,
): T[] {
  const inWindow = within(windowHours * 3600, subject.created_at);
  // Up to the subject: created before it (in the same second, a smaller time-ordered id).
  const upTo = (o: T) => o.created_at < subject.created_at || (o.created_at === subject.created_at && o.id < subject.id);
  const found = new Map<string, T>([[subject.id, subject]]);
  for (const o of others) if (o.ip_hash === subject.ip_hash && upTo(o) && inWindow(o.created_at) && !found.has(o.id)) found.set(o.id, o);
  return [...found.values()].sort(newestFirst);
}

/** Referral-level rules (duplicate_ip, disposable_email) for `subject`, with the member's referrals of the window. */
export function evaluateReferral(
  settings: FraudSettings,
  subject: ReferralFact,
  facts: { sameMember: ReferralFact[] },
  _now: number,
): FraudFinding[] {
  const findings: FraudFinding[] = [];
  const dup = settings.duplicate_ip;
  if (dup.action !== 'off' && subject.ip_hash) {
    const matches = sameNetwork(
      subject,
      facts.sameMember.filter((r) => r.member_id === subject.member_id),
      dup.window_hours,
    );
    if (matches.length > dup.max_referrals) {
      const first = matches[matches.length - 1] as ReferralFact;
      findings.push({
        rule: 'duplicate_ip',
        subject: { type: 'referral', id: subject.id },
        member_id: subject.member_id,
        detail: `${plural(matches.length, 'referral')} from one network in ${span(subject.created_at - first.created_at)} (more than ${n(dup.max_referrals)} in ${plural(dup.window_hours, 'hour')}).`,
        evidence: {
          referral_ids: matches.slice(0, EVIDENCE_IDS).map((r) => r.id),
          figures: { referrals: matches.length, max_referrals: dup.max_referrals, window_hours: dup.window_hours },
        },
        dedupe_key: `duplicate_ip#referral#${subject.id}`,
      });
    }
  }
  const disposable = settings.disposable_email.action === 'off' ? null : disposableDomainOf(subject.email);
  if (disposable) {
    findings.push({
      rule: 'disposable_email',
      subject: { type: 'referral', id: subject.id },
      member_id: subject.member_id,
      detail: `The referred user's email address is at ${disposable}, a disposable-address service.`,
      evidence: { referral_ids: [subject.id] },
      dedupe_key: `disposable_email#referral#${subject.id}`,
    });
  }
  return findings;
}

/** Application rules (duplicate_ip, disposable_email) for `subject`, with the account's applications of the window. */
export function evaluateApplication(
  settings: FraudSettings,
  subject: ApplicationFact,
  facts: { recent: ApplicationFact[] },
  _now: number,
): FraudFinding[] {
  const findings: FraudFinding[] = [];
  const dup = settings.duplicate_ip;
  if (dup.action !== 'off' && subject.ip_hash) {
    const matches = sameNetwork(subject, facts.recent, dup.window_hours);
    if (matches.length > dup.max_referrals) {
      const first = matches[matches.length - 1] as ApplicationFact;
      findings.push({
        rule: 'duplicate_ip',
        subject: { type: 'application', id: subject.id },
        member_id: subject.member_id ?? null,
        detail: `${plural(matches.length, 'application')} from one network in ${span(subject.created_at - first.created_at)} (more than ${n(dup.max_referrals)} in ${plural(dup.window_hours, 'hour')}).`,
        evidence: {
          application_ids: matches.slice(0, EVIDENCE_IDS).map((a) => a.id),
          figures: { applications: matches.length, max_referrals: dup.max_referrals, window_hours: dup.window_hours },
        },
        dedupe_key: `duplicate_ip#application#${subject.id}`,
      });
    }
  }
  const disposable = settings.disposable_email.action === 'off' ? null : disposableDomainOf(subject.email);
  if (disposable) {
    findings.push({
      rule: 'disposable_email',
      subject: { type: 'application', id: subject.id },
      member_id: subject.member_id ?? null,
      detail: `The applicant's email address is at ${disposable}, a disposable-address service.`,
      evidence: { application_ids: [subject.id] },
      dedupe_key: `disposable_email#application#${subject.id}`,
    });
  }
  return findings;
}

/** Rounded to two decimals, for words and figures. */
const round2 = (value: number) => Math.round(value * 100) / 100;

/** Member-level rules (click_spam, refund_rate, velocity) over the member's daily buckets and converted referrals. */
export function evaluateMember(
  settings: FraudSettings,
  memberId: string,
  facts: { days: MemberDay[]; converted: ReferralFact[] },
  now: number,
): FraudFinding[] {
  const findings: FraudFinding[] = [];
  const today = utcDay(now);
  const todayStart = dayStart(today);
  const byDay = new Map(facts.days.map((d) => [d.day, d]));
  /** The `count` UTC days ending `endOffset` days before today, as buckets (gaps as zeros). */
  const daysBack = (count: number, endOffset: number): MemberDay[] =>
    Array.from({ length: count }, (_, i) => {
      const day = utcDay(todayStart - (endOffset + i) * DAY);
      return byDay.get(day) ?? { day, link_clicks: 0, conversions: 0, referrals: 0 };
    });
  const finding = (rule: FraudFinding['rule'], detail: string, evidence: FraudFinding['evidence']): FraudFinding => ({
    rule,
    subject: { type: 'member', id: memberId },
    member_id: memberId,
    detail,
    evidence,
    dedupe_key: `${rule}#member#${memberId}#${today}`,
  });

  const cs = settings.click_spam;
  if (cs.action !== 'off') {
    const window = daysBack(cs.window_days, 0);
    const clicks = window.reduce((a, d) => a + d.link_clicks, 0);
    const conversions = window.reduce((a, d) => a + d.conversions, 0);
    if (clicks >= cs.min_clicks && (conversions === 0 || clicks > cs.ratio * conversions)) {
      const limit = `the limit is ${n(cs.ratio)} clicks per conversion, with at least ${n(cs.min_clicks)} clicks`;
      findings.push(
        finding(
          'click_spam',
          conversions === 0
            ? `${plural(clicks, 'click')} and no conversion in ${plural(cs.window_days, 'day')} (${limit}).`
            : `${plural(clicks, 'click')} and ${plural(conversions, 'conversion')} in ${plural(cs.window_days, 'day')}: ${n(round2(clicks / conversions))} clicks per conversion (${limit}).`,
          {
            figures: {
              clicks,
              conversions,
              ...(conversions > 0 ? { ratio: round2(clicks / conversions) } : {}),
              window_days: cs.window_days,
            },
          },
        ),
      );
    }
  }

  const rr = settings.refund_rate;
  if (rr.action !== 'off') {
    const inWindow = within(rr.window_days * DAY, now);
    const converted = facts.converted
      .filter((r) => r.member_id === memberId && r.converted_at !== null && inWindow(r.converted_at))
      .sort(newestFirst);
    const unique = [...new Map(converted.map((r) => [r.id, r])).values()];
    const refunded = unique.filter((r) => r.refunded);
    // More than max_percent%: refunded / converted > max_percent / 100, in integers.
    if (unique.length >= rr.min_conversions && refunded.length * 100 > rr.max_percent * unique.length) {
      const percent = Math.round((refunded.length * 100) / unique.length);
      findings.push(
        finding(
          'refund_rate',
          `${n(refunded.length)} of ${plural(unique.length, 'referral')} converted in the last ${plural(rr.window_days, 'day')} ${refunded.length === 1 ? 'was' : 'were'} refunded: ${percent}% (the limit is ${rr.max_percent}%, with at least ${plural(rr.min_conversions, 'conversion')}).`,
          {
            referral_ids: refunded.slice(0, EVIDENCE_IDS).map((r) => r.id),
            figures: { converted: unique.length, refunded: refunded.length, percent, window_days: rr.window_days },
          },
        ),
      );
    }
  }

  const ve = settings.velocity;
  if (ve.action !== 'off') {
    const todayConversions = byDay.get(today)?.conversions ?? 0;
    const previous = daysBack(ve.mean_days, 1);
    const total = previous.reduce((a, d) => a + d.conversions, 0);
    const mean = total / ve.mean_days;
    // History: a referral created at least history_days days before today (on that UTC day or earlier):
    // in the buckets (which cover that day) or among the converted referrals read.
    const historyFrom = todayStart - ve.history_days * DAY;
    const history =
      facts.days.some((d) => d.referrals > 0 && dayStart(d.day) <= historyFrom) ||
      facts.converted.some((r) => r.member_id === memberId && r.created_at < historyFrom + DAY);
    // today > multiple x mean, in integers: today x mean_days > multiple x total.
    if (history && todayConversions >= ve.min_conversions && todayConversions * ve.mean_days > ve.multiple * total) {
      const todays = facts.converted
        .filter((r) => r.member_id === memberId && r.converted_at !== null && r.converted_at >= todayStart && r.converted_at <= now)
        .sort(newestFirst);
      findings.push(
        finding(
          'velocity',
          `${plural(todayConversions, 'conversion')} today against ${total === 0 ? 'none' : `a daily mean of ${n(round2(mean))}`} over the previous ${plural(ve.mean_days, 'day')} (the limit is ${n(ve.multiple)} times the mean, with at least ${plural(ve.min_conversions, 'conversion')} in a day).`,
          {
            ...(todays.length ? { referral_ids: todays.slice(0, EVIDENCE_IDS).map((r) => r.id) } : {}),
            figures: { today: todayConversions, mean: round2(mean), multiple: ve.multiple, mean_days: ve.mean_days },
          },
        ),
      );
    }
  }
  return findings;
}

/** How many UTC days of buckets (ending today) evaluateMember needs under `settings`. */
export function memberDaysNeeded(settings: FraudSettings): number {
  return Math.max(settings.click_spam.window_days, settings.velocity.mean_days + 1, settings.velocity.history_days + 1);
}

/**
 * The self_referral finding of a conversion whose payer is the referring member's own (the same payment
 * fingerprint or provider customer id), decided in the conversion's transaction.
 */
export function selfReferralFinding(
  referral: { id: string; member_id: string },
  match: { kind: 'payment_fingerprint' | 'customer_id'; provider: string },
): FraudFinding {
  const what = match.kind === 'payment_fingerprint' ? 'the same card' : 'the same customer account';
  return {
    rule: 'self_referral',
    subject: { type: 'referral', id: referral.id },
    member_id: referral.member_id,
    detail: `The referred subscription was paid with ${what} at ${match.provider} as the referring member's own subscription.`,
    evidence: { referral_ids: [referral.id] },
    dedupe_key: `self_referral#referral#${referral.id}`,
  };
}
