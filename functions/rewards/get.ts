// GET /v1/rewards/{id}/ - one reward with its lifecycle, referral, member and campaign.
import { NotFoundError } from '../../shared/domain/errors';
import { isEntityId } from '../../shared/domain/ids';
import { ledgerRewardView } from '../../shared/domain/views';
import { apiHandler, ok } from '../../shared/http/handler';
import { toLedgerReward } from '../../shared/store/ledger';
import { getItem } from '../../shared/store/ops';
import { keys } from '../../shared/store/table';

export const handler = apiHandler({}, async ({ principal, params }) => {
  const id = params.id ?? '';
  const reward = isEntityId(id) ? toLedgerReward(await getItem(keys.reward(principal.accountId, id))) : null;
  if (!reward) throw new NotFoundError();
  return ok(ledgerRewardView(reward));
});
