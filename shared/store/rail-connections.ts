// An account's payout-rail connections (docs/payouts.md "Connecting a rail"): any of the rails of
// shared/rails/registry.ts, each connected on its own. Two items per rail, written in one transaction:
// - `A#<acct>#RAIL` / `<kind>`: the public part (kind, api_url, the fields that are not secrets, such as
//   PayPal's client_id and webhook_id or Wise's profile_id and webhook public key, and connected_at). The
//   dashboard's list reads only this partition.
// - `A#<acct>#RAIL_SECRET` / `<kind>`: the secret fields (the definition's `password` fields: PayPal's
//   client_secret, Stripe's three keys, Wise's API token), each encrypted like the provider secrets
//   (shared/secrets: `kms:v1:` in AWS, `local:v1:` locally, bound to the account id), under a partition of
//   its own so IAM denies it (dynamodb:LeadingKeys) to every function without the `railSecrets` flag of
//   functions/routes.ts. Secrets are never logged and never returned by any API.
import type { ConnectionField } from '../billing/definition';
import { isPayoutMethod } from '../domain/payout-methods';
import type { RailKind } from '../rails/definition';
import type { RailConnection } from '../rails/port';
import { railDefinition, RAIL_DEFINITIONS } from '../rails/registry';
import { decryptSecret, encryptSecret } from '../secrets';
import { tableName } from './client';
import { batchGet, ConditionsFailedError, lookup, nowSeconds, queryAll, transact } from './ops';
import { keys, type Key } from './table';

export const railKeys = {
  settings: (acct: string, kind: RailKind): Key => ({ pk: `A#${acct}#RAIL`, sk: kind }),
  secret: (acct: string, kind: RailKind): Key => ({ pk: `A#${acct}#RAIL_SECRET`, sk: kind }),
};

/** A field whose value is a secret (write-only, encrypted in the secret item). */
export const isSecretField = (field: Pick<ConnectionField, 'type'>): boolean => field.type === 'password';

/** A connected rail's public part, as the API shows it (never a secret). */
export interface RailConnectionPublic {
  kind: RailKind;
  api_url: string;
  /** The non-secret fields of the rail's form, by name. */
  fields: Record<string, string>;
  connected_at: number;
}

export class UnknownRailAccountError extends Error {
  constructor(accountId: string) {
    super(`Account ${accountId} does not exist`);
  }
}

function definitionOf(kind: RailKind) {
  const definition = railDefinition(kind);
  if (!definition) throw new Error(`unknown payout rail ${kind}`);
  return definition;
}

/**
 * Creates or replaces the account's connection to `kind` (the account must exist): the public item and the
 * secret item, whole, in one transaction. `conn.credentials` holds every field of the rail's form.
 */
export async function saveRailConnection(accountId: string, kind: RailKind, conn: RailConnection): Promise<RailConnectionPublic> {
  const definition = definitionOf(kind);
  const publicFields: Record<string, string> = {};
  const secrets: [string, string][] = [];
  for (const field of definition.fields) {
    const value = conn.credentials[field.name];
    if (value === undefined) {
      if (field.required) throw new Error(`a ${kind} connection needs its ${field.name}`);
      continue;
    }
    if (isSecretField(field)) secrets.push([field.name, value]);
    else publicFields[field.name] = value;
  }
  const encrypted = await Promise.all(secrets.map(async ([name, value]) => [name, await encryptSecret(accountId, value)] as const));
  const now = nowSeconds();
  try {
    await transact([
      { ConditionCheck: { TableName: tableName(), Key: keys.account(accountId), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...railKeys.settings(accountId, kind),
            type: 'RailConnection',
            kind,
            api_url: conn.apiUrl,
            fields: publicFields,
            connected_at: now,
          },
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: { ...railKeys.secret(accountId, kind), type: 'RailSecret', secrets: Object.fromEntries(encrypted), updated_at: now },
        },
      },
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError && err.failed(0)) throw new UnknownRailAccountError(accountId);
    throw err;
  }
  return { kind, api_url: conn.apiUrl, fields: publicFields, connected_at: now };
}

function toPublic(item: Record<string, unknown>): RailConnectionPublic | null {
  // RailKind's values (domain/payout-methods.ts), not the registry's lookup: a function that only reads a
  // connection (the portal's Stripe link) then carries no rail's code (test/unit/bundle-budget.test.ts).
  if (!isPayoutMethod(item.kind)) return null;
  const kind: RailKind = item.kind;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries((item.fields ?? {}) as Record<string, unknown>))
    if (typeof value === 'string') fields[name] = value;
  return { kind, api_url: String(item.api_url), fields, connected_at: Number(item.connected_at) };
}

/** The public parts of every rail the account connected, in the registry's order (no secret is read). */
export async function railConnections(accountId: string): Promise<RailConnectionPublic[]> {
  const items = await queryAll({ partitionValue: `A#${accountId}#RAIL` });
  const found = items.map(toPublic).filter((c): c is RailConnectionPublic => c !== null);
  const order = RAIL_DEFINITIONS.map((d) => d.kind);
  return found.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}

/**
 * The account's connection to `kind` with its secrets decrypted (for the functions that send money or
 * verify a rail's webhooks: they need the `railSecrets` flag); null when not connected.
 */
export async function railConnection(accountId: string, kind: RailKind): Promise<RailConnection | null> {
  const found = await batchGet([railKeys.settings(accountId, kind), railKeys.secret(accountId, kind)]);
  const item = lookup(found, railKeys.settings(accountId, kind));
  const secret = lookup(found, railKeys.secret(accountId, kind));
  if (!item || !secret) return null;
  const pub = toPublic(item);
  if (!pub) return null;
  const stored = (secret.secrets ?? {}) as Record<string, unknown>;
  const decrypted = await Promise.all(
    Object.entries(stored)
      .filter((e): e is [string, string] => typeof e[1] === 'string')
      .map(async ([name, value]) => [name, await decryptSecret(accountId, value)] as const),
  );
  return { apiUrl: pub.api_url, credentials: { ...pub.fields, ...Object.fromEntries(decrypted) } };
}

/** Removes the account's connection to `kind` (both items); true when there was one. */
export async function deleteRailConnection(accountId: string, kind: RailKind): Promise<boolean> {
  try {
    await transact([
      {
        Delete: {
          TableName: tableName(),
          Key: railKeys.settings(accountId, kind),
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
      { Delete: { TableName: tableName(), Key: railKeys.secret(accountId, kind) } },
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionsFailedError && err.failed(0)) return false;
    throw err;
  }
}
