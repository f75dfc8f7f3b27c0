// Rail item lookups (docs/payouts.md "Paying through a rail"): a rail's id of an item (a Wise transfer id,
// a PayPal payout_item_id, a Stripe `tr_…`) -> the payout it pays. A rail whose webhooks name only its own
// item id (Wise) is matched through it. Written in the transaction that first records a payout's rail item
// id; never changed (a re-send gives the payout a new item and a new lookup; the old one then names a
// payout whose stored item id differs, and its outcomes are stale).
import type { RailKind } from '../rails/definition';
import { tableName } from './client';
import type { TransactItem } from './ops';
import { getItem } from './ops';
import type { Key } from './table';

/** Apart from `keys` (store/table.ts): only the rail flows name these, and other bundles do not carry them. */
export const railItemKeys = {
  item: (acct: string, kind: RailKind, railItemId: string): Key => ({ pk: `A#${acct}#RAILITEM#${kind}#${railItemId}`, sk: 'RAILITEM' }),
};

/** The lookup of `railItemId` (in the transaction that first gives the payout that item id). */
export function railItemPut(accountId: string, kind: RailKind, railItemId: string, payoutId: string): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...railItemKeys.item(accountId, kind, railItemId),
        type: 'RailItem',
        rail: kind,
        rail_item_id: railItemId,
        payout_id: payoutId,
      },
    },
  };
}

/** The payout a rail item pays, or null when no payout ever had it. */
export async function payoutOfRailItem(accountId: string, kind: RailKind, railItemId: string): Promise<string | null> {
  const item = await getItem(railItemKeys.item(accountId, kind, railItemId));
  return typeof item?.payout_id === 'string' ? item.payout_id : null;
}
