// The account's settings as the dashboard shows and edits them (GET/PATCH /v1/account/): name, plan,
// publishable key, email sender, embed origins, js referral mode and the provider connection's public part.
// One BatchGet reads the account and the provider's public settings item; no secret item is ever read here.
import { NotFoundError } from '../domain/errors';
import { affiliateSettingsOf, type AffiliateSettings, type AttributionModel, type Theme } from '../domain/affiliates';
import { campaignLimit, isPlan, type Plan } from '../domain/plans';
import type { Mailbox } from '../email/sender';
import { ensurePublishableKey, isJsReferralMode, setJsReferralMode, type JsReferralMode } from './accounts';
import { tableName } from './client';
import { senderOf } from './emails';
import { batchGet, ConditionsFailedError, getItem, lookup, transact, type TransactItem } from './ops';
import { accountSlugItems, checkAccountSlug, ensureAccountSlug, slugInUse } from './account-slugs';
import { keys, programmeKeys } from './table';
import { providerOptions, type ProviderOption } from '../billing/options';
import { definitionOfStored, type ProviderKind } from '../billing/registry';

export interface AccountSettings {
  id: string;
  name: string;
  plan: Plan;
  /** Campaigns the plan allows (null: no limit), for the dashboard's Campaigns page. */
  campaign_limit: number | null;
  publishable_key: string | null;
  script_tag: string | null;
  js_referrals: JsReferralMode;
  email_sender: Mailbox | null;
  embed_origins: string[];
  /** The page members' links point to (`?via=<code>` added); null until set. */
  referral_url: string | null;
  provider: {
    kind: ProviderKind | null;
    connected: boolean;
    webhook_url: string | null;
    vendor_id: number | null;
    api_url: string | null;
  };
  /** The providers it can connect, with their connection form's fields (the dashboard renders the form). */
  provider_options: ProviderOption[];
}

/** With the affiliate programme's settings (docs/affiliates.md). */
export type AccountSettingsView = AccountSettings & AffiliateSettings;

export function providerView(accountId: string, item: Record<string, unknown> | undefined, baseUrl: string): AccountSettings['provider'] {
  const definition = definitionOfStored(item);
  if (!item || !definition) return { kind: null, connected: false, webhook_url: null, vendor_id: null, api_url: null };
  return {
    kind: definition.kind as ProviderKind,
    connected: true,
    webhook_url: `${baseUrl}/webhooks/${definition.webhook.path}/${accountId}/`,
    ...definition.view(item),
  };
}

export async function accountSettings(accountId: string, baseUrl: string): Promise<AccountSettingsView> {
  const found = await batchGet([keys.account(accountId), keys.providerSettings(accountId)]);
  let account = lookup(found, keys.account(accountId));
  const plan = account?.plan;
  if (!account || !isPlan(plan)) throw new NotFoundError();
  if (typeof account.publishable_key !== 'string') {
    // An account from before publishable keys gets one on first sight (as `account show` does).
    const ensured = await ensurePublishableKey(accountId);
    account = { ...account, publishable_key: ensured.publishableKey };
  }
  if (typeof account.slug !== 'string') {
    // An account from before slugs gets one on first sight too.
    const slug = await ensureAccountSlug(accountId, String(account.name));
    if (slug) account = { ...account, slug };
  }
  const pub = typeof account.publishable_key === 'string' ? account.publishable_key : null;
  return {
    id: accountId,
    name: String(account.name),
    plan,
    campaign_limit: campaignLimit(plan),
    publishable_key: pub,
    script_tag: pub ? `<script src="${baseUrl}/js/refloop.js" data-key="${pub}" async></script>` : null,
    js_referrals: isJsReferralMode(account.js_referrals) ? account.js_referrals : 'open',
    email_sender: senderOf(account),
    embed_origins: Array.isArray(account.embed_origins) ? account.embed_origins.map(String) : [],
    referral_url: typeof account.referral_url === 'string' ? account.referral_url : null,
    provider: providerView(accountId, lookup(found, keys.providerSettings(accountId)), baseUrl),
    provider_options: providerOptions(),
    ...affiliateSettingsOf(account),
  };
}

