// Outgoing webhook events: their types and deterministic ids. An event id is derived from the effect
// that produced it (the referral id for referral.created, the reward id for reward.created, ...), so a
// replayed request or a redelivered message that repeats the effect's write repeats the same event id
// and never produces a second event.
import { createHash } from 'node:crypto';

export const EVENT_TYPES = [
  'referral.created',
  'referral.converted',
  'reward.created',
  'member.created',
  'subscription.updated',
  // The money side (docs/design/money.md "Events").
  'reward.approved',
  'reward.voided',
  'reward.paid',
  'payout.due',
  'payout.paid',
  'payout.failed',
  // Paying through a rail (docs/payouts.md "Paying through a rail").
  'payout.sent',
  'payout.unclaimed',
  // Affiliate applications (docs/affiliates.md "Applications").
  'application.created',
  'application.approved',
  'application.rejected',
  // Fraud rules (docs/fraud.md): a finding recorded; a reward held by one, or released by an operator.
  'fraud.flagged',
  'reward.held',
  'reward.released',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** `evt_` + 32 hex characters of SHA-256(type + ':' + the effect's key). */
export function eventId(type: EventType, effectKey: string): string {
  return `evt_${createHash('sha256').update(`${type}:${effectKey}`).digest('hex').slice(0, 32)}`;
}

export function isEventId(value: string): boolean {
  return /^evt_[0-9a-f]{32}$/.test(value);
}

/** What an endpoint receives: `{id, type, created_at, data}` with `data` the API object. */
export interface EventEnvelope {
  id: string;
  type: EventType;
  created_at: number;
  data: unknown;
}
