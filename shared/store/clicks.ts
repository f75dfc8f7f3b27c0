// Link clicks: a click counts once per visitor per member link per 24 hours. The marker item (expiring
// by TTL) and the member's `link_clicks` change in one transaction, so a count is never lost or doubled.
// Visitor ids are chosen by the client, so one IP could count a click per made-up id: at most
// MAX_VISITORS_PER_IP distinct visitors from one IP (by digest) count on one link per UTC day, the IP's
// counter item changing in the same transaction under the condition `n < max`.
// A click through a sub-id (`?sub=`) also counts in the member's sub-id bucket: one more item in the same
// transaction. The account item is read beside the code's claim: the script's answer carries its attribution.
// Round trips: 1 BatchGet (the code claim, which names the member, and the account) + 1 TransactWriteItems.
import { isMemberCode } from '../domain/ids';
import { attributionOf, type Attribution } from '../domain/links';
import { tableName } from './client';
import { batchGet, ConditionsFailedError, lookup, nowSeconds, transact } from './ops';
import { ReportDeltas } from './reports';
import { uniqueKeys, edgeKeys, keys, TTL_ATTRIBUTE } from './table';

export const CLICK_DEDUPE_SECONDS = 24 * 60 * 60;
/** Distinct visitors one IP can add to one link's count per UTC day (an office or a family behind one NAT). */
export const MAX_VISITORS_PER_IP = 10;

/**
 * Records a click on `code`'s link (through the sub-id `sub`, if any) by the visitor whose hash is
 * `visitorHash`. `counted` is true when it counted; false for an unknown code, a deleted member, or the
 * same visitor within the dedupe period. `attribution` is the account's model and cookie lifetime, read in
 * the same BatchGet as the code's claim, for the browser script (docs/attribution.md).
 */
export async function recordClick(
  accountId: string,
  code: string,
  visitorHash: string,
  ipHash: string,
  sub: string | null = null,
): Promise<{ counted: boolean; attribution: Attribution }> {
  const accountKey = keys.account(accountId);
  // A code outside the pattern is never a member's (checked before any lower-casing): only the account is read.
  const claimKey = isMemberCode(code) ? uniqueKeys.memberCodeClaim(accountId, code) : null;
  const found = await batchGet(claimKey ? [claimKey, accountKey] : [accountKey]);
  const attribution = attributionOf(lookup(found, accountKey));
  const claim = claimKey ? lookup(found, claimKey) : undefined;
  if (typeof claim?.member_id !== 'string') return { counted: false, attribution };
  const memberId = claim.member_id;
  const campaignId = typeof claim.campaign_id === 'string' ? claim.campaign_id : null;
  const now = nowSeconds();
  const day = Math.floor(now / 86_400);
  try {
    await transact([
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...edgeKeys.click(accountId, memberId, visitorHash),
            type: 'Click',
            member_id: memberId,
            clicked_at: now,
            [TTL_ATTRIBUTE]: now + CLICK_DEDUPE_SECONDS,
          },
          // TTL deletion is lazy: an expired marker still in the table counts as absent.
          ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':now': now },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: edgeKeys.clickSource(accountId, memberId, ipHash, day),
          UpdateExpression: 'ADD n :one SET #type = :type, #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression: 'attribute_not_exists(n) OR n < :max',
          ExpressionAttributeNames: { '#type': 'type', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':one': 1, ':type': 'ClickSource', ':ttl': (day + 1) * 86_400 + 3600, ':max': MAX_VISITORS_PER_IP },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: keys.member(accountId, memberId),
          UpdateExpression: 'ADD link_clicks :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
      ...new ReportDeltas(accountId).add(now, { campaignId, memberId, sub }, 'link_clicks', 1).items(),
    ]);
    return { counted: true, attribution };
  } catch (err) {
    // Counted already, the IP's visitors are used up, or the member is gone.
    if (err instanceof ConditionsFailedError) return { counted: false, attribution };
    throw err;
  }
}
