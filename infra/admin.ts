// Operator CLI (`npm run --silent admin -- <command>`): accounts and API keys, on DynamoDB Local or in AWS.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { resetConfig } from '../shared/config';
import { isPlan, PLANS } from '../shared/domain/plans';
import {
  createAccount,
  createApiKey,
  ensurePublishableKey,
  isJsReferralMode,
  JS_REFERRAL_MODES,
  revokeApiKey,
  setJsReferralMode,
  UnknownAccountError,
  UnknownApiKeyError,
} from '../shared/store/accounts';
import { isLocalEndpoint, rawClient, resetClients, tableName } from '../shared/store/client';
import { ensureTable } from '../shared/store/create-table';
import { isAccountId } from '../shared/domain/ids';
import { memberIdByEmail, setAccountSender, suppressMemberEmail } from '../shared/store/emails';
import { ProviderSwitchRefusedError, saveProviderConnection, UnknownProviderAccountError } from '../shared/store/provider';
import type { ProviderDefinition } from '../shared/billing/definition';
import { PROVIDER_DEFINITIONS, type ProviderConnection } from '../shared/billing/registry';
import { commandUsage, formatHelp } from './cli-help';
import { join } from 'node:path';
import { handOverLoginLink } from '../shared/email/login-links';
import { addTeamMember } from '../shared/store/team';
import { writeFileSync } from 'node:fs';
import { QUEUE_NAMES, type QueueName } from '../shared/queue/queues';
import { providerView } from '../shared/store/account-settings';
import type { PayoutRailDefinition } from '../shared/rails/definition';
import { RAIL_DEFINITIONS } from '../shared/rails/registry';
import { GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { RAIL_CLI_COMMANDS, railConnectionOf, verifyRailConnection } from '../shared/rails/connect';
import { railPublicView } from '../shared/rails/options';
import { railConnections, saveRailConnection, UnknownRailAccountError } from '../shared/store/rail-connections';
import { batchGet, lookup } from '../shared/store/ops';
import { senderOf } from '../shared/store/emails';
import { db } from '../shared/store/client';
import { ensureSecretsKey } from '../shared/secrets/fingerprint';
import { localUrl } from './local/runtime-file';
import { SecretsConfigError, SecretsKeyMismatchError } from '../shared/secrets';
import { cliSqs, cliSqsEndpoint, listAccounts, queuePairs, queueStatus, redrive } from './ops';
import { isCurrencyCode } from '../shared/domain/currency';
import { DetailError, NotFoundError, ValidationError } from '../shared/domain/errors';
import { affiliateSettingsOf, joinPageUrl } from '../shared/domain/affiliates';
import { validate } from '../shared/schemas/fields';
import { updateAccountBody } from '../shared/schemas/team';
import { updateCampaignBody } from '../shared/schemas/campaign';
import { updateAccountSettings } from '../shared/store/account-settings';
import { updateCampaign } from '../shared/store/campaigns';
import { getItem } from '../shared/store/ops';
import { portalUrl } from '../shared/domain/portal';
import { createPortalLink } from '../shared/store/portal';
import { createMemberLink, deleteMemberLink, listMemberLinks } from '../shared/flows/links';
import { createLinkBody } from '../shared/schemas/links';
import { MAX_NAMED_LINKS } from '../shared/domain/links';
import { formatCents } from '../shared/domain/money';
import { batchFile, createBatch, isBatchId, markBatchPaid } from '../shared/flows/payouts';
import { requestReconcile } from '../shared/flows/rail-reconcile';
import { batchView } from '../shared/domain/payout-views';
import type { RailKind } from '../shared/rails/definition';
import { QUEUES } from '../shared/queue/queues';
import { resetQueueClient } from '../shared/queue/publish';
import { listPayouts, payoutSummary } from '../shared/store/money-lists';
import { keys } from '../shared/store/table';
import { APPLICATION_STATUSES, type ApplicationStatus, applicationView } from '../shared/domain/applications';
import { approveApplication, rejectApplication } from '../shared/flows/applications';
import { listApplications } from '../shared/store/applications';
import { FRAUD_ACTIONS, FRAUD_FLAG_STATUSES, FRAUD_RULES, type FraudFlagStatus, type FraudRule, isFraudRule } from '../shared/domain/fraud';
import { ledgerRewardView } from '../shared/domain/views';
import { resolveFraudFlag } from '../shared/flows/fraud-flags';
import { releaseReward } from '../shared/flows/fraud-holds';
import { fraudRulesBody, resolveFraudFlagBody } from '../shared/schemas/fraud';
import { fraudFlagView, listFraudFlags } from '../shared/store/fraud-flags';
import { loadFraudSettings, saveFraudSettings } from '../shared/store/fraud-settings';

const RAIL_KINDS: readonly RailKind[] = RAIL_DEFINITIONS.map((d) => d.kind);

/** The account must exist (an unknown id is an operational error, like the other commands'). */
async function requireAccount(accountId: string): Promise<void> {
  if (!isAccountId(accountId) || !(await getItem(keys.account(accountId)))) throw new UnknownAccountError(accountId);
}

const ADDRESS = /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/;
/** `npm start`'s DynamoDB Local: DYNAMODB_PORT, else the running service's (DATA_DIR/runtime.json), else port 8000. */
const defaultEndpoint = () => localUrl('DYNAMODB_PORT', (f) => f.dynamodb_endpoint, 8000);
const HTTP_URL = /^https?:\/\/[^/\s]+/;

/** Bad arguments: exit code 2. */
class UsageError extends Error {}

/**
 * The API's public base URL for `account show`: `--api-url`, else `API_URL`, else `PUBLIC_BASE_URL` (what
 * the service itself uses for absolute links), else, on DynamoDB Local, the gateway `npm start` runs
 * (`PORT`, 3000). In AWS there is no default: the CLI cannot know the API's URL (the `ApiUrl` output of
 * the RefloopApi stack, or a custom domain), so it asks for one.
 */
function apiUrlFor(flag: string | undefined): string {
  const given = flag ?? (process.env.API_URL || process.env.PUBLIC_BASE_URL || undefined);
  if (given !== undefined) {
    if (!HTTP_URL.test(given)) throw new UsageError(`the API URL must be an http(s) URL, got "${given}"`);
    return given.replace(/\/+$/, '');
  }
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (endpoint && isLocalEndpoint(endpoint)) return localUrl('PORT', (f) => f.api_url, 3000);
  throw new UsageError('this command needs the API URL in AWS: pass --api-url <url> (the RefloopApi stack output ApiUrl) or set API_URL');
}

/**
 * Adds the first owner and hands over their first login link: printed (the operator passes it on, or the
 * owner asks for a new one at /app/login), and on a laptop also written to the outbox like every email.
 */
async function ownerLogin(accountId: string, accountName: string, email: string, apiUrl: string): Promise<Record<string, unknown>> {
  const owner = await addTeamMember(accountId, email, 'owner');
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  const outboxDir =
    process.env.EMAIL_OUTBOX_DIR || (endpoint && isLocalEndpoint(endpoint) ? join(process.env.DATA_DIR || '.data', 'outbox') : undefined);
  const link = await handOverLoginLink({
    accountId,
    operatorId: owner.id,
    accountName,
    to: owner.email,
    baseUrl: apiUrl,
    ...(outboxDir ? { outboxDir } : {}),
  });
  return {
    owner_email: owner.email,
    login_url: link.url,
    login_url_expires_at: link.expiresAt,
    ...(link.file ? { login_email: link.file } : {}),
  };
}

type Values = Record<string, string>;

interface Command {
  /** The flags as the help shows them. */
  args: string;
  /** One short line for the help. */
  summary: string;
  flags: string[];
  required: string[];
  check?(values: Values): void;
  /**
   * Words after the command that are not flags, as the help shows them (`fraud release <flag id>`): each
   * becomes the flag named here, in order; `rest` takes the words left over, joined by spaces.
   */
  positionals?: { names: string[]; rest?: string };
  run(values: Values): Promise<Record<string, unknown>>;
}

/**
 * A provider's connect command, from its definition's CLI spec: the flags checked first (exit 2, nothing
 * read or written), the connection built (a file it names read and parsed before anything is written),
 * then saved. Secrets are never echoed back.
 */
function connectCommand(definition: ProviderDefinition<ProviderConnection>): Command {
  const spec = definition.cli;
  return {
    args: `--account <account_id> ${spec.args}`,
    summary: spec.summary,
    flags: ['account', ...spec.flags],
    required: ['account', ...spec.required],
    check(values) {
      const problem = spec.check(values);
      if (problem !== null) throw new UsageError(problem);
    },
    async run(values) {
      const built = spec.connection(values, (path) => readFileSync(path, 'utf8'));
      if (!built.ok) throw new UsageError(built.message);
      const accountId = values.account as string;
      if (!isAccountId(accountId)) throw new UnknownProviderAccountError(accountId);
      await ensureSecretsKey();
      await saveProviderConnection(accountId, built.connection);
      return {
        account_id: accountId,
        ...spec.output(built.connection),
        webhook_path: `/webhooks/${definition.webhook.path}/${accountId}/`,
      };
    },
  };
}

/** The CLI flag of a rail's form field: `client_secret` -> `client-secret`; a multi-line value (a PEM key) is read from `--<flag>-file`. */
const railFlag = (field: PayoutRailDefinition['fields'][number]): string =>
  `${field.name.replace(/_/g, '-')}${field.type === 'textarea' ? '-file' : ''}`;

/**
 * A payout rail's connect command (docs/payouts.md "Connecting a rail"): the fields of its definition as
 * flags, `--api-url` (the rail's API, its production API by default; the operator may name an emulator), the
 * credentials checked at the rail before anything is written, then saved like the dashboard's PUT. Secrets
 * are never echoed back.
 */
function railCommand(definition: PayoutRailDefinition): Command {
  const flags = definition.fields.map(railFlag);
  const required = definition.fields.filter((f) => f.required).map(railFlag);
  return {
    args: `--account <account_id> [--api-url <url>] ${definition.fields.map((f) => `--${railFlag(f)} <${f.type === 'textarea' ? 'path' : 'value'}>`).join(' ')}`,
    summary: `Connect ${definition.name} as a payout rail (the credentials are checked at the rail first); prints the webhook path to register.`,
    flags: ['account', 'api-url', ...flags],
    required: ['account', ...required],
    check(values) {
      const url = values['api-url'];
      if (url !== undefined && !HTTP_URL.test(url)) throw new UsageError(`--api-url must be an http(s) URL, got "${url}"`);
    },
    async run(values) {
      const body: Record<string, unknown> = { api_url: values['api-url']?.replace(/\/+$/, '') };
      for (const field of definition.fields) {
        const value = values[railFlag(field)];
        if (value !== undefined) body[field.name] = field.type === 'textarea' ? readFileSync(value, 'utf8').trim() : value;
      }
      const accountId = values.account as string;
      if (!isAccountId(accountId)) throw new UnknownRailAccountError(accountId);
      try {
        const connection = railConnectionOf(definition, body, true);
        await verifyRailConnection(definition, connection);
        await ensureSecretsKey();
        const saved = await saveRailConnection(accountId, definition.kind, connection);
        return { account_id: accountId, ...railPublicView(saved, accountId) };
      } catch (err) {
        if (err instanceof ValidationError)
          throw new Error(
            Object.entries(err.fields)
              .map(
                ([name, messages]) =>
                  `${name === 'api_url' ? '--api-url' : `--${railFlag(definition.fields.find((f) => f.name === name) ?? ({ name, type: 'text' } as never))}`}: ${messages.join(' ')}`,
              )
              .join('; '),
          );
        throw err;
      }
    },
  };
}

const commands: Record<string, Command> = {
  'account create': {
    args: '--name <name> [--plan starter|small|regular|unlimited] [--owner-email <email> [--api-url <url>]]',
    summary:
      'Create an account (plan defaults to regular); prints its id and first secret API key, and with --owner-email a login link for its first owner.',
    flags: ['name', 'plan', 'owner-email', 'api-url'],
    required: ['name'],
    check({ plan, 'owner-email': owner, 'api-url': url }) {
      if (plan !== undefined && !isPlan(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}, got "${plan}"`);
      if (owner !== undefined && !ADDRESS.test(owner)) throw new UsageError(`--owner-email must be an email address, got "${owner}"`);
      if (url !== undefined && !HTTP_URL.test(url)) throw new UsageError(`--api-url must be an http(s) URL, got "${url}"`);
    },
    async run({ name, plan = 'regular', 'owner-email': owner, 'api-url': url }) {
      if (!isPlan(plan)) throw new UsageError(`bad plan "${plan}"`);
      // Resolved before anything is written: the login link needs the dashboard's URL.
      const apiUrl = owner !== undefined ? apiUrlFor(url) : undefined;
      const { account, apiKey } = await createAccount({ name: name as string, plan });
      if (owner === undefined || apiUrl === undefined) return { account_id: account.accountId, api_key: apiKey };
      return { account_id: account.accountId, api_key: apiKey, ...(await ownerLogin(account.accountId, account.name, owner, apiUrl)) };
    },
  },
  // One `account set-<provider>` per provider, from its definition (shared/billing/registry.ts).
  ...Object.fromEntries(PROVIDER_DEFINITIONS.map((d) => [`account ${d.cli.command}`, connectCommand(d)])),
  // One per payout rail (shared/rails/registry.ts).
  ...Object.fromEntries(RAIL_DEFINITIONS.map((d) => [`account ${RAIL_CLI_COMMANDS[d.kind]}`, railCommand(d)])),
  'account show': {
    args: '--account <account_id> [--api-url <url>]',
    summary: "Print the account's name, plan, publishable key, browser script tag, provider connection, payout rails and email sender.",
    flags: ['account', 'api-url'],
    required: ['account'],
    check(values) {
      const url = values['api-url'];
      if (url !== undefined && !HTTP_URL.test(url)) throw new UsageError(`--api-url must be an http(s) URL, got "${url}"`);
    },
    async run(values) {
      // Resolved before anything is written: without a URL in AWS nothing changes.
      const apiUrl = apiUrlFor(values['api-url']);
      // An account created before publishable keys existed gets one here.
      const a = await ensurePublishableKey(values.account as string);
      const found = await batchGet([keys.account(a.accountId), keys.providerSettings(a.accountId)]);
      const sender = senderOf(lookup(found, keys.account(a.accountId)));
      return {
        account_id: a.accountId,
        name: a.name,
        plan: a.plan,
        created_at: a.createdAt,
        publishable_key: a.publishableKey,
        api_url: apiUrl,
        script_tag: `<script src="${apiUrl}/js/refloop.js" data-key="${a.publishableKey}" async></script>`,
        // The provider connection's public part (never a secret) and who member emails are sent from.
        provider: providerView(a.accountId, lookup(found, keys.providerSettings(a.accountId)), apiUrl),
        // The connected payout rails' public parts (never a secret).
        payout_rails: (await railConnections(a.accountId)).map((c) => railPublicView(c, a.accountId)),
        email: sender ? { sender, service_default: false } : { sender: null, service_default: true },
      };
    },
  },
  'account set-email': {
    args: '--account <account_id> --from <address> --name <sender name>',
    summary: "Set the sender of the account's member emails.",
    flags: ['account', 'from', 'name'],
    required: ['account', 'from', 'name'],
    check(values) {
      if (!ADDRESS.test(values.from ?? '')) throw new UsageError(`--from must be an email address, got "${values.from}"`);
      if ((values.name ?? '').length > 100 || /[\r\n]/.test(values.name ?? ''))
        throw new UsageError('--name must be one line of at most 100 characters');
    },
    async run(values) {
      const accountId = values.account as string;
      // In AWS the address must belong to the SES identity the stack was deployed with (emailIdentity).
      if (
        !isAccountId(accountId) ||
        !(await setAccountSender(accountId, { address: values.from as string, name: values.name as string }))
      ) {
        throw new UnknownAccountError(accountId);
      }
      return { account_id: accountId, email_from: values.from, email_from_name: values.name };
    },
  },
  // Locally there is no SES: this records what a hard bounce (or a complaint) event would.
  'member bounce': {
    args: '--account <account_id> --email <address> [--reason bounce|complaint]',
    summary: "Record a bounce or complaint for a member's email (the local stand-in for an SES event).",
    flags: ['account', 'email', 'reason'],
    required: ['account', 'email'],
    check(values) {
      if (values.reason !== undefined && values.reason !== 'bounce' && values.reason !== 'complaint') {
        throw new UsageError(`--reason must be bounce or complaint, got "${values.reason}"`);
      }
    },
    async run(values) {
      const accountId = values.account as string;
      const address = values.email as string;
      const memberId = isAccountId(accountId) ? await memberIdByEmail(accountId, address) : null;
      if (!memberId) throw new Error(`no member of account ${accountId} has the email ${address}`);
      const reason = values.reason === 'complaint' ? 'complaint' : 'bounce';
      await suppressMemberEmail(accountId, memberId, address, reason);
      return { account_id: accountId, member_id: memberId, email_suppressed: address.toLowerCase(), reason };
    },
  },
  // What the publishable key may do with /js/v1/referrals/ (shared/store/accounts.ts JsReferralMode).
  'account set-js-referrals': {
    args: '--account <account_id> --mode open|confirm|off',
    summary: 'Choose what the publishable key may do with /js/v1/referrals/ (create, answer only, or refuse).',
    flags: ['account', 'mode'],
    required: ['account', 'mode'],
    check({ mode }) {
      if (!isJsReferralMode(mode)) throw new UsageError(`--mode must be one of ${JS_REFERRAL_MODES.join(', ')}, got "${mode}"`);
    },
    async run({ account, mode }) {
      if (!isJsReferralMode(mode)) throw new UsageError(`bad mode "${mode}"`);
      const updated = await setJsReferralMode(account as string, mode);
      return { account_id: updated.accountId, js_referrals: updated.jsReferrals };
    },
  },
  // Affiliate programmes (docs/affiliates.md): the same settings as PATCH /v1/account/ and /v1/campaigns/{id}/.
  'account set-programme': {
    args: '--account <account_id> [--slug <slug>] [--attribution first_click|last_click] [--attribution-days <1..365>] [--tax-details on|off]',
    summary: "Set the account's public slug, its attribution model and window, and whether affiliates give tax details.",
    flags: ['account', 'slug', 'attribution', 'attribution-days', 'tax-details'],
    required: ['account'],
    check(values) {
      const tax = values['tax-details'];
      if (tax !== undefined && tax !== 'on' && tax !== 'off') throw new UsageError(`--tax-details must be on or off, got "${tax}"`);
    },
    async run(values) {
      const accountId = values.account as string;
      await requireAccount(accountId);
      const body = validate(updateAccountBody, {
        ...(values.slug !== undefined ? { slug: values.slug } : {}),
        ...(values.attribution !== undefined ? { attribution_model: values.attribution } : {}),
        ...(values['attribution-days'] !== undefined ? { attribution_days: values['attribution-days'] } : {}),
        ...(values['tax-details'] !== undefined ? { tax_details_required: values['tax-details'] === 'on' } : {}),
      });
      await updateAccountSettings(accountId, body);
      const a = affiliateSettingsOf(await getItem(keys.account(accountId)));
      return {
        account_id: accountId,
        slug: a.slug,
        attribution_model: a.attribution_model,
        attribution_days: a.attribution_days,
        tax_details_required: a.tax_details_required,
      };
    },
  },
  'campaign set-signup': {
    args: '--account <account_id> --campaign <campaign_id> [--enabled on|off] [--approval auto|manual] [--terms-url <url>] [--slug <slug>]',
    summary: "Open or close a campaign's public sign-up page and set its approval, terms and slug; prints the page's address.",
    flags: ['account', 'campaign', 'enabled', 'approval', 'terms-url', 'slug', 'api-url'],
    required: ['account', 'campaign'],
    check(values) {
      const enabled = values.enabled;
      if (enabled !== undefined && enabled !== 'on' && enabled !== 'off')
        throw new UsageError(`--enabled must be on or off, got "${enabled}"`);
      const url = values['api-url'];
      if (url !== undefined && !HTTP_URL.test(url)) throw new UsageError(`--api-url must be an http(s) URL, got "${url}"`);
    },
    async run(values) {
      const accountId = values.account as string;
      await requireAccount(accountId);
      const signup = {
        ...(values.enabled !== undefined ? { enabled: values.enabled === 'on' } : {}),
        ...(values.approval !== undefined ? { approval: values.approval } : {}),
        ...(values['terms-url'] !== undefined ? { terms_url: values['terms-url'] } : {}),
      };
      const body = validate(updateCampaignBody, {
        ...(Object.keys(signup).length > 0 ? { signup } : {}),
        ...(values.slug !== undefined ? { slug: values.slug } : {}),
      });
      const campaign = await updateCampaign(accountId, values.campaign as string, body);
      const account = affiliateSettingsOf(await getItem(keys.account(accountId)));
      const page = account.slug && campaign.slug ? joinPageUrl(apiUrlFor(values['api-url']), account.slug, campaign.slug) : null;
      return { account_id: accountId, campaign_id: campaign.id, slug: campaign.slug, signup: campaign.signup, join_url: page };
    },
  },
  // Paying members (docs/design/money.md "Payouts"): the same flows as the API's /v1/payouts/ and /v1/payout-batches/.
  'payouts due': {
    args: '--account <account_id> [--currency <ISO 4217>]',
    summary: 'What is owed: the totals per currency and the due payouts (oldest first, up to 100).',
    flags: ['account', 'currency'],
    required: ['account'],
    check({ currency }) {
      if (currency !== undefined && !isCurrencyCode(currency))
        throw new UsageError(`--currency must be an ISO 4217 code, got "${currency}"`);
    },
    async run({ account, currency }) {
      await requireAccount(account as string);
      const summary = await payoutSummary(account as string);
      const page = await listPayouts(account as string, { pageSize: 100 }, { status: 'due', currency: currency?.toUpperCase() });
      const money = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).map(([c, n]) => [c, formatCents(n)]));
      return {
        account_id: account,
        due: money(summary.due),
        open: money(summary.open),
        processing: money(summary.processing),
        payouts: page.items.map((p) => ({
          id: p.id,
          member_id: p.member_id,
          amount: formatCents(p.amount),
          currency: p.currency,
          reward_count: p.reward_ids.length,
        })),
        due_count: page.count,
      };
    },
  },
  'payouts export': {
    args: '--account <account_id> --format paypal|wise|csv --currency <ISO 4217> [--out <path>]',
    summary: "Batch every due payout in one currency (up to the format's row limit) and write its file; they become processing.",
    flags: ['account', 'format', 'currency', 'out'],
    required: ['account', 'format', 'currency'],
    check({ format, currency }) {
      if (!['paypal', 'wise', 'csv'].includes(format as string))
        throw new UsageError(`--format must be one of paypal, wise, csv, got "${format}"`);
      if (!isCurrencyCode(currency as string)) throw new UsageError(`--currency must be an ISO 4217 code, got "${currency}"`);
    },
    async run({ account, format, currency, out }) {
      await requireAccount(account as string);
      const batch = await createBatch(account as string, {
        format: format as 'paypal' | 'wise' | 'csv',
        currency: (currency as string).toUpperCase(),
      });
      const { csv } = await batchFile(account as string, batch.id);
      const path = out ?? `${format}-${batch.currency}-${batch.id}.csv`;
      writeFileSync(path, csv);
      return {
        account_id: account,
        batch_id: batch.id,
        format,
        currency: batch.currency,
        payouts: batch.payout_ids.length,
        amount: formatCents(batch.amount),
        file: path,
      };
    },
  },
  'payouts mark-paid': {
    args: '--account <account_id> --batch <pb_…> [--reference <text>]',
    summary: 'The batch was paid: its payouts (those not marked failed) and their rewards become paid.',
    flags: ['account', 'batch', 'reference'],
    required: ['account', 'batch'],
    check({ batch }) {
      if (!isBatchId(batch as string)) throw new UsageError(`--batch must be a batch id (pb_ and 32 hex characters), got "${batch}"`);
    },
    async run({ account, batch, reference }) {
      await requireAccount(account as string);
      const paid = await markBatchPaid(account as string, batch as string, { reference: reference ?? null });
      return {
        account_id: account,
        batch_id: paid.id,
        status: paid.status,
        payouts: paid.payout_ids.length,
        amount: formatCents(paid.amount),
      };
    },
  },
  // Paying through a rail (docs/payouts.md "Paying through a rail", "Reconciliation"): the API's
  // POST /v1/payout-batches/ {rail} and /reconcile/; the payout-rails worker does the rail's part.
  'payouts send': {
    args: '--account <account_id> --rail paypal|stripe|wise --currency <ISO 4217>',
    summary:
      "Batch the due payouts in one currency whose member's payout method is the rail and ready; the worker sends it (prints the batch).",
    flags: ['account', 'rail', 'currency'],
    required: ['account', 'rail', 'currency'],
    check({ rail, currency }) {
      if (!RAIL_KINDS.includes(rail as RailKind)) throw new UsageError(`--rail must be one of ${RAIL_KINDS.join(', ')}, got "${rail}"`);
      if (!isCurrencyCode(currency as string)) throw new UsageError(`--currency must be an ISO 4217 code, got "${currency}"`);
    },
    async run({ account, rail, currency }) {
      await requireAccount(account as string);
      const batch = await withRailQueue(() =>
        createBatch(account as string, { rail: rail as RailKind, currency: (currency as string).toUpperCase() }),
      );
      return batchView(batch, '');
    },
  },
  'payouts reconcile': {
    args: '--account <account_id> --batch <pb_…>',
    summary: 'Read a rail batch back from its rail now (queued for the payout-rails worker); a file batch or a settled one: refused.',
    flags: ['account', 'batch'],
    required: ['account', 'batch'],
    check({ batch }) {
      if (!isBatchId(batch as string)) throw new UsageError(`--batch must be a batch id (pb_ and 32 hex characters), got "${batch}"`);
    },
    async run({ account, batch }) {
      await requireAccount(account as string);
      const queued = await withRailQueue(() => requestReconcile(account as string, batch as string));
      return { account_id: account, ...queued };
    },
  },
  'account list': {
    args: '',
    summary: 'List every account (id, name, plan, created), oldest first. A Scan: operator tooling, not a request path.',
    flags: [],
    required: [],
    async run() {
      const accounts = await listAccounts(db(), tableName());
      return { count: accounts.length, accounts };
    },
  },
  'queues status': {
    args: '[--stack <api stack name>]',
    summary: "Every queue's depth (waiting, in flight) and its dead-letter queue's depth.",
    flags: ['stack'],
    required: [],
    async run({ stack = 'RefloopApi' }) {
      return withSqs(async (sqs, local) => {
        const queues = await queueStatus(sqs, await queuePairs(sqs, local, stack));
        return { queues, dead_letters: queues.reduce((a, q) => a + q.dlq_messages, 0) };
      });
    },
  },
  'queues redrive': {
    args: `<${QUEUE_NAMES.join('|')}> [--max <n>] [--stack <name>]`,
    summary: "Move a queue's dead letters back to it (safe: every consumer is idempotent).",
    flags: ['queue', 'max', 'stack'],
    required: ['queue'],
    check({ queue, max }) {
      if (!(QUEUE_NAMES as readonly string[]).includes(queue as string))
        throw new UsageError(`unknown queue "${queue}"; one of ${QUEUE_NAMES.join(', ')}`);
      if (max !== undefined && !/^[1-9]\d{0,6}$/.test(max)) throw new UsageError(`--max must be a positive integer, got "${max}"`);
    },
    async run({ queue, max, stack = 'RefloopApi' }) {
      return withSqs(async (sqs, local) => {
        const pair = (await queuePairs(sqs, local, stack)).find((p) => p.queue === (queue as QueueName));
        if (!pair) throw new UsageError(`unknown queue "${queue}"`);
        const moved = await redrive(sqs, pair, max === undefined ? undefined : Number(max));
        return { queue, moved };
      });
    },
  },
  'members portal-link': {
    args: '--account <account_id> --member <member_id> [--api-url <url>]',
    summary: 'A single-use member portal URL for support (10 minutes to open, then a 60-minute session of that member only).',
    flags: ['account', 'member', 'api-url'],
    required: ['account', 'member'],
    check({ 'api-url': url }) {
      if (url !== undefined && !HTTP_URL.test(url)) throw new UsageError(`--api-url must be an http(s) URL, got "${url}"`);
    },
    async run({ account, member, 'api-url': url }) {
      const apiUrl = apiUrlFor(url);
      await requireAccount(account as string);
      let link: Awaited<ReturnType<typeof createPortalLink>>;
      try {
        link = await createPortalLink(account as string, member as string, null);
      } catch (err) {
        if (err instanceof NotFoundError) throw new DetailError(404, `account ${account} has no member ${member}`);
        throw err;
      }
      return { portal_session_id: link.id, url: portalUrl(apiUrl, account as string, link.token), expires_at: link.expiresAt };
    },
  },
  // A member's named links with sub-ids (docs/attribution.md): the same flow as /v1/members/{id}/links/.
  'members links': {
    args: '--account <account_id> --member <member_id> [--add <slug or *>] [--path </page>] [--remove <slug>]',
    summary: "List a member's named links; --add creates one (`*` for a generated slug; --path a page of the site), --remove deletes one.",
    flags: ['account', 'member', 'add', 'path', 'remove'],
    required: ['account', 'member'],
    check({ add, path, remove }) {
      if (add !== undefined && remove !== undefined) throw new UsageError('give --add or --remove, not both');
      if (path !== undefined && add === undefined) throw new UsageError('--path goes with --add');
    },
    async run({ account, member, add, path, remove }) {
      await requireAccount(account as string);
      const accountId = account as string;
      const memberId = member as string;
      try {
        if (remove !== undefined) {
          await deleteMemberLink(accountId, memberId, remove as string);
          return { removed: remove };
        }
        if (add !== undefined) {
          const body = validate(createLinkBody, { slug: add === '*' ? null : add, destination_path: path ?? null });
          return await createMemberLink(accountId, memberId, body);
        }
        const page = await listMemberLinks(accountId, memberId, { pageSize: MAX_NAMED_LINKS });
        return { count: page.count, results: page.results };
      } catch (err) {
        if (err instanceof NotFoundError)
          throw new DetailError(
            404,
            remove !== undefined ? `member ${memberId} has no link ${remove}` : `account ${accountId} has no member ${memberId}`,
          );
        throw err;
      }
    },
  },
  // Applications to an affiliate programme (docs/affiliates.md "Applications"): the same flows as /v1/applications/.
  'applications list': {
    args: '--account <account_id> [--status pending|approved|rejected] [--campaign <campaign_id>]',
    summary: 'Applications, newest first (up to 100), with the exact count of the filter.',
    flags: ['account', 'status', 'campaign'],
    required: ['account'],
    check({ status }) {
      if (status !== undefined && !(APPLICATION_STATUSES as readonly string[]).includes(status))
        throw new UsageError(`--status must be one of ${APPLICATION_STATUSES.join(', ')}, got "${status}"`);
    },
    async run({ account, status, campaign }) {
      await requireAccount(account as string);
      const page = await listApplications(
        account as string,
        { pageSize: 100 },
        { status: status as ApplicationStatus | undefined, campaign },
      );
      return { account_id: account, count: page.count, results: page.items.map(applicationView) };
    },
  },
  'applications approve': {
    args: '--account <account_id> --application <app_…>',
    summary: 'Approve a pending application: its member is created and emailed a login link (an approved one stays as it is).',
    flags: ['account', 'application'],
    required: ['account', 'application'],
    async run({ account, application }) {
      await requireAccount(account as string);
      try {
        return applicationView(await approveApplication(account as string, application as string));
      } catch (err) {
        if (err instanceof NotFoundError) throw new DetailError(404, `account ${account} has no application ${application}`);
        throw err;
      }
    },
  },
  'applications reject': {
    args: '--account <account_id> --application <app_…> [--reason <text>]',
    summary: 'Reject a pending application (the reason stays internal; the applicant gets a neutral email).',
    flags: ['account', 'application', 'reason'],
    required: ['account', 'application'],
    async run({ account, application, reason }) {
      await requireAccount(account as string);
      try {
        return applicationView(await rejectApplication(account as string, application as string, reason?.trim().slice(0, 500) ?? null));
      } catch (err) {
        if (err instanceof NotFoundError) throw new DetailError(404, `account ${account} has no application ${application}`);
        throw err;
      }
    },
  },
  // Fraud rules and the review queue (docs/fraud.md): the same flows as /v1/fraud-rules/ and /v1/fraud-flags/.
  'fraud rules': {
    args: '--account <account_id> [set <rule> <action> [<threshold>=<value>...]]',
    summary: "The account's fraud rules (each rule's action and thresholds); `set` changes one rule, the others stay as they are.",
    flags: ['account', 'op', 'rule', 'action', 'thresholds'],
    required: ['account'],
    positionals: { names: ['op', 'rule', 'action'], rest: 'thresholds' },
    check({ op, rule, action }) {
      if (op === undefined) return;
      if (op !== 'set')
        throw new UsageError(
          `unknown word "${op.slice(0, 40)}": \`fraud rules\` shows the rules, \`fraud rules set <rule> <action>\` changes one`,
        );
      if (!rule || !isFraudRule(rule))
        throw new UsageError(`the rule must be one of ${FRAUD_RULES.join(', ')}, got "${String(rule).slice(0, 40)}"`);
      if (!action || !(FRAUD_ACTIONS as readonly string[]).includes(action))
        throw new UsageError(`the action must be one of ${FRAUD_ACTIONS.join(', ')}, got "${String(action).slice(0, 40)}"`);
    },
    async run({ account, op, rule, action, thresholds }) {
      await requireAccount(account as string);
      if (op !== 'set') return { account_id: account, rules: await loadFraudSettings(account as string) };
      const setting: Record<string, unknown> = { action };
      for (const pair of (thresholds ?? '').split(/\s+/).filter(Boolean)) {
        const [name, value, extra] = pair.split('=');
        if (!name || value === undefined || extra !== undefined || !/^-?\d+$/.test(value))
          throw new UsageError(`a threshold is <name>=<whole number>, got "${pair.slice(0, 40)}"`);
        setting[name] = Number(value);
      }
      const patch = validate(fraudRulesBody, { [rule as string]: setting });
      return { account_id: account, rules: await saveFraudSettings(account as string, patch) };
    },
  },
  'fraud flags': {
    args: '--account <account_id> [--status open|released|voided|reviewed] [--rule <rule>] [--member <member_id>]',
    summary: 'The review queue: what the fraud rules flagged or held, newest first (up to 100), with the exact count of the filter.',
    flags: ['account', 'status', 'rule', 'member'],
    required: ['account'],
    check({ status, rule }) {
      if (status !== undefined && !(FRAUD_FLAG_STATUSES as readonly string[]).includes(status))
        throw new UsageError(`--status must be one of ${FRAUD_FLAG_STATUSES.join(', ')}, got "${status}"`);
      if (rule !== undefined && !isFraudRule(rule)) throw new UsageError(`--rule must be one of ${FRAUD_RULES.join(', ')}, got "${rule}"`);
    },
    async run({ account, status, rule, member }) {
      await requireAccount(account as string);
      const page = await listFraudFlags(
        account as string,
        { pageSize: 100 },
        { status: status as FraudFlagStatus | undefined, rule: rule as FraudRule | undefined, member },
      );
      return { account_id: account, count: page.count, results: page.items.map(fraudFlagView) };
    },
  },
  ...Object.fromEntries(
    (
      [
        [
          'release',
          'released',
          'Release a flag: the rewards it still holds are released (pending until their hold ends, approved once it has passed).',
        ],
        ['void', 'voided', 'Void what a flag holds: the rewards it still holds are voided (reason fraud).'],
        ['review', 'reviewed', 'Mark a flag reviewed (409 while it still holds rewards: release or void it).'],
      ] as const
    ).map(([verb, status, summary]): [string, Command] => [
      `fraud ${verb}`,
      {
        args: '--account <account_id> <flag id (ff_…)> [--note <text>]',
        summary,
        flags: ['account', 'flag', 'note'],
        required: ['account', 'flag'],
        positionals: { names: ['flag'] },
        async run({ account, flag, note }) {
          await requireAccount(account as string);
          const body = validate(resolveFraudFlagBody, { note: note ?? null });
          try {
            return { ...fraudFlagView(await resolveFraudFlag(account as string, flag as string, status, { note: body.note })) };
          } catch (err) {
            if (err instanceof NotFoundError) throw new DetailError(404, `account ${account} has no fraud flag ${flag}`);
            throw err;
          }
        },
      },
    ]),
  ),
  'rewards release': {
    args: '--account <account_id> <reward id>',
    summary: 'Release a held reward (pending until its hold ends, approved at once when that has passed); 409 when it is not held.',
    flags: ['account', 'reward'],
    required: ['account', 'reward'],
    positionals: { names: ['reward'] },
    async run({ account, reward }) {
      await requireAccount(account as string);
      try {
        return ledgerRewardView(await releaseReward(account as string, reward as string));
      } catch (err) {
        if (err instanceof NotFoundError) throw new DetailError(404, `account ${account} has no reward ${reward}`);
        throw err;
      }
    },
  },
  'key create': {
    args: '--account <account_id>',
    summary: 'Create another secret API key for the account (shown once).',
    flags: ['account'],
    required: ['account'],
    async run({ account }) {
      return { api_key: await createApiKey(account as string) };
    },
  },
  'key revoke': {
    args: '--key <api_key or publishable key>',
    summary: 'Revoke a key; requests with it then answer 401.',
    flags: ['key'],
    required: ['key'],
    async run({ key }) {
      await revokeApiKey(key as string);
      return { revoked: true };
    },
  },
};

const HELP_NOTES = [
  'Run `npm run --silent admin -- <command> --help` for one command.',
  '',
  'environment:',
  '  DYNAMODB_ENDPOINT  DynamoDB Local (default http://127.0.0.1:$DYNAMODB_PORT or 8000, the one `npm start` runs)',
  '  TABLE_NAME         the table (default refloop)',
  '  AWS_REGION         set, with DYNAMODB_ENDPOINT unset: the deployed table in AWS, with your AWS credentials',
  '  API_URL            the API base URL for links (default: the local gateway, http://127.0.0.1:$PORT, else the running',
  "                     `npm start`'s port from DATA_DIR/runtime.json, else 3000; the same for DYNAMODB_PORT and SQS_PORT)",
  "  DATA_DIR           `npm start`'s data directory (default .data): its secrets.key encrypts provider secrets; the CLI",
  '                     refuses to write a secret under another key than the one the table records (SECRETS_KEY_FILE',
  "                     names a key file; in AWS SECRETS_KMS_KEY_ID, the stack's SecretsKeyArn output)",
  '  SQS_ENDPOINT       the local SQS of `queues` commands (default http://127.0.0.1:$SQS_PORT or 9324); in AWS the',
  '                     queues are found by name in the API stack (--stack, default RefloopApi) or from *_QUEUE_URL',
  '',
  'Prints one JSON line on stdout. Exit codes: 0 done (and help); 1 operational error; 2 bad arguments (and no command).',
];

const help = () =>
  formatHelp('admin', 'Refloop operator CLI: accounts, API keys and provider settings, on DynamoDB Local or in AWS.', commands, HELP_NOTES);

/** The command `argv` names (two words), or undefined. */
function commandOf(argv: string[]): { name: string; command: Command } | undefined {
  const name = argv.slice(0, 2).join(' ');
  const command = commands[name];
  return command ? { name, command } : undefined;
}

function parse(argv: string[]): { command: Command; values: Values } {
  const found = commandOf(argv);
  if (!found)
    throw new UsageError(`unknown command "${argv.slice(0, 2).join(' ')}"; \`npm run --silent admin -- help\` lists the commands`);
  const { name, command } = found;
  const usage = `usage: ${commandUsage('admin', name, command)}`;
  // `queues redrive <queue>`: the queue may be given as a word, as the help shows it.
  if (name === 'queues redrive' && argv[2] !== undefined && !argv[2].startsWith('-'))
    argv = [...argv.slice(0, 2), '--queue', argv[2], ...argv.slice(3)];
  if (command.positionals) argv = [...argv.slice(0, 2), ...positionalFlags(argv.slice(2), command.positionals)];
  let values: Values;
  try {
    const options = Object.fromEntries(command.flags.map((f) => [f, { type: 'string' as const }]));
    values = parseArgs({ args: argv.slice(2), options, strict: true, allowPositionals: false }).values as Values;
  } catch (err) {
    // parseArgs messages can span lines; the first one says what is wrong. A stray argument is quoted back
    // as '<redacted>': it may be a secret pasted in the wrong place (an auth code, an API key).
    // (parseArgs's TypeError is read by its message, not by instanceof: under Jest it comes from another realm.)
    const message = (err as { message?: unknown } | null)?.message;
    const first = (typeof message === 'string' ? message : String(err)).split('\n')[0] ?? '';
    throw new UsageError(`${first.replace(/^Unexpected argument '[\s\S]*?'(?=\. )/, "Unexpected argument '<redacted>'")}; ${usage}`);
  }
  for (const flag of command.required) {
    if (values[flag] === undefined) throw new UsageError(`--${flag} is required; ${usage}`);
  }
  for (const [flag, value] of Object.entries(values)) {
    if (value.trim() === '') throw new UsageError(`--${flag} must not be empty`);
  }
  command.check?.(values);
  return { command, values };
}

/** The words of `args` that are neither flags nor their values, as the flags `spec` names. */
function positionalFlags(args: string[], spec: NonNullable<Command['positionals']>): string[] {
  const flags: string[] = [];
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg.startsWith('-')) {
      flags.push(arg);
      if (!arg.includes('=') && i + 1 < args.length) flags.push(args[++i] as string);
    } else words.push(arg);
  }
  const named = spec.names.slice(0, words.length).flatMap((n, i) => [`--${n}`, words[i] as string]);
  const rest = words.slice(spec.names.length);
  if (rest.length > 0) {
    if (!spec.rest) throw new UsageError(`unexpected argument "${(rest[0] as string).slice(0, 40)}"`);
    named.push(`--${spec.rest}`, rest.join(' '));
  }
  return [...named, ...flags];
}

