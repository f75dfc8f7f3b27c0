// The fraud rules (shared/domain/fraud-rules.ts) on their boundaries: each exactly at its threshold (no
// finding) and just over it (a finding, in words), plus the disposable-address list's lookup.
import { DEFAULT_FRAUD_SETTINGS, type FraudSettings } from '../../shared/domain/fraud';
import {
  type ApplicationFact,
  disposableDomainOf,
  evaluateApplication,
  evaluateMember,
  evaluateReferral,
  type MemberDay,
  memberDaysNeeded,
  type ReferralFact,
  span,
  utcDay,
} from '../../shared/domain/fraud-rules';

const NOW = Date.parse('2026-06-15T12:00:00Z') / 1000;
const HOUR = 3600;
const DAY = 86_400;
const M = 'a'.repeat(32);

let seq = 0;
const id = () => (++seq).toString(16).padStart(32, '0');

function referral(over: Partial<ReferralFact> = {}): ReferralFact {
  return {
    id: id(),
    member_id: M,
    created_at: NOW,
    ip_hash: null,
    email: null,
    converted_at: null,
    refunded: false,
    ...over,
  };
}

function application(over: Partial<ApplicationFact> = {}): ApplicationFact {
  return {
    id: `app_${id()}`,
    campaign_id: 'c0ffee00',
    created_at: NOW,
    ip_hash: null,
    email: 'someone@example.com',
    member_id: null,
    ...over,
  };
}

function settings(change: Partial<{ [R in keyof FraudSettings]: Partial<FraudSettings[R]> }> = {}): FraudSettings {
  const out = structuredClone(DEFAULT_FRAUD_SETTINGS) as FraudSettings;
  for (const [rule, values] of Object.entries(change)) Object.assign(out[rule as keyof FraudSettings], values);
  return out;
}

const rules = (findings: { rule: string }[]) => findings.map((f) => f.rule);

describe('duplicate_ip on referrals', () => {
  // max_referrals 3 in 24 hours: the subject and the others from the same network in the window.
  const earlier = (count: number, ip: string | null = 'net1', spacing = HOUR) =>
    Array.from({ length: count }, (_, i) => referral({ ip_hash: ip, created_at: NOW - (i + 1) * spacing }));

  it('is silent at exactly max_referrals and flags one over, in words', () => {
    const subject = referral({ ip_hash: 'net1' });
    expect(evaluateReferral(settings(), subject, { sameMember: [subject, ...earlier(2)] }, NOW)).toEqual([]);
    const others = earlier(3);
    const [finding, ...rest] = evaluateReferral(settings(), subject, { sameMember: [subject, ...others] }, NOW);
    expect(rest).toEqual([]);
    expect(finding).toEqual({
      rule: 'duplicate_ip',
      subject: { type: 'referral', id: subject.id },
      member_id: M,
      detail: '4 referrals from one network in 3 hours (more than 3 in 24 hours).',
      evidence: {
        referral_ids: [subject.id, ...others.map((r) => r.id)],
        figures: { referrals: 4, max_referrals: 3, window_hours: 24 },
      },
      dedupe_key: `duplicate_ip#referral#${subject.id}`,
    });
  });

  it('counts the subject even when the list omits it, and each referral once', () => {
    const subject = referral({ ip_hash: 'net1' });
    const others = earlier(3);
    expect(rules(evaluateReferral(settings(), subject, { sameMember: [...others, ...others] }, NOW))).toEqual(['duplicate_ip']);
    expect(evaluateReferral(settings(), subject, { sameMember: [others[0] as ReferralFact, others[0] as ReferralFact] }, NOW)).toEqual([]);
  });

  it('counts only the window: just inside 24 hours counts, exactly 24 hours before does not', () => {
    const subject = referral({ ip_hash: 'net1' });
    const two = earlier(2);
    const inside = referral({ ip_hash: 'net1', created_at: NOW - 24 * HOUR + 1 });
    const outside = referral({ ip_hash: 'net1', created_at: NOW - 24 * HOUR });
    expect(evaluateReferral(settings(), subject, { sameMember: [...two, outside] }, NOW)).toEqual([]);
    const [finding] = evaluateReferral(settings(), subject, { sameMember: [...two, inside] }, NOW);
    expect(finding?.detail).toBe('4 referrals from one network in 24 hours (more than 3 in 24 hours).');
  });

  it('ignores other networks, other members, later referrals and referrals without an address', () => {
    const subject = referral({ ip_hash: 'net1' });
    const noise = [
      ...earlier(3, 'net2'),
      referral({ ip_hash: 'net1', member_id: 'b'.repeat(32), created_at: NOW - HOUR }),
      referral({ ip_hash: 'net1', created_at: NOW + HOUR }),
      referral({ ip_hash: null, created_at: NOW - HOUR }),
    ];
    expect(evaluateReferral(settings(), subject, { sameMember: [...earlier(2), ...noise] }, NOW)).toEqual([]);
    // A subject without an address is never counted.
    const bare = referral();
    expect(evaluateReferral(settings(), bare, { sameMember: [bare, ...earlier(5, null)] }, NOW)).toEqual([]);
  });

  it('counts, within one second, only the referrals made before the subject (time-ordered ids)', () => {
    const same = Array.from({ length: 5 }, () => referral({ ip_hash: 'net1' }));
    const flagged = same.filter((s) => evaluateReferral(settings(), s, { sameMember: same }, NOW).length > 0);
    expect(flagged).toEqual([same[3], same[4]]);
  });

  it('follows the thresholds and is silent when off', () => {
    const subject = referral({ ip_hash: 'net1' });
    const facts = { sameMember: earlier(5, 'net1', 10 * 60) };
    expect(evaluateReferral(settings({ duplicate_ip: { max_referrals: 6 } }), subject, facts, NOW)).toEqual([]);
    const [finding] = evaluateReferral(settings({ duplicate_ip: { max_referrals: 5, window_hours: 1 } }), subject, facts, NOW);
    expect(finding?.detail).toBe('6 referrals from one network in 50 minutes (more than 5 in 1 hour).');
    expect(evaluateReferral(settings({ duplicate_ip: { action: 'off' } }), subject, facts, NOW)).toEqual([]);
  });
});

