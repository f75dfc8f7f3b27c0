// GET /v1/referrals/{id}/diagnosis/ - why a referral did not convert: the provider subscriptions and
// checkouts seen for the referred user's email (or naming this referral) that did not attribute, and why
// (docs/referrals-diagnosis.md).
import { apiHandler, ok } from '../../shared/http/handler';
import { diagnoseReferral } from '../../shared/flows/diagnosis';
import { diagnosisQuery } from '../../shared/schemas/diagnosis';

export const handler = apiHandler({ query: diagnosisQuery }, async ({ principal, params, query }) =>
  ok(await diagnoseReferral(principal.accountId, params.id ?? '', query.email)),
);
