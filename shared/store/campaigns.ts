// Campaign repository. A campaign's name is unique per account (ignoring case and surrounding
// spaces) through a claim item; the campaigns counter enforces the plan's limit in the same
// transaction. Delete leaves a tombstone so an id is never reused and members that still point at
// it resolve to "no campaign" without a fan-out over them.
import { campaignLimitMessage, campaignLimit } from '../domain/plans';
import { NotFoundError, PermissionDeniedError, ValidationError } from '../domain/errors';
import { isCampaignId, newCampaignId, newEntityId } from '../domain/ids';
import { discountErrors } from '../domain/discounts';
import { commissionErrors } from '../domain/commissions';
import { MONEY_DEFAULTS, type Campaign } from '../domain/models';
import { isSlug, slugCandidate, slugify, storedSignup, SIGNUP_CLOSED } from '../domain/affiliates';
import type { CreateCampaignInput, UpdateCampaignInput } from '../schemas/campaign';
import type { Principal } from './accounts';
import { tableName } from './client';
import { ConditionsFailedError, counterUpdate, getItem, nowSeconds, readCounter, transact, withRetries, type TransactItem } from './ops';
import { RaceLostError } from './ops';
import { queryPage, type PageRequest } from './pagination';
import { campaignListKeys, GSI1, keys, programmeKeys } from './table';

export const normalizeName = (name: string) => name.trim().toLowerCase();

const nameInUse = (name: string) => ValidationError.field('name', `The name ${name} is already in use; choose another`);

export function toCampaign(item: Record<string, unknown> | undefined): Campaign | null {
  if (item?.type !== 'Campaign' || item.deleted_at !== undefined) return null;
  return {
    id: String(item.id),
    name: String(item.name),
    slug: isSlug(item.slug) ? item.slug : null,
    signup: storedSignup(item.signup),
    allows_credit: Boolean(item.allows_credit),
    credit_amount: Number(item.credit_amount),
    credit_currency: String(item.credit_currency),
    allows_commission: Boolean(item.allows_commission),
    commission_amount: Number(item.commission_amount),
    commission_currency: String(item.commission_currency),
    commission_months: item.commission_months === null || item.commission_months === undefined ? null : Number(item.commission_months),
    reward_threshold: Number(item.reward_threshold),
    referred_discount_type:
      item.referred_discount_type === 'percentage' || item.referred_discount_type === 'flat' ? item.referred_discount_type : null,
    referred_discount_amount: Number(item.referred_discount_amount ?? 0),
    referred_discount_recurring: Boolean(item.referred_discount_recurring),
    commission_type: item.commission_type === 'percentage' ? 'percentage' : MONEY_DEFAULTS.commission_type,
    commission_percent: Number(item.commission_percent ?? MONEY_DEFAULTS.commission_percent),
    hold_days: item.hold_days === undefined ? MONEY_DEFAULTS.hold_days : Number(item.hold_days),
    approval: item.approval === 'manual' ? 'manual' : MONEY_DEFAULTS.approval,
    min_payout: Number(item.min_payout ?? MONEY_DEFAULTS.min_payout),
    created_at: Number(item.created_at),
    version: Number(item.version ?? 0),
    member_count: Math.max(0, Number(item.member_count ?? 0)),
  };
}

export async function getCampaign(accountId: string, id: string): Promise<Campaign | null> {
  if (!isCampaignId(id)) return null; // never a key DynamoDB would refuse
  return toCampaign(await getItem(keys.campaign(accountId, id)));
}

export async function getCampaignOrThrow(accountId: string, id: string): Promise<Campaign> {
  const campaign = await getCampaign(accountId, id);
  if (!campaign) throw new NotFoundError();
  return campaign;
}

export async function listCampaigns(accountId: string, page: PageRequest) {
  const [result, count] = await Promise.all([
    queryPage({ index: GSI1, partitionValue: campaignListKeys.campaignsByCreation(accountId), scope: `${accountId}|campaigns` }, page),
    readCounter(accountId, 'campaigns'),
  ]);
  return { ...result, items: result.items.map((i) => toCampaign(i)).filter((c): c is Campaign => c !== null), count };
}

