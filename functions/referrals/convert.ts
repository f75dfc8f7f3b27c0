// POST /referrals/{id}/conversion/ (and /v1/...) - record a conversion with checkout_id or subscription_id;
// 200 with the referral. Rewards are created asynchronously by the reward worker.
import { apiHandler, ok } from '../../shared/http/handler';
import { referralView } from '../../shared/domain/views';
import { convertReferral } from '../../shared/flows/conversion';
import { conversionBody, conversionTarget } from '../../shared/schemas/conversion';

export const handler = apiHandler({ body: conversionBody }, async ({ principal, params, body }) => {
  const referral = await convertReferral(principal.accountId, params.id ?? '', conversionTarget(body));
  return ok(referralView(referral));
});