/** A dependency the CLI could not reach: the message names it, its endpoint and the variable that sets it. */
class UnreachableError extends Error {}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN']);

/** A connection failure (no HTTP answer at all), as opposed to an error the service answered. */
function isNetworkError(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number; attempts?: number } } | null;
  if (typeof e !== 'object' || e === null) return false;
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
  if (e.name === 'TimeoutError') return true;
  return e.$metadata?.attempts !== undefined && e.$metadata.httpStatusCode === undefined;
}

/** Runs `fn` with the CLI's SQS client; a connection failure names SQS, its endpoint and SQS_ENDPOINT / SQS_PORT. */
async function withSqs<T>(fn: (sqs: ReturnType<typeof cliSqs>, local: boolean) => Promise<T>): Promise<T> {
  const local = isLocalRun();
  const sqs = cliSqs(local);
  try {
    return await fn(sqs, local);
  } catch (err) {
    if (!isNetworkError(err)) throw err;
    const endpoint = cliSqsEndpoint(local);
    const reason = err instanceof Error ? err.message : String(err);
    throw new UnreachableError(
      endpoint
        ? `cannot reach SQS at ${endpoint} (${reason}); SQS_ENDPOINT (or SQS_PORT, default 9324) sets it: is \`npm start\` running, and on that port?`
        : `cannot reach SQS in AWS (${reason}); check AWS_REGION and your credentials, or set SQS_ENDPOINT`,
    );
  } finally {
    sqs.destroy();
  }
}