function nameClaim(accountId: string, name: string, campaignId: string): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...campaignListKeys.campaignNameClaim(accountId, normalizeName(name)), type: 'Claim', campaign_id: campaignId },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

const slugInUse = (slug: string) =>
  ValidationError.field('slug', `The slug ${slug} is already in use by another campaign; choose another.`);

/** The claim items that move a campaign's slug from `current` to `next` (the campaign's own write is the caller's). */
function slugItems(accountId: string, campaignId: string, next: string, current: string | null): TransactItem[] {
  const items: TransactItem[] = [
    {
      Put: {
        TableName: tableName(),
        Item: { ...programmeKeys.campaignSlugClaim(accountId, next), type: 'Claim', campaign_id: campaignId },
        ConditionExpression: 'attribute_not_exists(pk) OR campaign_id = :me',
        ExpressionAttributeValues: { ':me': campaignId },
      },
    },
  ];
  if (current && current !== next) {
    items.push({
      Delete: {
        TableName: tableName(),
        Key: programmeKeys.campaignSlugClaim(accountId, current),
        ConditionExpression: 'attribute_not_exists(pk) OR campaign_id = :me',
        ExpressionAttributeValues: { ':me': campaignId },
      },
    });
  }
  return items;
}

/** A free slug derived from the name (`spring-promo`, `spring-promo-2`, ...): one BatchGet-free probe per try. */
async function freeSlug(accountId: string, name: string): Promise<string> {
  const base = slugify(name);
  for (let n = 1; n <= 50; n++) {
    const candidate = slugCandidate(base, n);
    if (!(await getItem(programmeKeys.campaignSlugClaim(accountId, candidate), false))) return candidate;
  }
  return slugCandidate(base, Date.now() % 100000);
}

export async function createCampaign(principal: Principal, input: CreateCampaignInput): Promise<Campaign> {
  const { accountId, plan } = principal;
  const limit = campaignLimit(plan);
  const discount = { ...discountErrors(input), ...commissionErrors(input) };
  if (Object.keys(discount).length > 0) throw new ValidationError(discount);
  const createdMs = Date.now();
  const slug = input.slug ?? (await freeSlug(accountId, input.name));
  const campaign: Campaign = {
    ...input,
    slug,
    signup: { ...SIGNUP_CLOSED, ...input.signup },
    id: newCampaignId(),
    created_at: Math.floor(createdMs / 1000),
    version: 1,
    member_count: 0,
  };
  const { member_count: _unused, ...stored } = campaign;
  try {
    await transact([
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...keys.campaign(accountId, campaign.id),
            type: 'Campaign',
            ...stored,
            gsi1pk: campaignListKeys.campaignsByCreation(accountId),
            // A UUIDv7 is time-ordered and monotonic within a container, so campaigns created in the
            // same millisecond still list in creation order.
            gsi1sk: `${newEntityId()}#${campaign.id}`,
          },
          // Also refuses a tombstone: a deleted campaign's id is never reused.
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      nameClaim(accountId, input.name, campaign.id),
      counterUpdate(accountId, 'campaigns', 1, limit === null ? undefined : { below: limit }),
      ...slugItems(accountId, campaign.id, slug, null),
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError) {
      if (err.failed(1)) throw nameInUse(input.name);
      if (err.failed(2)) throw new PermissionDeniedError(campaignLimitMessage(plan));
      if (err.failed(3)) {
        // A derived slug taken meanwhile: derive again; a slug the caller chose is refused.
        if (input.slug !== undefined) throw slugInUse(slug);
        return createCampaign(principal, input);
      }
      if (err.failed(0)) return createCampaign(principal, input); // 32-bit id collision: draw another
    }
    throw err;
  }
  return campaign;
}

class StaleCampaignError extends RaceLostError {}

