// The fraud screening of one committed event (docs/fraud.md "When the rules run"), run by the fraud-screen
// worker off the request path. The webhook fan-out hands it the events the rules look at
// (shared/webhooks/fanout.ts screeningOf). Safe to repeat: a finding is recorded once (its dedupe key), and
// a repeat finishes a hold a dead process left unfinished (flows/fraud-flags.ts recordFinding).
//
// - referral.created: the referral-level rules (duplicate_ip, disposable_email) over the referral and its
//   member's referrals of the duplicate_ip window.
// - referral.converted: the referral-level rules again (the referred user's email may be known only now),
//   the self_referral payer case (flows/self-referral-payer.ts) and the member-level rules (click_spam,
//   refund_rate, velocity) for its member.
// - reward.created with a negative amount (a clawback) and reward.voided as refunded: the member-level rules
//   for the reward's member (refund_rate).
// - referral.payer (queued by flows/payer-ids.ts, not an outbox event): the self_referral payer case of a
//   converted referral whose subscription told a payer (flows/self-referral-payer.ts).
// - application.created: the flags the confirmation stored on the application (flows/applications.ts
//   screenApplicant) become review-queue items, with the evidence evaluated again.
// Rules whose action is `off` are not run, and no fact is read for them.
import { type ApplicationFact, evaluateApplication, evaluateMember, evaluateReferral, memberDaysNeeded } from '../domain/fraud-rules';
import type { FraudFinding, FraudSettings } from '../domain/fraud';
import type { FraudScreenMessage } from '../queue/queues';
import { getApplication } from '../store/applications';
import { loadFraudSettings } from '../store/fraud-settings';
import { applicationFact, memberDays, memberReferralFacts, recentApplicationFacts, referralFact } from './fraud-facts';
import { recordFinding } from './fraud-flags';
import type { Prefetched } from '../store/prefetch';
import { keys, type Key } from '../store/table';
import { PAYER_SCREEN_EVENT } from './payer-ids';
import { screenPayer } from './self-referral-payer';

const HOUR = 3600;
const DAY = 86400;
/** How far back the member-level rules read a member's converted referrals. */
const MEMBER_REFERRAL_DAYS = 90;

const on = (settings: FraudSettings, ...rules: (keyof FraudSettings)[]) => rules.some((r) => settings[r].action !== 'off');

/**
 * The referral a message's screening reads first, when it reads one (referral.created and referral.converted),
 * for the worker's one BatchGet per batch. Whether the rules need it is known only with the account's settings,
 * so it is read for every such message: a read the settings make useless costs less than a call per record.
 */
export function screeningReadKeys(message: FraudScreenMessage): Key[] {
  if (message.event_type !== 'referral.created' && message.event_type !== 'referral.converted') return [];
  if (typeof message.account_id !== 'string' || typeof message.subject_id !== 'string' || !/^[0-9a-f]{32}$/.test(message.subject_id))
    return [];
  return [keys.referral(message.account_id, message.subject_id)];
}

/** The member-level rules' findings for one member (click_spam, refund_rate, velocity). */
export async function memberFindings(accountId: string, memberId: string, settings: FraudSettings, now: number): Promise<FraudFinding[]> {
  if (!on(settings, 'click_spam', 'refund_rate', 'velocity')) return [];
  const days = memberDaysNeeded(settings);
  const since = now - Math.max(MEMBER_REFERRAL_DAYS, settings.refund_rate.window_days) * DAY;
  const [daily, referrals] = await Promise.all([
    memberDays(accountId, memberId, days, now),
    memberReferralFacts(accountId, memberId, since),
  ]);
  return evaluateMember(settings, memberId, { days: daily, converted: referrals.filter((r) => r.converted_at !== null) }, now);
}