/**
 * Runs `fn` with the service's publisher pointed at the payout-rails queue: PAYOUT_RAILS_QUEUE_URL when set
 * (the stack's output), else, on the laptop, npm start's queue by its name.
 */
async function withRailQueue<T>(fn: () => Promise<T>): Promise<T> {
  const variable = QUEUES['payout-rails'].envVar;
  if (!process.env[variable]) {
    await withSqs(async (sqs, local) => {
      if (!local) throw new UsageError(`set ${variable} (the stack's PayoutRails queue URL output) to queue a rail batch from here`);
      process.env[variable] = (await sqs.send(new GetQueueUrlCommand({ QueueName: 'payout-rails' }))).QueueUrl as string;
      const endpoint = cliSqsEndpoint(local);
      if (endpoint && !process.env.SQS_ENDPOINT) process.env.SQS_ENDPOINT = endpoint;
    });
    resetConfig();
    resetQueueClient();
  }
  return fn();
}

/** Whether this run is on the laptop's local parts (DynamoDB Local, hence the local SQS too). */
function isLocalRun(): boolean {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  return endpoint !== undefined && endpoint !== '' && isLocalEndpoint(endpoint);
}

/** DynamoDB Local unless the operator points at AWS (AWS_REGION set and no DYNAMODB_ENDPOINT). */
function configureEnvironment(): string | undefined {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (!process.env.DYNAMODB_ENDPOINT && !process.env.AWS_REGION) process.env.DYNAMODB_ENDPOINT = defaultEndpoint();
  resetConfig();
  resetClients();
  return process.env.DYNAMODB_ENDPOINT || undefined;
}

