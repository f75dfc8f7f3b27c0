// POST /v1/rewards/{id}/release/ - release a reward a fraud rule holds (docs/fraud.md "Holds"): back to
// pending until its hold period ends, approved at once into the member's payout when that has passed, or
// pending for an operator's approval on a manual campaign. 404 for an unknown id, 409 when it is not held.
// Emits reward.released (and reward.approved when approved at once).
import { ledgerRewardView } from '../../shared/domain/views';
import { releaseReward } from '../../shared/flows/fraud-holds';
import { apiHandler, ok } from '../../shared/http/handler';

export const handler = apiHandler({ access: 'money' }, async ({ principal, params }) =>
  ok(ledgerRewardView(await releaseReward(principal.accountId, params.id ?? ''))),
);