/** The referral-level rules' findings for one referral (duplicate_ip, disposable_email). */
async function referralFindings(accountId: string, referralId: string, settings: FraudSettings, now: number, pre?: Prefetched) {
  if (!on(settings, 'duplicate_ip', 'disposable_email')) return { memberId: null, findings: [] };
  const fact = await referralFact(accountId, referralId, pre);
  if (!fact) return { memberId: null, findings: [] };
  const sameMember =
    settings.duplicate_ip.action === 'off' || fact.ip_hash === null
      ? []
      : await memberReferralFacts(accountId, fact.member_id, Math.min(now, fact.created_at) - settings.duplicate_ip.window_hours * HOUR);
  // Only the referrals made before it (its id is time-ordered, finer than created_at's seconds): a screening
  // that runs late must not count the referrals made after its subject.
  const before = sameMember.filter((r) => r.id <= fact.id);
  return { memberId: fact.member_id, findings: evaluateReferral(settings, fact, { sameMember: before }, now) };
}

/** The application's findings, evaluated again for their evidence (its own fact left out of the others). */
async function applicationFindings(accountId: string, applicationId: string, settings: FraudSettings, now: number) {
  const [fact, recent] = await Promise.all([
    applicationFact(accountId, applicationId),
    settings.duplicate_ip.action === 'off'
      ? Promise.resolve([] as ApplicationFact[])
      : recentApplicationFacts(accountId, now - settings.duplicate_ip.window_hours * HOUR),
  ]);
  if (!fact) return [];
  return evaluateApplication(settings, fact, { recent: recent.filter((a) => a.id < fact.id) }, now);
}

/**
 * `settings`: the account's, when the caller has read them already (the worker reads them once per batch);
 * `pre`: the batch's prefetch of the referrals screened (screeningReadKeys), read together.
 */
export async function screenEvent(
  message: FraudScreenMessage,
  o: { now?: number; settings?: FraudSettings; pre?: Prefetched } = {},
): Promise<void> {
  const accountId = message.account_id;
  const now = o.now ?? Math.floor(Date.now() / 1000);
  const settings = o.settings ?? (await loadFraudSettings(accountId));
  const record = async (findings: FraudFinding[], opts: { subjectRecorded?: boolean } = {}) => {
    // One at a time: two findings about one referral both append to its fraud_flags.
    for (const finding of findings) await recordFinding(accountId, finding, settings, { ...opts, nowSeconds: now });
  };
  switch (message.event_type) {
    case 'referral.created': {
      await record((await referralFindings(accountId, message.subject_id, settings, now, o.pre)).findings);
      return;
    }
    case 'referral.converted': {
      const { memberId, findings } = await referralFindings(accountId, message.subject_id, settings, now, o.pre);
      await record(findings);
      // Paid by the referring member's own payer, for a conversion through the API (flows/self-referral-payer.ts).
      await screenPayer(accountId, message.subject_id, settings, true);
      const member = message.member_id ?? memberId ?? (await referralFact(accountId, message.subject_id, o.pre))?.member_id ?? null;
      if (member) await record(await memberFindings(accountId, member, settings, now));
      return;
    }
    case PAYER_SCREEN_EVENT: {
      // A converted referral's subscription told a payer (flows/payer-ids.ts): the self_referral payer case.
      await screenPayer(accountId, message.subject_id, settings);
      return;
    }
    case 'reward.created':
    case 'reward.voided': {
      // The fan-out hands on only clawbacks and rewards voided as refunded, with their member.
      if (message.member_id) await record(await memberFindings(accountId, message.member_id, settings, now));
      return;
    }
    case 'application.created': {
      if (!on(settings, 'duplicate_ip', 'disposable_email')) return;
      const application = await getApplication(accountId, message.subject_id);
      if (!application || application.fraud_flags.length === 0) return;
      const stored = new Set(application.fraud_flags.map((f) => f.rule));
      const findings = (await applicationFindings(accountId, application.id, settings, now)).filter((f) => stored.has(f.rule));
      // A stored flag the facts no longer show (an application deleted meanwhile): recorded with its words.
      const found = new Set(findings.map((f) => f.rule));
      for (const f of application.fraud_flags) {
        if (found.has(f.rule as FraudFinding['rule']) || !(f.rule in settings)) continue;
        findings.push({
          rule: f.rule as FraudFinding['rule'],
          subject: { type: 'application', id: application.id },
          member_id: application.member_id,
          detail: f.detail,
          evidence: { application_ids: [application.id] },
          dedupe_key: `${f.rule}#application#${application.id}`,
        });
      }
      await record(findings, { subjectRecorded: true });
      return;
    }
    default:
      return;
  }
}
