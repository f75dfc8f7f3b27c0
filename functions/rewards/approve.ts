// POST /v1/rewards/{id}/approve/ - approve a pending commission now (manual approval, or before its hold
// ends) into its member's payout; an approved or paid one answers as it is. Emits reward.approved.
import { ledgerRewardView } from '../../shared/domain/views';
import { approveReward } from '../../shared/flows/lifecycle';
import { apiHandler, ok } from '../../shared/http/handler';

export const handler = apiHandler({ access: 'money' }, async ({ principal, params }) =>
  ok(ledgerRewardView(await approveReward(principal.accountId, params.id ?? ''))),
);
