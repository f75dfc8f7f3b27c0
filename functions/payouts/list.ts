// GET /v1/payouts/ - payouts newest first; filters status, member, currency (exact count), or batch_id (a
// batch's payouts: the batch's GetItem, then one BatchGet of the page's payouts; no Scan).
import { DetailError, NotFoundError } from '../../shared/domain/errors';
import type { Payout } from '../../shared/domain/lifecycle';
import { payoutView } from '../../shared/domain/payout-views';
import { getBatch, isBatchId } from '../../shared/flows/payouts';
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { listPayoutsQuery } from '../../shared/schemas/query';
import { listPayouts } from '../../shared/store/money-lists';
import { batchGet, lookup } from '../../shared/store/ops';
import { arrayPage, emptyPage } from '../../shared/store/pagination';
import { toPayout } from '../../shared/store/payouts';
import { moneyKeys } from '../../shared/store/table';

async function batchPayouts(accountId: string, batchId: string, page: ReturnType<typeof pageRequest>) {
  if (!isBatchId(batchId)) return emptyPage();
  // An unknown batch is an empty list; any other failure (DynamoDB) is the error it is.
  const batch = await getBatch(accountId, batchId).catch((err: unknown) => {
    if (err instanceof NotFoundError) return null;
    throw err;
  });
  if (!batch) return emptyPage();
  // Newest first, like the other lists (payout ids are time-ordered).
  const ids = [...batch.payout_ids].sort().reverse();
  const window = arrayPage(ids, (id) => id, `${accountId}|payouts|batch|${batchId}`, page);
  const found = await batchGet(window.items.map((id) => moneyKeys.payout(accountId, id)));
  const items = window.items.map((id) => toPayout(lookup(found, moneyKeys.payout(accountId, id)))).filter((p): p is Payout => p !== null);
  return { ...window, items, count: ids.length };
}

export const handler = apiHandler({ query: listPayoutsQuery }, async ({ principal, query, baseUrl, event }) => {
  if (query.batch_id !== undefined && (query.status !== undefined || query.member !== undefined || query.currency !== undefined))
    throw new DetailError(400, 'Filter by batch_id alone (it is not combined with status, member or currency).');
  const page =
    query.batch_id !== undefined
      ? await batchPayouts(principal.accountId, query.batch_id, pageRequest(query))
      : await listPayouts(principal.accountId, pageRequest(query), query);
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(payoutView) }));
});
