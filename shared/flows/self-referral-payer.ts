// The self_referral rule's payer case (docs/fraud.md "Self-referral beyond email"): a conversion whose
// subscription is paid by the referring member's own payer (the same card fingerprint or customer id).
// - decidePayerMatch: in an automatic conversion's transaction (store/referrals.ts markReferralConverted),
//   what the rule's action records there.
// - screenPayer: in the fraud screening (flows/fraud-screen.ts), for a conversion made through the API
//   (its referral.converted event) and for a converted referral whose subscription told a payer later
//   (event `referral.payer`, queued by flows/payer-ids.ts): the subscription's payer ids are compared with
//   the referring member's own, and a match recorded with the rule's action (recordFinding: once per
//   referral, by the finding's dedupe key, so one recorded by the conversion is not recorded again).
import type { FraudFlagRecord, FraudSettings } from '../domain/fraud';
import { selfReferralFinding } from '../domain/fraud-rules';
import { payerMatch } from '../domain/payer-ids';
import { log } from '../log';
import { memberPayerIds } from '../store/members';
import { batchGet, lookup } from '../store/ops';
import { toReferral } from '../store/referrals';
import { subscriptionPayerIds, toSubscription } from '../store/subscriptions';
import { keys } from '../store/table';
import { flagItems, newFraudFlagId, recordFinding } from './fraud-flags';
import { loadFraudSettings } from '../store/fraud-settings';
import type { PayerMatchDecider } from '../store/referrals';
import { providerWords } from './payer-ids';

/**
 * Reads the referral, then its member and subscription (one BatchGet); records a match. `atConversion`: run
 * for its referral.converted event, which an automatic conversion decided in its own transaction already
 * (with the settings of that moment): only a conversion through the API is compared then.
 */
export async function screenPayer(
  accountId: string,
  referralId: string,
  settings: FraudSettings,
  atConversion = false,
): Promise<FraudFlagRecord | null> {
  if (settings.self_referral.action === 'off') return null;
  const referralKey = keys.referral(accountId, referralId);
  const item = lookup(await batchGet([referralKey]), referralKey);
  const referral = toReferral(item);
  if (!referral?.subscription || referral.converted_at === null) return null;
  if (atConversion && item?.converted_automatically === true) return null;
  const memberKey = keys.member(accountId, referral.member_id);
  const subscriptionKey = keys.subscription(accountId, referral.subscription.id);
  const found = await batchGet([memberKey, subscriptionKey]);
  const subscription = toSubscription(lookup(found, subscriptionKey));
  if (!subscription || subscription.referral_id !== referral.id) return null;
  const match = payerMatch(memberPayerIds(lookup(found, memberKey)), subscriptionPayerIds(subscription));
  if (!match) return null;
  const flag = await recordFinding(
    accountId,
    selfReferralFinding(referral, { kind: match.kind, provider: providerWords(match.provider) }),
    settings,
  );
  log('warn', "a converted referral's payer is the referring member's own", {
    account_id: accountId,
    referral_id: referral.id,
    match: match.kind,
    flag_id: flag?.id ?? null,
  });
  return flag;
}

/**
 * The self_referral rule's payer case: the conversion's subscription is paid by the referring member's own
 * payer. Read only then: the account's settings. `off` converts as any other; `flag` and `hold` record the
 * finding in the conversion's transaction (the flag, `fraud_flags` on the referral, and for `hold` the
 * referral's `fraud_hold`, which makes its rewards start held).
 */
export const decidePayerMatch =
  (accountId: string): PayerMatchDecider =>
  async (match, referral, nowSeconds) => {
    const action = (await loadFraudSettings(accountId)).self_referral.action;
    log('warn', "conversion by the referring member's own payer", {
      account_id: accountId,
      referral_id: referral.id,
      match: match.kind,
      action,
    });
    if (action === 'off') return { items: [], flag: null, hold: null };
    const finding = selfReferralFinding(referral, { kind: match.kind, provider: providerWords(match.provider) });
    const flagId = newFraudFlagId();
    return {
      items: flagItems(accountId, finding, action, flagId, nowSeconds),
      flag: { rule: 'self_referral', at: nowSeconds, detail: finding.detail },
      hold: action === 'hold' ? flagId : null,
    };
  };