describe('duplicate_ip on applications', () => {
  it('is silent at max_referrals and flags one over', () => {
    const subject = application({ ip_hash: 'net1' });
    const recent = Array.from({ length: 3 }, (_, i) => application({ ip_hash: 'net1', created_at: NOW - (i + 1) * 20 * 60 }));
    expect(evaluateApplication(settings(), subject, { recent: recent.slice(0, 2) }, NOW)).toEqual([]);
    const [finding, ...rest] = evaluateApplication(settings(), subject, { recent: [subject, ...recent] }, NOW);
    expect(rest).toEqual([]);
    expect(finding).toEqual({
      rule: 'duplicate_ip',
      subject: { type: 'application', id: subject.id },
      member_id: null,
      detail: '4 applications from one network in 1 hour (more than 3 in 24 hours).',
      evidence: {
        application_ids: [subject.id, ...recent.map((a) => a.id)],
        figures: { applications: 4, max_referrals: 3, window_hours: 24 },
      },
      dedupe_key: `duplicate_ip#application#${subject.id}`,
    });
  });
});

describe('disposable_email', () => {
  it('flags a referral or an application at a listed domain, and nothing else', () => {
    const flagged = referral({ email: 'x@sub.mailinator.com' });
    const [finding] = evaluateReferral(settings(), flagged, { sameMember: [] }, NOW);
    expect(finding).toMatchObject({
      rule: 'disposable_email',
      subject: { type: 'referral', id: flagged.id },
      detail: "The referred user's email address is at mailinator.com, a disposable-address service.",
      dedupe_key: `disposable_email#referral#${flagged.id}`,
    });
    expect(evaluateReferral(settings(), referral({ email: 'x@example.com' }), { sameMember: [] }, NOW)).toEqual([]);
    const app = application({ email: 'x@yopmail.com' });
    expect(evaluateApplication(settings(), app, { recent: [] }, NOW)[0]?.detail).toBe(
      "The applicant's email address is at yopmail.com, a disposable-address service.",
    );
    expect(evaluateApplication(settings({ disposable_email: { action: 'off' } }), app, { recent: [] }, NOW)).toEqual([]);
  });

  it('looks the domain and its parent domains up in the packaged list', async () => {
    const { listedCount } = await import('../../shared/domain/disposable-domains');
    expect(listedCount()).toBeGreaterThan(1000);
    expect(disposableDomainOf(null)).toBeNull();
    expect(disposableDomainOf('Someone@Mailinator.COM')).toBe('mailinator.com');
    expect(disposableDomainOf('someone@inbox.mailinator.com')).toBe('mailinator.com');
    expect(disposableDomainOf('someone@example.com')).toBeNull();
    expect(disposableDomainOf('someone@gmail.com')).toBeNull();
    expect(disposableDomainOf('not an address')).toBeNull();
    expect(disposableDomainOf('someone@com')).toBeNull();
  });
});

