// GET /v1/payout-batches/{id}/file - the batch's file (text/csv): PayPal Payouts upload, Wise batch or generic CSV.
import { batchFile } from '../../shared/flows/payouts';
import { apiHandler } from '../../shared/http/handler';

export const handler = apiHandler({}, async ({ principal, params }) => {
  const { batch, csv } = await batchFile(principal.accountId, params.id ?? '');
  return {
    status: 200,
    raw: {
      contentType: 'text/csv; charset=utf-8',
      text: csv,
      headers: { 'Content-Disposition': `attachment; filename="${batch.format}-${batch.currency}-${batch.id}.csv"` },
    },
  };
});
