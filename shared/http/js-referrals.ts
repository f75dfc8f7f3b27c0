// POST /js/v1/referrals/ behind the publishable key, which anyone can read off the app's pages. So the answer
// never tells whether a code is a member's, whether a user was referred already, nor hands back an existing
// referral's id: every well-formed request answers 200 `{"id": ...}`, the id of the referral THIS request
// created, or else a fresh decoy id of the same form (time-ordered, 32 hex) that names nothing. The browser
// script keeps the first id it got for a user, and a decoy in a checkout passthrough attributes nothing.
//
// The account chooses what the key may do (shared/store/accounts.ts JsReferralMode): `open` creates the
// referral; `confirm` creates nothing and answers the same way (the app's backend creates the referral with
// its secret key: POST /v1/referrals/ with the user and the code from `refloop.code`); `off` is a 403.
import { newEntityId } from '../domain/ids';
import { ipHash } from '../domain/visitors';
import { ApiError, DetailError } from '../domain/errors';
import { createReferralWithCoupon } from '../flows/coupons';
import type { CreateReferralInput } from '../schemas/referral';
import type { Principal } from '../store/accounts';

export const JS_REFERRALS_OFF = 'Referrals from the browser are turned off for this account; the app creates them with its secret key.';

/**
 * The id to answer: the created referral's, or a decoy. The referral records the digest of the client's
 * address (`ip_hash`, never the address) for the fraud rules (docs/fraud.md "Facts").
 */
export async function createJsReferral(principal: Principal, input: CreateReferralInput, clientIp: string): Promise<string> {
  const mode = principal.jsReferrals ?? 'open';
  if (mode === 'off') throw new DetailError(403, JS_REFERRALS_OFF);
  const decoy = newEntityId();
  if (mode === 'confirm') return decoy;
  try {
    const { referral, created } = await createReferralWithCoupon(principal.accountId, input, 'js', ipHash(clientIp));
    return created ? referral.id : decoy;
  } catch (err) {
    // Unknown code, user already referred, self-referral: the domain's 4xx answers, all hidden alike.
    if (err instanceof ApiError && (err.status === 400 || err.status === 404)) return decoy;
    throw err;
  }
}
