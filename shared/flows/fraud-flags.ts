// Recording what a fraud rule found (docs/fraud.md "Flags"), and an operator's resolution of it.
//
// - A finding is recorded once: its dedupe claim (store/table.ts fraudKeys.flagClaim, naming the flag) is
//   written with the flag, its counters, the `fraud_flags` entry on its subject and the `fraud.flagged`
//   event in one transaction. A repeat finds the claim and records nothing.
// - A hold then puts the subject's unpaid commissions in `held` (flows/fraud-holds.ts holdRewards, which
//   is idempotent). When the process died between the two, a repeat of the screening finds the claim, the
//   flag open with action `hold`, and holds again: the hold is finished, never doubled.
// - Release, void and review move an open flag to its final status in one transaction conditioned on the
//   status read and on it holding nothing any longer (the rewards it held are released or voided first).
import { DetailError, ServiceUnavailableError } from '../domain/errors';
import type { FraudFinding, FraudFlagRecord, FraudFlagStatus, FraudSettings } from '../domain/fraud';
import { newEntityId } from '../domain/ids';
import { log } from '../log';
import { tableName } from '../store/client';
import { fraudFlagCounters, fraudFlagItem, fraudFlagView, getFraudFlag, getFraudFlagOrThrow, resolveFlagItem } from '../store/fraud-flags';
import { loadFraudSettings } from '../store/fraud-settings';
import { applicationKeys, fraudKeys, keys, type Key } from '../store/table';
import { ConditionsFailedError, getItem, transact, type TransactItem } from '../store/ops';
import { eventItem } from '../store/outbox';
import { holdRewards, releaseHeld, voidHeld } from './fraud-holds';

export const newFraudFlagId = (): string => `ff_${newEntityId()}`;

/** The review-queue item a finding becomes (open, nothing held yet). */
function newFlag(finding: FraudFinding, action: 'flag' | 'hold', flagId: string, nowSeconds: number): FraudFlagRecord {
  return {
    id: flagId,
    rule: finding.rule,
    action,
    status: 'open',
    subject_type: finding.subject.type,
    subject_id: finding.subject.id,
    member_id: finding.member_id,
    detail: finding.detail,
    evidence: finding.evidence,
    held_reward_ids: [],
    held_count: 0,
    created_at: nowSeconds,
    resolved_at: null,
    note: null,
  };
}

/**
 * The items that record a finding as flag `flagId`, for a caller's own transaction (the conversion's
 * self-referral): the dedupe claim first (a condition: recorded once), the review-queue item, its counters
 * and the `fraud.flagged` event. The `fraud_flags` entry on the subject and any `fraud_hold` are the caller's.
 */
export function flagItems(
  accountId: string,
  finding: FraudFinding,
  action: 'flag' | 'hold',
  flagId: string,
  nowSeconds: number,
): TransactItem[] {
  const flag = newFlag(finding, action, flagId, nowSeconds);
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...fraudKeys.flagClaim(accountId, finding.dedupe_key), type: 'Claim', flag_id: flagId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Put: { TableName: tableName(), Item: fraudFlagItem(accountId, flag), ConditionExpression: 'attribute_not_exists(pk)' } },
    ...fraudFlagCounters(accountId, { rule: flag.rule, member: flag.member_id, status: 'open' }, 1, true),
    eventItem(accountId, 'fraud.flagged', flagId, fraudFlagView(flag), nowSeconds * 1000),
  ];
}

function subjectKey(accountId: string, subject: FraudFinding['subject']): Key {
  if (subject.type === 'referral') return keys.referral(accountId, subject.id);
  if (subject.type === 'member') return keys.member(accountId, subject.id);
  return applicationKeys.application(accountId, subject.id);
}

/** What a hold of this flag holds: its referral's, or its member's unpaid commissions (an application has none). */
function holdScope(
  flag: Pick<FraudFlagRecord, 'subject_type' | 'subject_id' | 'member_id'>,
): { referralId: string } | { memberId: string } | null {
  if (flag.subject_type === 'referral') return { referralId: flag.subject_id };
  if (flag.subject_type === 'member' && flag.member_id) return { memberId: flag.member_id };
  return null;
}

async function hold(accountId: string, flag: FraudFlagRecord): Promise<void> {
  const scope = holdScope(flag);
  if (scope) await holdRewards(accountId, scope, flag.id);
}

/** A finding recorded before: finishes its hold when the process that recorded it died before holding. */
async function repeated(accountId: string, dedupeKey: string): Promise<null> {
  const claim = await getItem(fraudKeys.flagClaim(accountId, dedupeKey));
  const flagId = typeof claim?.flag_id === 'string' ? claim.flag_id : null;
  const flag = flagId ? await getFraudFlag(accountId, flagId) : null;
  if (flag?.status === 'open' && flag.action === 'hold') await hold(accountId, flag);
  return null;
}

