// Members' tax details (docs/portal.md "Tax details"), collected by the portal when the account sets
// `tax_details_required`. One item per member in the account's tax partition:
//
//   `A#<acct>#TAX#DETAILS` / `M#<member_id>`: form (`w9` | `w8ben`), country, `sealed` (the whole body as
//   JSON, encrypted with the secrets mechanism, shared/secrets/: bound to the account), updated_at.
//
// The partition starts with `A#<acct>#TAX#`, so the stack denies it to every function but the portal's tax
// routes and the tax export (functions/routes.ts `taxDetails`, infra/cloud/api-stack.ts). The member item
// carries only `tax_details_at` (when they were last given, no detail), written in the same transaction,
// so member views and the payout run know whether details exist without reading them.
import { NotFoundError } from '../domain/errors';
import { isEntityId } from '../domain/ids';
import type { TaxDetailsInput } from '../schemas/tax-details';
import { decryptSecret, encryptSecret } from '../secrets';
import { nowSeconds, transact } from './ops';
import { type Page, type PageRequest, queryPage } from './pagination';
import { ConditionsFailedError, getItem } from './ops';
import { keys, type Key } from './table';
import { tableName } from './client';

export const taxKeys = {
  partition: (acct: string) => `A#${acct}#TAX#DETAILS`,
  item: (acct: string, memberId: string): Key => ({ pk: `A#${acct}#TAX#DETAILS`, sk: `M#${memberId}` }),
};

export interface TaxDetails extends TaxDetailsInput {
  member_id: string;
  updated_at: number;
}

/** Stores (or replaces) a member's tax details, encrypted; 404 when the member no longer exists. */
export async function putTaxDetails(accountId: string, memberId: string, input: TaxDetailsInput): Promise<TaxDetails> {
  if (!isEntityId(memberId)) throw new NotFoundError();
  const now = nowSeconds();
  const plain = {
    legal_name: input.legal_name,
    country: input.country,
    address: input.address,
    ...(input.us ? { us: input.us } : {}),
    ...(input.w8ben ? { w8ben: input.w8ben } : {}),
  };
  const sealed = await encryptSecret(accountId, JSON.stringify(plain));
  try {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.member(accountId, memberId),
          UpdateExpression: 'SET tax_details_at = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':now': now },
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...taxKeys.item(accountId, memberId),
            type: 'TaxDetails',
            member_id: memberId,
            form: input.us ? 'w9' : 'w8ben',
            country: input.country,
            sealed,
            updated_at: now,
          },
        },
      },
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError && err.failed(0)) throw new NotFoundError();
    throw err;
  }
  return { ...plain, member_id: memberId, updated_at: now };
}

async function unseal(accountId: string, item: Record<string, unknown>): Promise<TaxDetails | null> {
  if (item.type !== 'TaxDetails' || typeof item.sealed !== 'string' || typeof item.member_id !== 'string') return null;
  const plain = JSON.parse(await decryptSecret(accountId, item.sealed)) as TaxDetailsInput;
  return { ...plain, member_id: item.member_id, updated_at: Number(item.updated_at) };
}

/** A member's tax details, decrypted, or null when they gave none. */
export async function getTaxDetails(accountId: string, memberId: string): Promise<TaxDetails | null> {
  if (!isEntityId(memberId)) return null;
  const item = await getItem(taxKeys.item(accountId, memberId));
  return item ? unseal(accountId, item) : null;
}

/** One page of the account's tax details (by member id, descending: newest members first), decrypted. */
export async function listTaxDetails(accountId: string, page: PageRequest): Promise<Page<TaxDetails>> {
  const found = await queryPage<Record<string, unknown>>({ partitionValue: taxKeys.partition(accountId), scope: `${accountId}#tax` }, page);
  const items = (await Promise.all(found.items.map((item) => unseal(accountId, item)))).filter((t): t is TaxDetails => t !== null);
  return { ...found, items };
}
