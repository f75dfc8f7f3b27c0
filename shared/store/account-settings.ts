// The account's settings as the dashboard shows and edits them (GET/PATCH /v1/account/): name, plan,
// publishable key, email sender, embed origins, js referral mode and the provider connection's public part.
// One BatchGet reads the account and the provider's public settings item; no secret item is ever read here.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { NotFoundError } from '../domain/errors';
import { campaignLimit, isPlan, type Plan } from '../domain/plans';
import type { Mailbox } from '../email/sender';
import { ensurePublishableKey, isJsReferralMode, setJsReferralMode, type JsReferralMode } from './accounts';
import { db, tableName } from './client';
import { senderOf } from './emails';
import { batchGet, lookup } from './ops';
import { keys } from './table';
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

export async function accountSettings(accountId: string, baseUrl: string): Promise<AccountSettings> {
  const found = await batchGet([keys.account(accountId), keys.providerSettings(accountId)]);
  let account = lookup(found, keys.account(accountId));
  const plan = account?.plan;
  if (!account || !isPlan(plan)) throw new NotFoundError();
  if (typeof account.publishable_key !== 'string') {
    // An account from before publishable keys gets one on first sight (as `account show` does).
    const ensured = await ensurePublishableKey(accountId);
    account = { ...account, publishable_key: ensured.publishableKey };
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
  },
): Promise<void> {
  const set: string[] = [];
  const remove: string[] = [];
  const values: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  if (changes.name !== undefined) {
    set.push('#name = :name');
    names['#name'] = 'name';
    values[':name'] = changes.name;
  }
  if (changes.email_sender !== undefined) {
    if (changes.email_sender === null) remove.push('email_from', 'email_from_name');
    else {
      set.push('email_from = :from', 'email_from_name = :fromName');
      values[':from'] = changes.email_sender.address;
      values[':fromName'] = changes.email_sender.name;
    }
  }
  if (changes.referral_url !== undefined) {
    if (changes.referral_url === null) remove.push('referral_url');
    else {
      set.push('referral_url = :referralUrl');
      values[':referralUrl'] = changes.referral_url;
    }
  }
  if (changes.embed_origins !== undefined) {
    set.push('embed_origins = :origins');
    values[':origins'] = changes.embed_origins;
  }
  if (set.length > 0 || remove.length > 0) {
    try {
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.account(accountId),
          UpdateExpression: [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : '']
            .join(' ')
            .trim(),
          ConditionExpression: 'attribute_exists(pk)',
          ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) throw new NotFoundError();
      throw err;
    }
  }
  if (changes.js_referrals !== undefined) await setJsReferralMode(accountId, changes.js_referrals);
}
