// POST /v1/payouts/{id}/mark-paid/ {"paid_at"?, "reference"?} - a due or processing payout was paid; its
// rewards become paid. A paid one answers as it is. Emits payout.paid and reward.paid.
import { payoutDetailView } from '../../shared/domain/payout-views';
import { markPayoutPaid } from '../../shared/flows/payouts';
import { apiHandler, ok } from '../../shared/http/handler';
import { markPaidBody } from '../../shared/schemas/money';

export const handler = apiHandler({ body: markPaidBody, access: 'money' }, async ({ principal, params, body }) =>
  ok(
    payoutDetailView(
      await markPayoutPaid(principal.accountId, params.id ?? '', { paidAt: body.paid_at, reference: body.reference, byHand: true }),
    ),
  ),
);
