// An account's slug: its lookup item `SLUG#<slug>` and the transaction items that move it (store/slugs.ts
// reads slugs; this module writes them, apart so that store/accounts.ts can give a new account its slug
// without importing the campaigns' store).
import { ValidationError } from '../domain/errors';
import { RESERVED_SLUGS, isSlug, slugCandidate, slugify } from '../domain/affiliates';
import { tableName } from './client';
import { ConditionsFailedError, getItem, transact, type TransactItem } from './ops';
import { keys, programmeKeys } from './table';

export const slugInUse = (slug: string) => ValidationError.field('slug', `The slug ${slug} is already in use; choose another.`);
export const slugReserved = (slug: string) => ValidationError.field('slug', `The slug ${slug} is reserved; choose another.`);

/** The items that move an account's slug from `current` to `next` (the account item's own update is the caller's). */
export function accountSlugItems(accountId: string, next: string, current: string | null): TransactItem[] {
  const items: TransactItem[] = [
    {
      Put: {
        TableName: tableName(),
        Item: { ...programmeKeys.accountSlug(next), type: 'Claim', account_id: accountId },
        ConditionExpression: 'attribute_not_exists(pk) OR account_id = :me',
        ExpressionAttributeValues: { ':me': accountId },
      },
    },
  ];
  if (current && current !== next) {
    items.push({
      Delete: {
        TableName: tableName(),
        Key: programmeKeys.accountSlug(current),
        ConditionExpression: 'attribute_not_exists(pk) OR account_id = :me',
        ExpressionAttributeValues: { ':me': accountId },
      },
    });
  }
  return items;
}

/** Refuses a reserved account slug (campaign slugs live one segment further down and reserve nothing). */
export function checkAccountSlug(slug: string): void {
  if (RESERVED_SLUGS.has(slug)) throw slugReserved(slug);
}

/**
 * Gives an account without a slug one derived from its name (`acme-cloud`, then `acme-cloud-2`, ...).
 * Answers the slug it holds afterwards (another writer's, when one won meanwhile).
 */
export async function ensureAccountSlug(accountId: string, name: string): Promise<string | null> {
  const base = slugify(name);
  for (let n = 1; n <= 20; n++) {
    const slug = slugCandidate(base, n);
    if (RESERVED_SLUGS.has(slug)) continue;
    try {
      await transact([
        ...accountSlugItems(accountId, slug, null),
        {
          Update: {
            TableName: tableName(),
            Key: keys.account(accountId),
            UpdateExpression: 'SET slug = :slug',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(slug)',
            ExpressionAttributeValues: { ':slug': slug },
          },
        },
      ]);
      return slug;
    } catch (err) {
      if (!(err instanceof ConditionsFailedError)) throw err;
      if (err.failed(1)) {
        const account = await getItem(keys.account(accountId));
        return isSlug(account?.slug) ? account.slug : null;
      }
    }
  }
  return null;
}
