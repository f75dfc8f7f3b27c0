// POST /v1/rewards/{id}/void/ {"reason"} - void an unpaid reward (and its clawbacks); it leaves its payout.
// A voided one answers as it is; a paid one, or one whose payout is being paid, answers 409. Emits reward.voided.
import { ledgerRewardView } from '../../shared/domain/views';
import { voidReward } from '../../shared/flows/lifecycle';
import { apiHandler, ok } from '../../shared/http/handler';
import { voidRewardBody } from '../../shared/schemas/money';

export const handler = apiHandler({ body: voidRewardBody, access: 'money' }, async ({ principal, params, body }) =>
  ok(ledgerRewardView(await voidReward(principal.accountId, params.id ?? '', body.reason))),
);
