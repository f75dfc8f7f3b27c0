// Slugs: the public names of an account and its campaigns in the affiliate pages' addresses
// (`/join/<account slug>/<campaign slug>/`, `/portal/<account slug>/login/`).
//
// An account's slug is unique across the service: the lookup item `SLUG#<slug>` names the account (a public
// request knows only the slug). A campaign's slug is unique within its account: the claim
// `A#<acct>#CAMPAIGN_SLUG#<slug>` names the campaign. Both change with their owner's item in one
// transaction, so a slug never points at nothing or at two owners.
import { isCampaignId } from '../domain/ids';
import { isSlug } from '../domain/affiliates';
import type { Campaign } from '../domain/models';
import { toCampaign } from './campaigns';
import { getItem } from './ops';
import { keys, programmeKeys } from './table';

export { accountSlugItems, checkAccountSlug, ensureAccountSlug, slugInUse } from './account-slugs';

/** The account of a slug, or null (unknown slug, or an account deleted since). Two GetItems. */
export async function findAccountBySlug(slug: string): Promise<{ accountId: string; account: Record<string, unknown> } | null> {
  if (!isSlug(slug)) return null;
  const pointer = await getItem(programmeKeys.accountSlug(slug), false);
  if (typeof pointer?.account_id !== 'string') return null;
  const account = await getItem(keys.account(pointer.account_id), false);
  // The account item is the truth: a pointer it no longer names (a race with a change) finds nothing.
  if (!account || account.slug !== slug) return null;
  return { accountId: pointer.account_id, account };
}

/** The campaign of a slug within an account, or null. Two GetItems. */
export async function findCampaignBySlug(accountId: string, slug: string): Promise<Campaign | null> {
  if (!isSlug(slug)) return null;
  const claim = await getItem(programmeKeys.campaignSlugClaim(accountId, slug), false);
  if (typeof claim?.campaign_id !== 'string' || !isCampaignId(claim.campaign_id)) return null;
  const campaign = toCampaign(await getItem(keys.campaign(accountId, claim.campaign_id), false));
  return campaign && campaign.slug === slug ? campaign : null;
}
