// GET /v1/referrals/user/{user_identifier}/ - retrieve the referral of a referred user
import { apiHandler, ok } from '../../shared/http/handler';
import { referralView } from '../../shared/domain/views';
import { getReferralByUserOrThrow } from '../../shared/store/referrals';

export const handler = apiHandler({}, async ({ principal, params }) =>
  ok(referralView(await getReferralByUserOrThrow(principal.accountId, params.user_identifier ?? ''))),
);