export async function updateCampaign(accountId: string, id: string, patch: UpdateCampaignInput): Promise<Campaign> {
  return withRetries(
    async () => {
      const current = await getCampaignOrThrow(accountId, id);
      // A campaign from before slugs gets one with its first change; `signup` merges the keys given.
      const slug = patch.slug ?? current.slug ?? (await freeSlug(accountId, patch.name ?? current.name));
      const signup = patch.signup === undefined ? current.signup : { ...current.signup, ...patch.signup };
      const next: Campaign = { ...current, ...patch, slug, signup, version: current.version + 1 };
      const discount = { ...discountErrors(next), ...commissionErrors(next) };
      if (Object.keys(discount).length > 0) throw new ValidationError(discount);
      const changes = Object.entries({ ...patch, slug, ...(patch.signup === undefined ? {} : { signup }) }).filter(
        ([, value]) => value !== undefined,
      );
      const reslugged = slug !== current.slug;
      const renamed = patch.name !== undefined && normalizeName(patch.name) !== normalizeName(current.name);
      const names: Record<string, string> = { '#version': 'version' };
      const values: Record<string, unknown> = { ':version': current.version, ':next': next.version };
      const sets = ['#version = :next'];
      changes.forEach(([field, value], i) => {
        names[`#f${i}`] = field;
        values[`:v${i}`] = value;
        sets.push(`#f${i} = :v${i}`);
      });
      const items: TransactItem[] = [
        {
          Update: {
            TableName: tableName(),
            Key: keys.campaign(accountId, id),
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: '#version = :version AND attribute_not_exists(deleted_at)',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          },
        },
      ];
      const slugAt = items.length;
      if (reslugged) items.push(...slugItems(accountId, id, slug, current.slug));
      const nameAt = items.length;
      if (renamed && patch.name !== undefined) {
        items.push(nameClaim(accountId, patch.name, id), {
          Delete: {
            TableName: tableName(),
            Key: campaignListKeys.campaignNameClaim(accountId, normalizeName(current.name)),
            ConditionExpression: 'campaign_id = :id',
            ExpressionAttributeValues: { ':id': id },
          },
        });
      }
      try {
        await transact(items);
      } catch (err) {
        if (err instanceof ConditionsFailedError) {
          if (renamed && patch.name !== undefined && err.failed(nameAt)) throw nameInUse(patch.name);
          if (reslugged && err.failed(slugAt)) {
            if (patch.slug !== undefined) throw slugInUse(slug);
            throw new StaleCampaignError(); // a derived slug taken meanwhile: derive again
          }
          throw new StaleCampaignError();
        }
        throw err;
      }
      return next;
    },
    (err) => err instanceof StaleCampaignError,
  );
}

export async function deleteCampaign(accountId: string, id: string): Promise<void> {
  await withRetries(
    async () => {
      const current = await getCampaignOrThrow(accountId, id);
      try {
        await transact([
          {
            // Tombstone: keeps the key (so the id is never reused) and drops everything else,
            // including the GSI keys that list it.
            Put: {
              TableName: tableName(),
              Item: { ...keys.campaign(accountId, id), type: 'Campaign', id, deleted_at: nowSeconds() },
              ConditionExpression: '#version = :version AND attribute_not_exists(deleted_at)',
              ExpressionAttributeNames: { '#version': 'version' },
              ExpressionAttributeValues: { ':version': current.version },
            },
          },
          {
            Delete: {
              TableName: tableName(),
              Key: campaignListKeys.campaignNameClaim(accountId, normalizeName(current.name)),
              ConditionExpression: 'campaign_id = :id',
              ExpressionAttributeValues: { ':id': id },
            },
          },
          counterUpdate(accountId, 'campaigns', -1),
          // The slug is free again (its public page answers 404 from now on).
          ...(current.slug
            ? [
                {
                  Delete: {
                    TableName: tableName(),
                    Key: programmeKeys.campaignSlugClaim(accountId, current.slug),
                    ConditionExpression: 'attribute_not_exists(pk) OR campaign_id = :id',
                    ExpressionAttributeValues: { ':id': id },
                  },
                },
              ]
            : []),
        ]);
      } catch (err) {
        if (err instanceof ConditionsFailedError) throw new StaleCampaignError();
        throw err;
      }
    },
    (err) => err instanceof StaleCampaignError,
  );
}