/**
 * Records a finding with its rule's action (from `settings`, else the account's): nothing when `off` or
 * already recorded (its dedupe key); a flag on its subject and in the queue; for `hold`, the subject's unpaid
 * commissions held (flows/fraud-holds.ts). Answers the flag, or null.
 *
 * `subjectRecorded`: the subject carries the `{rule, at, detail}` entry already (an application's flags are
 * stored with it when it is created: flows/applications.ts screenApplicant).
 */
export async function recordFinding(
  accountId: string,
  finding: FraudFinding,
  settings?: FraudSettings,
  o: { subjectRecorded?: boolean; nowSeconds?: number } = {},
): Promise<FraudFlagRecord | null> {
  const action = (settings ?? (await loadFraudSettings(accountId)))[finding.rule].action;
  if (action === 'off') return null;
  const now = o.nowSeconds ?? Math.floor(Date.now() / 1000);
  const flagId = newFraudFlagId();
  const items = flagItems(accountId, finding, action, flagId, now);
  const referralHold = action === 'hold' && finding.subject.type === 'referral';
  const sets: string[] = [];
  const values: Record<string, unknown> = {};
  if (!o.subjectRecorded) {
    sets.push('fraud_flags = list_append(if_not_exists(fraud_flags, :none), :entry)');
    values[':none'] = [];
    values[':entry'] = [{ rule: finding.rule, at: now, detail: finding.detail }];
  }
  // A referral held by an open flag keeps its first one: rewards created later are held by it.
  if (referralHold) {
    sets.push('fraud_hold = if_not_exists(fraud_hold, :flag)');
    values[':flag'] = flagId;
  }
  const subjectIndex = items.length;
  items.push(
    sets.length > 0
      ? {
          Update: {
            TableName: tableName(),
            Key: subjectKey(accountId, finding.subject),
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: values,
          },
        }
      : {
          ConditionCheck: {
            TableName: tableName(),
            Key: subjectKey(accountId, finding.subject),
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
  );
  try {
    await transact(items);
  } catch (err) {
    if (!(err instanceof ConditionsFailedError)) throw err;
    if (err.failed(0)) return repeated(accountId, finding.dedupe_key);
    if (err.failed(subjectIndex)) {
      log('info', 'fraud finding about a subject that no longer exists', { rule: finding.rule, subject: finding.subject.id });
      return null;
    }
    throw err;
  }
  const flag = newFlag(finding, action, flagId, now);
  if (action === 'hold') {
    await hold(accountId, flag);
    return (await getFraudFlag(accountId, flagId)) ?? flag;
  }
  return flag;
}

/**
 * POST /v1/fraud-flags/{id}/release|void|review/: releases or voids the rewards the flag still holds, then
 * moves it to its final status (removing its referral's `fraud_hold`). The same status again answers the
 * flag as it is; another final status 409; review while it still holds rewards 409.
 */
export async function resolveFraudFlag(
  accountId: string,
  id: string,
  to: Exclude<FraudFlagStatus, 'open'>,
  o: { note: string | null; now?: number },
): Promise<FraudFlagRecord> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const flag = await getFraudFlagOrThrow(accountId, id);
    if (flag.status === to) return flag;
    if (flag.status !== 'open') throw new DetailError(409, `This flag is ${flag.status} already: it cannot be ${to} too.`);
    if (flag.held_count > 0) {
      if (to === 'reviewed')
        throw new DetailError(
          409,
          `This flag still holds ${flag.held_count} reward${flag.held_count === 1 ? '' : 's'}: release or void ${flag.held_count === 1 ? 'it' : 'them'} first.`,
        );
      // Only what this flag holds: a reward released and held again by another flag stays held.
      const opts = o.now === undefined ? { flagId: flag.id } : { now: o.now, flagId: flag.id };
      if (to === 'released') await releaseHeld(accountId, flag.held_reward_ids, opts);
      else await voidHeld(accountId, flag.held_reward_ids, opts);
    }
    const now = o.now ?? Math.floor(Date.now() / 1000);
    const items: TransactItem[] = [
      resolveFlagItem(accountId, flag, to, { note: o.note, nowSeconds: now }),
      ...fraudFlagCounters(accountId, { rule: flag.rule, member: flag.member_id, status: 'open' }, -1, false),
      ...fraudFlagCounters(accountId, { rule: flag.rule, member: flag.member_id, status: to }, 1, false),
    ];
    if (flag.subject_type === 'referral' && flag.action === 'hold') {
      const referral = await getItem(keys.referral(accountId, flag.subject_id));
      if (referral?.fraud_hold === flag.id)
        items.push({
          Update: {
            TableName: tableName(),
            Key: keys.referral(accountId, flag.subject_id),
            UpdateExpression: 'REMOVE fraud_hold',
            ConditionExpression: 'fraud_hold = :flag',
            ExpressionAttributeValues: { ':flag': flag.id },
          },
        });
    }
    try {
      await transact(items);
    } catch (err) {
      if (err instanceof ConditionsFailedError) continue; // changed meanwhile: read it again
      throw err;
    }
    return { ...flag, status: to, resolved_at: now, note: o.note ?? null, held_count: 0 };
  }
  throw new ServiceUnavailableError('The flag kept changing while it was being resolved; try again.');
}