/** Applies the given settings (others unchanged); the js referral mode also reaches the publishable key item. */
export async function updateAccountSettings(
  accountId: string,
  changes: {
    name?: string;
    email_sender?: Mailbox | null;
    embed_origins?: string[];
    js_referrals?: JsReferralMode;
    referral_url?: string | null;
    slug?: string;
    attribution_model?: AttributionModel;
    attribution_days?: number;
    tax_details_required?: boolean;
    affiliate_emails?: Partial<AffiliateSettings['affiliate_emails']>;
    theme?: Theme;
  },
): Promise<void> {
  const set: string[] = [];
  const remove: string[] = [];
  const values: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  const assign = (attribute: string, value: unknown) => {
    const i = set.length;
    names[`#a${i}`] = attribute;
    values[`:a${i}`] = value;
    set.push(`#a${i} = :a${i}`);
  };
  if (changes.name !== undefined) assign('name', changes.name);
  if (changes.email_sender !== undefined) {
    if (changes.email_sender === null) remove.push('email_from', 'email_from_name');
    else {
      assign('email_from', changes.email_sender.address);
      assign('email_from_name', changes.email_sender.name);
    }
  }
  if (changes.referral_url !== undefined) {
    if (changes.referral_url === null) remove.push('referral_url');
    else assign('referral_url', changes.referral_url);
  }
  if (changes.embed_origins !== undefined) assign('embed_origins', changes.embed_origins);
  if (changes.attribution_model !== undefined) assign('attribution_model', changes.attribution_model);
  if (changes.attribution_days !== undefined) assign('attribution_days', changes.attribution_days);
  if (changes.tax_details_required !== undefined) assign('tax_details_required', changes.tax_details_required);
  if (changes.theme !== undefined) assign('theme', changes.theme);
  const items: TransactItem[] = [];
  let current: Record<string, unknown> | undefined;
  if (changes.affiliate_emails !== undefined || changes.slug !== undefined) current = await getItem(keys.account(accountId));
  if ((changes.affiliate_emails !== undefined || changes.slug !== undefined) && !current) throw new NotFoundError();
  if (changes.affiliate_emails !== undefined) {
    // A PATCH merges the switches it gives; the monthly summary's registry follows its switch.
    const emails = { ...affiliateSettingsOf(current).affiliate_emails, ...changes.affiliate_emails };
    assign('affiliate_emails', emails);
    items.push(
      emails.monthly_summary
        ? { Put: { TableName: tableName(), Item: { ...programmeKeys.summaryAccount(accountId), type: 'Claim', account_id: accountId } } }
        : { Delete: { TableName: tableName(), Key: programmeKeys.summaryAccount(accountId) } },
    );
  }
  let slugAt = -1;
  if (changes.slug !== undefined) {
    const now = affiliateSettingsOf(current).slug;
    if (changes.slug !== now) {
      checkAccountSlug(changes.slug);
      assign('slug', changes.slug);
      slugAt = items.length;
      items.push(...accountSlugItems(accountId, changes.slug, now));
      // The account's slug is what was read: a concurrent change makes this one retry-free 409-like stale; refuse it as in use.
      names['#slug'] = 'slug';
      values[':was'] = now ?? '';
    }
  }
  if (set.length > 0 || remove.length > 0) {
    const guard = slugAt >= 0 ? ' AND (attribute_not_exists(#slug) OR #slug = :was)' : '';
    items.unshift({
      Update: {
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression: [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : ''].join(' ').trim(),
        ConditionExpression: `attribute_exists(pk)${guard}`,
        ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
        ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
      },
    });
    try {
      await transact(items);
    } catch (err) {
      if (err instanceof ConditionsFailedError) {
        if (slugAt >= 0 && changes.slug !== undefined && (err.failed(slugAt + 1) || err.failed(slugAt + 2) || err.failed(0)))
          throw slugInUse(changes.slug);
        throw new NotFoundError();
      }
      throw err;
    }
  }
  if (changes.js_referrals !== undefined) await setJsReferralMode(accountId, changes.js_referrals);
}
