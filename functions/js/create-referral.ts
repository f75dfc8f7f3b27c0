// POST /js/v1/referrals/ - a referral with source "js" (publishable key), under the account's js referral
// mode. Answers `{"id": ...}` alike whatever the outcome, so nothing can be probed (shared/http/js-referrals.ts).
import { jsHandler } from '../../shared/http/js';
import { createJsReferral } from '../../shared/http/js-referrals';
import { jsReferralBody } from '../../shared/schemas/js';

export const handler = jsHandler({ body: jsReferralBody }, async ({ principal, body, clientIp }) => ({
  status: 200,
  body: { id: await createJsReferral(principal, body, clientIp) },
}));
