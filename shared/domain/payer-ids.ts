// Payer identities: who pays a subscription, as its payment provider tells (docs/fraud.md "Self-referral
// beyond email"). Pure: no I/O. A subscription item and the member whose own subscription it is carry them
// as a string set `payer_ids`; a conversion whose subscription shares one with the referring member is the
// `self_referral` rule's payer case.
//
// A payer id is `<provider kind>:<what>:<the provider's value>`:
// - `<kind>:customer:<id>`: the provider's customer (Stripe `cus_…`, Paddle Billing `ctm_…`, Paddle
//   Classic's user id);
// - `<kind>:card:<fingerprint>`: a card's fingerprint (Stripe's `card.fingerprint`: the same card number
//   has the same fingerprint across customers of one Stripe account).
// The provider's kind keeps two providers' ids apart; nothing else is provider-specific here.

export type PayerMatchKind = 'payment_fingerprint' | 'customer_id';

/** What a provider told about a subscription's payer (the port's SubscriptionFacts fields). */
export interface PayerFacts {
  customerId?: string | undefined;
  paymentFingerprint?: string | undefined;
}

/** The most payer ids a subscription keeps (a card changed many times): each is one condition term. */
export const MAX_PAYER_IDS = 16;
const MAX_VALUE = 255;

const usable = (v: unknown): v is string => typeof v === 'string' && v !== '' && v.length <= MAX_VALUE && !/\s/.test(v);

/** The payer ids the facts name (none when they name nothing usable). */
export function payerIdsOf(provider: string, facts: PayerFacts): string[] {
  const ids: string[] = [];
  if (usable(facts.customerId)) ids.push(`${provider}:customer:${facts.customerId}`);
  if (usable(facts.paymentFingerprint)) ids.push(`${provider}:card:${facts.paymentFingerprint}`);
  return ids;
}

/** A payer id's provider and kind; null when it is not one. */
export function parsePayerId(id: string): { provider: string; kind: PayerMatchKind } | null {
  const m = /^([a-z0-9-]+):(customer|card):\S+$/.exec(id);
  if (!m) return null;
  return { provider: m[1] as string, kind: m[2] === 'card' ? 'payment_fingerprint' : 'customer_id' };
}

/** The ids of `told` not in `known` (each once, in order), at most what MAX_PAYER_IDS leaves room for. */
export function newPayerIds(known: readonly string[], told: readonly string[]): string[] {
  const seen = new Set(known);
  const out: string[] = [];
  for (const id of told) {
    if (seen.has(id) || seen.size >= MAX_PAYER_IDS) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}

/**
 * The first payer id the two sets share, as a self-referral match (a card before a customer: it is the
 * stronger sign) with its provider's kind; null when they share none.
 */
export function payerMatch(
  memberIds: readonly string[],
  subscriptionIds: readonly string[],
): { id: string; kind: PayerMatchKind; provider: string } | null {
  const member = new Set(memberIds);
  const shared = subscriptionIds.filter((id) => member.has(id));
  const parsed = shared.map((id) => ({ id, parsed: parsePayerId(id) })).filter((p) => p.parsed !== null);
  const best = parsed.find((p) => p.parsed?.kind === 'payment_fingerprint') ?? parsed[0];
  if (!best?.parsed) return null;
  return { id: best.id, kind: best.parsed.kind, provider: best.parsed.provider };
}

/** A stored string set (DynamoDB SS, read as a Set) or list as payer ids; [] for anything else. */
export function storedPayerIds(value: unknown): string[] {
  const values = value instanceof Set ? [...value] : Array.isArray(value) ? value : [];
  return values.filter((v): v is string => typeof v === 'string' && v !== '');
}
