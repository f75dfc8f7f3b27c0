// What a payment provider is to the rest of the service: one ProviderDefinition per provider, exported by
// shared/providers/<kind>/index.ts and registered in shared/billing/registry.ts (the one map of them).
// Everything outside a provider's folder that used to switch on the provider kind reads it from here:
// - the connection: its form fields (served by GET /v1/account/ so the dashboard renders any provider),
//   their parsing and validation, and how it is stored (shared/store/provider.ts);
// - the webhook intake: its path segment, where its verification key comes from, and the check itself
//   (shared/billing/intake.ts, one route for every provider);
// - the adapter, loaded on first use (a dynamic import, which a bundler can split into a file of its own);
// - the quirks the flows branch on, as data;
// - the operator CLI's connect command (infra/admin.ts `account set-*`);
// - the docs page and the local emulator (infra/local/start.ts resolves infra/local/emulators/<folder>/).
// docs/providers/adding-a-provider.md walks through adding one.
import type { FieldErrors } from '../domain/errors';
import type { BillingProvider } from './port';

/**
 * The largest webhook body the JSON providers' intake accepts. SQS carries at most 256 KiB per message, and
 * the body travels JSON-escaped inside one. Paddle Billing and Stripe events are a few KB (a transaction
 * with many line items stays well under 64 KB).
 */
export const MAX_WEBHOOK_BYTES = 128 * 1024;

/** One field of the dashboard's connection form (and of the POST /v1/account/provider/ body). */
export interface ConnectionField {
  /** The body's property. */
  name: string;
  label: string;
  /** `password` for secrets (write-only), `textarea` for a multi-line value (a PEM key), `integer` for ids. */
  type: 'text' | 'password' | 'textarea' | 'integer';
  required: boolean;
  placeholder?: string;
  hint?: string;
}

/** A connection as the store keeps it (shared/store/provider.ts encrypts the secrets and writes the items). */
export interface StoredConnection {
  /** The public settings item's own attributes (beside the keys, `type`, `provider` and `updated_at`). */
  settings: Record<string, string | number>;
  /** The secret that calls the provider's API (plain; stored under the definition's `apiSecretAttribute`). */
  apiSecret: string;
  /**
   * The secret that verifies the provider's webhooks (an item of its own, readable only by the intake),
   * or null when the webhooks are verified with a public key kept in the settings.
   */
  webhookSecret: string | null;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

/** The request a webhook intake hands to the provider's check. */
export interface IncomingWebhook {
  /** Lower-cased header names. */
  headers: Record<string, string | undefined>;
  /** The body's exact bytes. */
  body: Buffer;
}

/**
 * The provider's verdict on a request: what to queue (the headers its parser reads and the body it
 * parses), or the 4xx to answer (nothing is queued).
 */
export type WebhookVerdict =
  | { ok: true; headers: Record<string, string>; rawBody: string }
  | { ok: false; status: 403 | 413 | 415; detail: string };

export interface WebhookSpec {
  /** The path segment of its intake, `/webhooks/<path>/{account_id}/` (Paddle Classic's is `paddle`). */
  path: string;
  /** The header that carries the signature, lower case (null when the signature travels in the body). */
  signatureHeader: string | null;
  /**
   * Where the verification key comes from: `webhook-secret` (a secret of its own item, which only the
   * intake may read) or `settings` (a public key in the public settings item, read by `keyFromSettings`).
   */
  key: 'webhook-secret' | 'settings';
  keyFromSettings?(settings: Record<string, unknown>): string | null;
  /** The largest body the intake accepts (SQS carries at most 256 KiB; the body travels JSON-escaped). */
  maxBytes: number;
  /** Verifies the request with the account's key (`nowMs` for signature timestamps). Never throws. */
  verify(request: IncomingWebhook, key: string, nowMs: number): WebhookVerdict;
}

/** The options every adapter is created with. */
export interface AdapterOptions {
  timeoutMs: number;
  accountId: string;
}

/**
 * The part of the port the flows call through shared/billing/adapters.ts; `parseWebhook` only for
 * providers whose account adapter parses webhooks (see `ProviderQuirks.parsesWebhooksWithoutConnection`).
 */
export type AccountBillingProvider = Pick<
  BillingProvider,
  | 'kind'
  | 'combinesCredits'
  | 'createCoupon'
  | 'applyCredit'
  | 'reverseCredit'
  | 'resolveCheckout'
  | 'getSubscription'
  | 'listSubscriptions'
  | 'listsDeletedApart'
  | 'listPayments'
  | 'describePlan'
> &
  Partial<Pick<BillingProvider, 'parseWebhook'>>;

/** What the subscription-sync worker needs to apply an account's webhooks: the parser and plan lookups. */
export type WebhookProvider = Pick<BillingProvider, 'kind' | 'parseWebhook' | 'describePlan'> &
  Partial<Pick<BillingProvider, 'getSubscription'>>;

/** What a provider's adapter module gives, once loaded. */
export interface ProviderAdapter<C> {
  /** The account's adapter, bound to its connection. */
  provider(connection: C, options: AdapterOptions): AccountBillingProvider;
  /**
   * The webhook parser without the connection (`parsesWebhooksWithoutConnection`): the connection is
   * read only if a parsed event needs a call (a plan lookup).
   */
  webhooks?(loadConnection: () => Promise<C | null>, options: AdapterOptions): WebhookProvider;
}

/** What the flows branch on, as data (never a method's presence). */
export interface ProviderQuirks {
  /** The credits on one subscription combine into one provider object (one credit change at a time). */
  combinesCredits: boolean;
  /** The subscription list keeps cancelled subscriptions apart (`deleted` is paged on its own). */
  listsDeletedApart: boolean;
  /** Events name a plan only by id: the flow completes it with `describePlan`. */
  describesPlans: boolean;
  /** Webhooks parse without credentials (read only for a plan lookup), so the worker reads none first. */
  parsesWebhooksWithoutConnection: boolean;
}

/** The operator CLI's connect command, `npm run admin -- account <command> --account <id> ...`. */
export interface CliConnectSpec<C> {
  /** The command after `account`, e.g. `set-stripe`. */
  command: string;
  /** The flags as the help shows them (after `--account <account_id>`). */
  args: string;
  summary: string;
  /** Its flags (without `account`), and those required. */
  flags: string[];
  required: string[];
  /** A usage problem with the flags (exit 2, nothing read or written), or null. */
  check(values: Record<string, string>): string | null;
  /** The connection the flags describe, or a usage problem; `readFile` reads a file a flag names. */
  connection(
    values: Record<string, string>,
    readFile: (path: string) => string,
  ): { ok: true; connection: C } | { ok: false; message: string };
  /** What the command prints beside `account_id` and `webhook_path` (never a secret). */
  output(connection: C): Record<string, unknown>;
}

/**
 * A definition's connection form (its `fields`, `apiHosts` and `connectionFromBody`), kept with its CLI
 * spec in the provider's `connect.ts`, which the definition loads on first use: only the account routes,
 * the API reference and the CLI read them (docs/operations.md "Bundles").
 */
export type ConnectionForm<C extends { kind: string }> = Pick<ProviderDefinition<C>, 'fields' | 'apiHosts' | 'connectionFromBody'>;

export interface ProviderDefinition<C extends { kind: string } = { kind: string }> {
  readonly kind: C['kind'];
  /** As people call it: `Paddle Classic`. */
  readonly name: string;
  /** The provider's own page on how to connect it (the docs link of the dashboard's form). */
  readonly docsUrl: string;
  /** The repository's page about it. */
  readonly docsPage: string;
  /**
   * Whether the provider still opens accounts to new sellers. The dashboard offers those first (its form
   * starts on the first one); a closed one (Paddle Classic) is still listed, after them, for existing accounts.
   */
  readonly openToNewSellers: boolean;

