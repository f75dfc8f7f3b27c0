// GET /v1/referrals/{id}/ - retrieve a referral
import { apiHandler, ok } from '../../shared/http/handler';
import { referralView } from '../../shared/domain/views';
import { getReferralOrThrow } from '../../shared/store/referrals';

export const handler = apiHandler({}, async ({ principal, params }) =>
  ok(referralView(await getReferralOrThrow(principal.accountId, params.id ?? ''))),
);
