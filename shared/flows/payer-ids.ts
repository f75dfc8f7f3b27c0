// What follows when a provider tells who pays a subscription (docs/fraud.md "Self-referral beyond email"),
// off the request path (the subscription-sync worker), after the subscription's payer ids were stored
// (store/subscriptions.ts applyProviderUpdate):
// - the member whose own subscription it is carries them too (`payer_ids` on the member item, which the
//   conversion's transaction compares): one write, only when something new was learned;
// - a referred subscription already converted (a card often comes after the conversion) is handed to the
//   fraud screening (the `fraud` queue, event `referral.payer`): there screenPayer compares it with the
//   referring member's payer ids and records a match (flows/self-referral-payer.ts).
import { definitionOf, isProviderKind } from '../billing/registry';
import { publish } from '../queue/publish';
import { addMemberPayerIds } from '../store/members';
import { subscriptionPayerIds, type ProviderUpdateResult } from '../store/subscriptions';

/** A provider kind in words, as a finding names it ("at Stripe"). */
export const providerWords = (kind: string): string => (isProviderKind(kind) ? definitionOf(kind).name : kind);

/** The fraud screening's event for a converted referral whose subscription told a payer. */
export const PAYER_SCREEN_EVENT = 'referral.payer';

/**
 * After an update of one subscription. `redelivered`: the event was applied before (a redelivery may follow
 * a first attempt that died before these steps): they run again over everything stored, as both are
 * idempotent.
 */
export async function followPayers(accountId: string, result: ProviderUpdateResult, redelivered: boolean): Promise<void> {
  const subscription = result.subscription;
  if (!subscription) return;
  const told = result.payerIdsLearned.length > 0 ? result.payerIdsLearned : redelivered ? subscriptionPayerIds(subscription) : [];
  if (told.length === 0) return;
  if (subscription.member_id) await addMemberPayerIds(accountId, subscription.member_id, subscription.id, told);
  if (result.referralId)
    await publish('fraud', { kind: 'screen', account_id: accountId, event_type: PAYER_SCREEN_EVENT, subject_id: result.referralId });
}