  /** The dashboard form's fields (the common `api_url` aside), in order. */
  readonly fields: readonly ConnectionField[];
  /**
   * The provider's own API base URLs, accepted as `api_url` anywhere; any other URL (an emulator's) only
   * where emulators are allowed. Empty: the provider takes none (one fixed API).
   */
  readonly apiHosts: readonly string[];
  /**
   * The connection a form body describes (the required fields are present; `apiUrl` is the body's
   * `api_url`, already checked against `apiHosts`), or the first field in error, worded for a form.
   */
  connectionFromBody(body: Record<string, unknown>, apiUrl: string | undefined): Checked<C>;

  /** The `provider` attribute its settings item carries (Paddle Classic's is `paddle`, as always). */
  readonly storedKind: string;
  /** The attribute of the API-secret item that holds the API secret (`auth_code`, `api_key`, ...). */
  readonly apiSecretAttribute: string;
  toStored(connection: C): StoredConnection;
  /** The connection from its settings item and its decrypted API secret (without the webhook secret). */
  fromStored(settings: Record<string, unknown>, apiSecret: string): C;
  /** The connection's public part as GET /v1/account/ shows it. */
  view(settings: Record<string, unknown>): { vendor_id: number | null; api_url: string | null };

  readonly webhook: WebhookSpec;
  /** The adapter, loaded on first use: the one place that imports the provider's `./adapter`. */
  adapter(): Promise<ProviderAdapter<C>>;
  readonly quirks: ProviderQuirks;
  readonly cli: CliConnectSpec<C>;
  /** The local emulator `npm start` runs for it: infra/local/emulators/<folder>/ (dev tooling only). */
  readonly emulator: { folder: string } | null;
}

/** The connection type of a definition. */
export type ConnectionOf<D> = D extends ProviderDefinition<infer C> ? C : never;

/** A CLI-worded settings message ("must be …, --api-url …") as a sentence for the dashboard. */
export function formSentence(message: string): string {
  const text = message.replace(/--api-url/g, 'the API URL');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** Every required field the body lacks, as the API's field errors (empty when none). */
export function missingFields(definition: Pick<ProviderDefinition, 'fields'>, body: Record<string, unknown>): FieldErrors {
  const errors: FieldErrors = {};
  for (const field of definition.fields)
    if (field.required && body[field.name] === undefined) errors[field.name] = ['This field is required.'];
  return errors;
}

/**
 * The webhook check of a provider that signs the exact body in a header (Paddle Billing, Stripe): the
 * header and the body are what is queued.
 */
export function headerSignedWebhook(options: {
  path: string;
  header: string;
  maxBytes: number;
  verify(raw: { headers: Record<string, string | undefined>; rawBody: string }, secret: string, nowMs: number): { ok: boolean };
}): WebhookSpec {
  return {
    path: options.path,
    signatureHeader: options.header,
    key: 'webhook-secret',
    maxBytes: options.maxBytes,
    verify(request, secret, nowMs) {
      const signature = request.headers[options.header];
      const headers: Record<string, string> = signature === undefined ? {} : { [options.header]: signature };
      const rawBody = request.body.toString('utf8');
      if (!options.verify({ headers, rawBody }, secret, nowMs).ok) return { ok: false, status: 403, detail: 'Invalid signature.' };
      return { ok: true, headers, rawBody };
    },
  };
}
