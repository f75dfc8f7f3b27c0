// Members' payout methods (docs/payouts.md "Members' methods"): which rail a member's payouts go by, the
// portal's "Set up payouts" for Stripe, and Stripe's word on the member's connected account.
import { config } from '../config';
import { DetailError, NotFoundError, ValidationError } from '../domain/errors';
import { PAYOUT_METHODS, type PayoutMethod } from '../domain/payout-methods';
import type { RailKind } from '../rails/definition';
import { RAIL_NAMES } from '../rails/kinds';
import { ACCOUNT_RAIL } from '../rails/member-accounts';
import { RailBatchError } from '../rails/port';
import { toMember } from '../store/members';
import { getItem, queryAll } from '../store/ops';
import { railConnection, railKeys } from '../store/rail-connections';
import { attachStripeAccount, chooseStripe, isStripeAccountId, memberOfStripeAccount, setStripeReady } from '../store/stripe-accounts';
import { keys } from '../store/table';
import { refreshMemberPayouts } from './payouts';

/**
 * The rails the account has connected, in PAYOUT_METHODS' order (one Query of the account's public rail
 * items, no secret read). Read here rather than through railConnections, which needs the rails' registry:
 * the member and portal writes that call this stay free of the rails' code (test/unit/bundle-budget.test.ts).
 */
export async function connectedRails(accountId: string): Promise<RailKind[]> {
  const items = await queryAll({ partitionValue: railKeys.settings(accountId, 'paypal').pk });
  const kinds = new Set(items.map((i) => i.kind));
  return PAYOUT_METHODS.filter((k) => kinds.has(k));
}

/** The words of a method refused because its rail is not connected. */
export function methodNotConnected(method: PayoutMethod, connected: readonly RailKind[]): string {
  const others = connected.map((k) => `"${k}"`);
  return `${RAIL_NAMES[method]} is not connected for this programme; choose ${
    others.length > 0 ? `one of ${others.join(', ')} or null` : 'null (the payout file): no payout rail is connected'
  }.`;
}

/**
 * A method a member may choose: null always; a rail only when the account has connected it (`rails`, or one
 * Query). Refused with a field error `{"payout_method": [...]}` otherwise.
 */
export async function checkPayoutMethod(
  accountId: string,
  method: PayoutMethod | null | undefined,
  rails?: Promise<RailKind[]>,
): Promise<void> {
  if (method === undefined || method === null) return;
  const connected = await (rails ?? connectedRails(accountId));
  if (!connected.includes(method)) throw new ValidationError({ payout_method: [methodNotConnected(method, connected)] });
}

export const STRIPE_NOT_CONNECTED =
  'This programme has not connected Stripe payouts, so its members cannot set up Stripe payouts; choose another payout method.';
export const STRIPE_UNAVAILABLE = 'Stripe did not answer; try again in a minute.';

/**
 * The member's portal page, where Stripe's onboarding comes back to (`?stripe=return` or `?stripe=refresh`):
 * the path the member's session opened on. A portal link's page is `/portal/<account id>/` (the app keeps
 * that tab's session under the path's account segment), an affiliate's login is `/portal/<slug>/` (the
 * cookie works under any).
 */
export function portalReturnUrls(accountId: string, account: Record<string, unknown>, mode: 'bearer' | 'cookie') {
  const name = mode === 'cookie' && typeof account.slug === 'string' && account.slug !== '' ? account.slug : accountId;
  const page = `${config().publicBaseUrl}/portal/${encodeURIComponent(name)}/`;
  return { returnUrl: `${page}?stripe=return`, refreshUrl: `${page}?stripe=refresh` };
}

/**
 * POST /portal/v1/me/stripe-account-link/: the member's Express account (created on the first call, with an
 * Idempotency-Key derived from the member id, so a retry or a concurrent call makes one account; stored
 * once, conditioned on the member having none), Stripe becomes their payout method, and a fresh Account
 * Link to Stripe's onboarding that comes back to the portal. 409 when the account has not connected Stripe.
 */
export async function createStripeAccountLink(
  accountId: string,
  memberId: string,
  mode: 'bearer' | 'cookie',
): Promise<{ url: string; expires_at: number }> {
  const [connection, memberItem, account] = await Promise.all([
    railConnection(accountId, ACCOUNT_RAIL),
    getItem(keys.member(accountId, memberId)),
    getItem(keys.account(accountId), false),
  ]);
  const member = toMember(memberItem);
  if (!member || !account) throw new NotFoundError();
  if (!connection) throw new DetailError(409, STRIPE_NOT_CONNECTED);
  const { createConnectedAccount, createAccountLink, StripeRailError } = await import('../rails/stripe/adapter');
  const stripe = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (err instanceof RailBatchError) {
        throw new DetailError(
          err.code === 'unauthorized' ? 502 : 503,
          err.code === 'unauthorized'
            ? "Stripe refused the programme's credentials; the programme must reconnect Stripe."
            : STRIPE_UNAVAILABLE,
        );
      }
      if (err instanceof StripeRailError) throw new DetailError(502, `Stripe refused the request: ${err.detail || err.code || err.type}`);
      throw err;
    }
  };

  let stripeAccountId = member.stripe_account_id ?? null;
  if (!stripeAccountId) {
    const created = await stripe(() => createConnectedAccount(connection, memberId, member.email));
    if (!isStripeAccountId(created.id)) throw new DetailError(502, 'Stripe answered an account id Refloop cannot use.');
    if (await attachStripeAccount(accountId, memberId, created.id)) stripeAccountId = created.id;
    else {
      // Another request stored the member's account first (the same one: the Idempotency-Key replays it).
      const again = toMember(await getItem(keys.member(accountId, memberId)));
      if (!again) throw new NotFoundError();
      stripeAccountId = again.stripe_account_id ?? created.id;
      if (again.payout_method !== ACCOUNT_RAIL) await chooseStripe(accountId, memberId);
    }
  } else if (member.payout_method !== ACCOUNT_RAIL) await chooseStripe(accountId, memberId);
  // Every time, not only after a change: a call whose refresh failed after the write heals on its retry.
  await refreshMemberPayouts(accountId, memberId);
  const account_ = stripeAccountId;
  const { returnUrl, refreshUrl } = portalReturnUrls(accountId, account, mode);
  return stripe(() => createAccountLink(connection, account_, refreshUrl, returnUrl));
}

/**
 * Stripe Connect's account.updated, verified and queued by the rail webhook intake: the members whose
 * connected account it is become ready or not, and their collecting payouts due or open again. A
 * redelivered event changes nothing; an account no member has (any more) is skipped.
 */
export async function applyStripeAccountUpdates(
  accountId: string,
  updates: readonly { destination: string; ready: boolean }[],
): Promise<void> {
  for (const { destination, ready } of updates) {
    const memberId = await memberOfStripeAccount(accountId, destination);
    if (!memberId) continue;
    await setStripeReady(accountId, memberId, destination, ready);
    // Also when nothing changed: a delivery whose refresh failed after the write heals on its redelivery.
    await refreshMemberPayouts(accountId, memberId);
  }
}
