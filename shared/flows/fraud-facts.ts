// STUB (issue 27 seam; the rules helper implements, keeping these signatures): the recorded facts the fraud
// rules read (docs/fraud.md "Facts"), for the screening worker and the preview.
import type { ApplicationFact, MemberDay, ReferralFact } from '../domain/fraud-rules';

/** One referral as a fact, or null when it does not exist. */
export async function referralFact(_accountId: string, _referralId: string): Promise<ReferralFact | null> {
  return null;
}

/** A member's referrals created at or after `since` (unix seconds), newest first. */
export async function memberReferralFacts(_accountId: string, _memberId: string, _since: number): Promise<ReferralFact[]> {
  return [];
}

/** The account's applications created at or after `since` (unix seconds), newest first. */
export async function recentApplicationFacts(_accountId: string, _since: number): Promise<ApplicationFact[]> {
  return [];
}

/** One application as a fact, or null. */
export async function applicationFact(_accountId: string, _applicationId: string): Promise<ApplicationFact | null> {
  return null;
}

/** A member's daily buckets (clicks, conversions) of the `days` UTC days ending with the day of `now`, oldest first, gaps as zeros. */
export async function memberDays(_accountId: string, _memberId: string, _days: number, _now: number): Promise<MemberDay[]> {
  return [];
}