function describe(err: unknown, endpoint: string | undefined): string {
  if (err instanceof DetailError) return err.detail;
  if (err instanceof ValidationError)
    return Object.entries(err.fields)
      .map(([field, messages]) => `${field}: ${messages.join(' ')}`)
      .join('; ');
  if (err instanceof NotFoundError) return 'not found';
  if (
    err instanceof UsageError ||
    err instanceof UnreachableError ||
    err instanceof SecretsKeyMismatchError ||
    err instanceof SecretsConfigError ||
    err instanceof UnknownAccountError ||
    err instanceof UnknownApiKeyError ||
    err instanceof UnknownProviderAccountError ||
    err instanceof UnknownRailAccountError ||
    err instanceof ProviderSwitchRefusedError
  )
    return err.message;
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  if (isNetworkError(err) || (typeof code === 'string' && NETWORK_CODES.has(code))) {
    return endpoint
      ? `cannot reach DynamoDB at ${endpoint} (${message}); DYNAMODB_ENDPOINT (or DYNAMODB_PORT, default 8000) sets it: is \`npm start\` running, and on that port?`
      : `cannot reach DynamoDB in AWS (${message}); check AWS_REGION and your credentials, or set DYNAMODB_ENDPOINT`;
  }
  return `${err instanceof Error ? err.name : 'Error'}: ${message}`;
}