/** `count` days ending today (oldest first), each from `make(offset)` where offset 0 is today. */
function days(count: number, make: (offset: number) => Partial<MemberDay>): MemberDay[] {
  return Array.from({ length: count }, (_, i) => {
    const offset = count - 1 - i;
    return { day: utcDay(NOW - offset * DAY), link_clicks: 0, conversions: 0, referrals: 0, ...make(offset) };
  });
}

describe('click_spam', () => {
  // 500:1 with at least 1,000 clicks in 7 days.
  const spread = (clicks: number, conversions: number) => days(7, (o) => (o === 0 ? { link_clicks: clicks, conversions } : {}));

  it('needs at least min_clicks: 999 clicks and no conversion is silent, 1,000 flags', () => {
    expect(evaluateMember(settings(), M, { days: spread(999, 0), converted: [] }, NOW)).toEqual([]);
    const [finding] = evaluateMember(settings(), M, { days: spread(1000, 0), converted: [] }, NOW);
    expect(finding).toEqual({
      rule: 'click_spam',
      subject: { type: 'member', id: M },
      member_id: M,
      detail: '1,000 clicks and no conversion in 7 days (the limit is 500 clicks per conversion, with at least 1,000 clicks).',
      evidence: { figures: { clicks: 1000, conversions: 0, window_days: 7 } },
      dedupe_key: `click_spam#member#${M}#2026-06-15`,
    });
  });

  it('is silent at exactly ratio x conversions and flags one click over', () => {
    expect(evaluateMember(settings(), M, { days: spread(1500, 3), converted: [] }, NOW)).toEqual([]);
    const [finding] = evaluateMember(settings(), M, { days: spread(1501, 3), converted: [] }, NOW);
    expect(finding?.detail).toBe(
      '1,501 clicks and 3 conversions in 7 days: 500.33 clicks per conversion (the limit is 500 clicks per conversion, with at least 1,000 clicks).',
    );
  });

  it('sums the window only: the 8th day back does not count', () => {
    const old = days(8, (o) => (o === 7 ? { link_clicks: 5000 } : o === 6 ? { link_clicks: 999 } : {}));
    expect(evaluateMember(settings(), M, { days: old, converted: [] }, NOW)).toEqual([]);
    const inside = days(8, (o) => (o === 6 ? { link_clicks: 1000 } : {}));
    expect(rules(evaluateMember(settings(), M, { days: inside, converted: [] }, NOW))).toEqual(['click_spam']);
  });
});

describe('refund_rate', () => {
  // More than 30% of at least 5 conversions in 90 days.
  const converted = (count: number, refunded: number, at = NOW - DAY) =>
    Array.from({ length: count }, (_, i) => referral({ converted_at: at, created_at: at - DAY, refunded: i < refunded }));

  it('is silent at exactly max_percent and flags just over it', () => {
    // 3 of 10 = 30%: silent; 4 of 13 = 30.8%: flagged.
    expect(evaluateMember(settings(), M, { days: [], converted: converted(10, 3) }, NOW)).toEqual([]);
    const facts = converted(13, 4);
    const [finding] = evaluateMember(settings(), M, { days: [], converted: facts }, NOW);
    expect(finding).toMatchObject({
      rule: 'refund_rate',
      detail: '4 of 13 referrals converted in the last 90 days were refunded: 31% (the limit is 30%, with at least 5 conversions).',
      evidence: { figures: { converted: 13, refunded: 4, percent: 31, window_days: 90 } },
      dedupe_key: `refund_rate#member#${M}#2026-06-15`,
    });
    expect(finding?.evidence.referral_ids?.sort()).toEqual(
      facts
        .slice(0, 4)
        .map((r) => r.id)
        .sort(),
    );
  });

  it('needs min_conversions: 4 conversions are too few, 5 are enough', () => {
    expect(evaluateMember(settings(), M, { days: [], converted: converted(4, 4) }, NOW)).toEqual([]);
    expect(rules(evaluateMember(settings(), M, { days: [], converted: converted(5, 2) }, NOW))).toEqual(['refund_rate']);
  });

  it('counts conversions of the window only, and no other member', () => {
    const old = converted(5, 5, NOW - 90 * DAY);
    expect(evaluateMember(settings(), M, { days: [], converted: old }, NOW)).toEqual([]);
    const other = converted(5, 5).map((r) => ({ ...r, member_id: 'b'.repeat(32) }));
    expect(evaluateMember(settings(), M, { days: [], converted: other }, NOW)).toEqual([]);
    expect(rules(evaluateMember(settings(), M, { days: [], converted: converted(5, 5, NOW - 90 * DAY + 1) }, NOW))).toEqual([
      'refund_rate',
    ]);
  });
});

