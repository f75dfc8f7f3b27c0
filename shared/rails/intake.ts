// The webhook intake of every payout rail, POST /webhooks/{paypal|stripe-connect|wise}/{account_id}/
// (docs/payouts.md "Webhooks"): read the account's connection to the rail, let the rail's definition verify
// the exact request and map what it reports (shared/rails/<kind>/webhook.ts), then queue one
// RailWebhookMessage on `payout-rails` and answer 200. The ledger is written by the payout-rails worker, so
// a redelivery or a DLQ redrive replays the same mapped outcomes, which apply idempotently.
//
// - Unknown account, or an account not connected to this rail: 404 (the same answer for both).
// - A body over the rail's limit: 413; a missing, wrong or stale signature: 403; a verified body that is
//   not the rail's event: 400; a check that could not be made for now (PayPal's certificate out of reach):
//   503 with Retry-After. Nothing is queued for any of them.
// While the account's connection is cached (PROVIDER_CACHE_TTL_SECONDS, like the providers' webhook keys),
// a delivery costs no DynamoDB round trip: one SQS send.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { config } from '../config';
import { DetailError, NotFoundError, PermissionDeniedError, ServiceUnavailableError } from '../domain/errors';
import { isAccountId } from '../domain/ids';
import { publish } from '../queue/publish';
import { railConnection } from '../store/rail-connections';
import type { RailKind } from './definition';
import type { RailConnection } from './port';
import { railDefinition } from './registry';

/** No rail sends more (their definitions refuse more with 413 too); SQS carries 256 KiB. */
export const MAX_RAIL_WEBHOOK_BYTES = 128 * 1024;

const cache = new Map<string, { connection: RailConnection | null; until: number }>();

/**
 * The account's connection to `kind`, cached in the container (a miss is cached too, so a flood of
 * deliveries for a wrong id costs one read per TTL).
 */
async function cachedConnection(accountId: string, kind: RailKind): Promise<RailConnection | null> {
  const key = `${accountId}#${kind}`;
  const hit = cache.get(key);
  if (hit && hit.until > Date.now()) return hit.connection;
  const connection = await railConnection(accountId, kind);
  const ttl = config().providerCacheTtlSeconds * 1000;
  if (ttl > 0) {
    if (cache.size > 1000) cache.clear();
    cache.set(key, { connection, until: Date.now() + ttl });
  }
  return connection;
}

/** Empties the container's cache of rail connections (tests, and after a connection changes in process). */
export function clearRailConnectionCache(): void {
  cache.clear();
}

export async function receiveRailWebhook(kind: RailKind, accountId: string, event: APIGatewayProxyEventV2): Promise<{ received: true }> {
  const definition = railDefinition(kind);
  if (!definition || !isAccountId(accountId)) throw new NotFoundError();
  const raw = event.body ?? '';
  const body = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (body.length > MAX_RAIL_WEBHOOK_BYTES) throw new DetailError(413, 'Request body is too large.');
  const connection = await cachedConnection(accountId, kind);
  if (connection === null) throw new NotFoundError();
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  const verdict = await definition.verifyWebhook({ headers, body }, connection, Date.now());
  if (!verdict.ok) {
    if (verdict.status === 403) throw new PermissionDeniedError(verdict.detail);
    // Something the check needs is out of reach for now (PayPal's certificate): the rail delivers it again.
    if (verdict.status === 503) throw new ServiceUnavailableError(verdict.detail, 60);
    throw new DetailError(verdict.status, verdict.detail);
  }
  await publish('payout-rails', {
    kind: 'rail-webhook',
    account_id: accountId,
    rail: kind,
    delivery_id: verdict.deliveryId,
    outcomes: verdict.outcomes,
    account_updates: verdict.accountUpdates,
    received_at: Date.now(),
  });
  return { received: true };
}