/** Where the CLI writes: the process's streams, or a test's buffers (test/integration/admin-cli.test.ts runs it in process). */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const PROCESS_OUTPUT: CliOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Runs one command and answers its exit code: 0 done, 1 failed, 2 a usage error. */
export async function main(argv: string[], out: CliOutput = PROCESS_OUTPUT): Promise<number> {
  // No command: the help, on stderr, and exit 2 (a script that forgot its arguments must not look successful).
  if (argv.length === 0) {
    out.stderr(help());
    return 2;
  }
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    const found = commandOf(argv[0] === 'help' ? argv.slice(1) : argv);
    out.stdout(found ? `usage: ${commandUsage('admin', found.name, found.command)}\n\n${found.command.summary}\n` : help());
    return 0;
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    out.stderr(`admin: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const endpoint = configureEnvironment();
  try {
    if (endpoint !== undefined && isLocalEndpoint(endpoint)) await ensureTable(rawClient(), tableName());
    const result = await parsed.command.run(parsed.values);
    out.stdout(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (err) {
    out.stderr(`admin: ${describe(err, endpoint).replace(/\s*\n\s*/g, ' ')}\n`);
    return err instanceof UsageError ? 2 : 1;
  } finally {
    resetClients();
  }
}

// Run as a program (`npm run admin`); imported, the module only exports main.
if (require.main === module)
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`admin: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