describe('velocity', () => {
  // Today > 10x the 30-day daily mean, at least 20 today, 7 days of history.
  const withHistory = (today: number, previousTotal: number, historyOffset = 8) =>
    days(31, (o) => ({
      conversions: o === 0 ? today : o === 1 ? previousTotal : 0,
      referrals: o === historyOffset ? 1 : 0,
    }));

  it('is silent at exactly multiple x mean and flags one over', () => {
    // 3 conversions over the previous 30 days: a mean of 0.1, so 10x is 1: with min 1, 1 today is silent, 2 flags.
    const s = settings({ velocity: { min_conversions: 1 } });
    expect(evaluateMember(s, M, { days: withHistory(1, 3), converted: [] }, NOW)).toEqual([]);
    const [finding] = evaluateMember(s, M, { days: withHistory(2, 3), converted: [] }, NOW);
    expect(finding).toEqual({
      rule: 'velocity',
      subject: { type: 'member', id: M },
      member_id: M,
      detail:
        '2 conversions today against a daily mean of 0.1 over the previous 30 days (the limit is 10 times the mean, with at least 1 conversion in a day).',
      evidence: { figures: { today: 2, mean: 0.1, multiple: 10, mean_days: 30 } },
      dedupe_key: `velocity#member#${M}#2026-06-15`,
    });
    // The defaults: 60 over 30 days is a mean of 2; 20 today is exactly 10x (silent), 21 flags.
    expect(evaluateMember(settings(), M, { days: withHistory(20, 60), converted: [] }, NOW)).toEqual([]);
    expect(rules(evaluateMember(settings(), M, { days: withHistory(21, 60), converted: [] }, NOW))).toEqual(['velocity']);
  });

  it('needs min_conversions today: 19 is too few, 20 is enough', () => {
    expect(evaluateMember(settings(), M, { days: withHistory(19, 0), converted: [] }, NOW)).toEqual([]);
    const [finding] = evaluateMember(settings(), M, { days: withHistory(20, 0), converted: [] }, NOW);
    expect(finding?.detail).toBe(
      '20 conversions today against none over the previous 30 days (the limit is 10 times the mean, with at least 20 conversions in a day).',
    );
  });

  it('needs history_days of history: a first referral 6 days before today is too recent, 7 is enough', () => {
    expect(evaluateMember(settings(), M, { days: withHistory(25, 0, 6), converted: [] }, NOW)).toEqual([]);
    expect(rules(evaluateMember(settings(), M, { days: withHistory(25, 0, 7), converted: [] }, NOW))).toEqual(['velocity']);
    // An older referral read among the converted ones is history too.
    const old = referral({ created_at: NOW - 40 * DAY, converted_at: NOW - HOUR });
    expect(rules(evaluateMember(settings(), M, { days: withHistory(25, 0, 100), converted: [old] }, NOW))).toEqual(['velocity']);
  });

  it("names today's converted referrals as evidence", () => {
    const today = referral({ created_at: NOW - 2 * HOUR, converted_at: NOW - HOUR });
    const yesterday = referral({ created_at: NOW - 2 * DAY, converted_at: NOW - DAY });
    const [finding] = evaluateMember(settings(), M, { days: withHistory(20, 0), converted: [today, yesterday] }, NOW);
    expect(finding?.evidence.referral_ids).toEqual([today.id]);
  });
});

describe('helpers', () => {
  it('says spans in words and knows how many days of buckets the member rules need', () => {
    expect(span(30)).toBe('1 minute');
    expect(span(50 * 60)).toBe('50 minutes');
    expect(span(2 * HOUR)).toBe('2 hours');
    expect(span(3 * DAY)).toBe('3 days');
    expect(memberDaysNeeded(DEFAULT_FRAUD_SETTINGS)).toBe(31);
    expect(memberDaysNeeded(settings({ click_spam: { window_days: 90 } }))).toBe(90);
  });
});
