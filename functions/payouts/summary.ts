// GET /v1/payouts/summary/ - totals per currency: due, open (below the minimum or no payout email), processing, paid.
import { formatCents } from '../../shared/domain/money';
import { apiHandler, ok } from '../../shared/http/handler';
import { payoutSummary } from '../../shared/store/money-lists';

export const handler = apiHandler({}, async ({ principal }) => {
  const sums = await payoutSummary(principal.accountId);
  const money = (m: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(m)
        .sort()
        .map(([c, n]) => [c, formatCents(n)]),
    );
  return ok({ due: money(sums.due), open: money(sums.open), processing: money(sums.processing), paid: money(sums.paid) });
});
