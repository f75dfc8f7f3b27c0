// POST /v1/payouts/{id}/cancel/ {"reason"} - take a processing payout out of its batch before it is paid
// (not sent after all): its rewards go back to approved and join the member's next payout.
import { payoutDetailView } from '../../shared/domain/payout-views';
import { markPayoutFailed } from '../../shared/flows/payouts';
import { apiHandler, ok } from '../../shared/http/handler';
import { markFailedBody } from '../../shared/schemas/money';

export const handler = apiHandler({ body: markFailedBody, access: 'money' }, async ({ principal, params, body }) =>
  ok(payoutDetailView(await markPayoutFailed(principal.accountId, params.id ?? '', body.reason, 'canceled', true))),
);
