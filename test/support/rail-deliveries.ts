// Signed deliveries for the payout rails' webhook intakes (POST /webhooks/{paypal|stripe-connect|wise}/{account_id}/),
// made with each emulator's own signing (as test/integration/rail-webhooks.test.ts captures real ones), and the
// stored items of a processing rail batch and an unclaimed PayPal payout (as the payout flows store them), for
// the cross-cutting tests (round trips, the OpenAPI live samples, the security matrix, the bad-input fuzz).
import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import type { StripeEmulator } from '../../infra/local/emulators/stripe';
import type { WiseEmulator } from '../../infra/local/emulators/wise';
import { newEntityId } from '../../shared/domain/ids';
import type { Payout } from '../../shared/domain/lifecycle';
import { signatureHeader } from '../../shared/providers/stripe/signature';
import type { RailConnection } from '../../shared/rails/port';
import { db, tableName } from '../../shared/store/client';
import { payoutItem } from '../../shared/store/payouts';
import { moneyListKeys } from '../../shared/store/table';

/** A raw body and the headers a rail sends it with. */
export interface RailDelivery {
  rawBody: string;
  headers: Record<string, string>;
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** The connection of an account to each emulator (saveRailConnection's argument). */
export const paypalConnection = (e: PaypalEmulator): RailConnection => ({
  apiUrl: e.url,
  credentials: { client_id: e.clientId, client_secret: e.clientSecret, webhook_id: e.webhookId },
});
export const stripeConnection = (e: StripeEmulator): RailConnection => ({
  apiUrl: e.url,
  credentials: { secret_key: e.secretKey, webhook_secret: e.connect.webhookSecret, connect_webhook_secret: e.connect.connectWebhookSecret },
});
export const wiseConnection = (e: WiseEmulator): RailConnection => ({
  apiUrl: e.url,
  credentials: { api_token: e.apiToken, profile_id: String(e.profileId), webhook_public_key: e.publicKeyPem },
});

/** PAYMENT.PAYOUTS-ITEM.SUCCEEDED for a payout, signed by the PayPal emulator. */
export function paypalDelivery(e: PaypalEmulator, payoutId = `po_${newEntityId()}`): RailDelivery {
  const itemId = `ITEM${newEntityId().slice(-10)}`;
  const rawBody = JSON.stringify({
    id: `WH-${randomUUID()}`,
    event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
    resource_type: 'payouts_item',
    resource: {
      payout_item_id: itemId,
      transaction_status: 'SUCCESS',
      payout_batch_id: `BATCH${newEntityId().slice(-10)}`,
      payout_item: { sender_item_id: payoutId, recipient_type: 'EMAIL', receiver: 'ann@example.com' },
    },
  });
  return { rawBody, headers: { ...JSON_TYPE, ...e.sign(rawBody) } };
}

/** transfer.created for a payout, signed with the Stripe emulator's Connect platform secret. */
export function stripeDelivery(e: StripeEmulator, payoutId = `po_${newEntityId()}`): RailDelivery {
  const rawBody = JSON.stringify({
    id: `evt_${newEntityId()}`,
    object: 'event',
    type: 'transfer.created',
    livemode: false,
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: `tr_${newEntityId()}`,
        object: 'transfer',
        amount: 1250,
        currency: 'usd',
        destination: 'acct_1RAILDELIVERY',
        reversed: false,
        amount_reversed: 0,
        metadata: { refloop_payout_id: payoutId },
      },
    },
  });
  return {
    rawBody,
    headers: { ...JSON_TYPE, 'stripe-signature': signatureHeader(e.connect.webhookSecret, rawBody, Math.floor(Date.now() / 1000)) },
  };
}

/** transfers#state-change (outgoing_payment_sent) of a transfer, signed by the Wise emulator. */
export function wiseDelivery(e: WiseEmulator, transferId = 50_000_000 + Math.floor(Math.random() * 1_000_000)): RailDelivery {
  const rawBody = JSON.stringify({
    event_type: 'transfers#state-change',
    schema_version: '2.0.0',
    sent_at: new Date().toISOString(),
    data: {
      resource: { type: 'transfer', id: transferId, profile_id: e.profileId },
      current_state: 'outgoing_payment_sent',
      previous_state: 'processing',
      occurred_at: new Date().toISOString(),
    },
  });
  return { rawBody, headers: { ...JSON_TYPE, 'x-signature-sha256': e.sign(rawBody), 'x-delivery-id': randomUUID() } };
}

const now = () => Math.floor(Date.now() / 1000);

/** A PayPal batch still processing at its rail (its stored item only): its id. */
export async function putProcessingRailBatch(accountId: string, payoutIds: string[] = []): Promise<string> {
  const id = `pb_${newEntityId()}`;
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...moneyListKeys.payoutBatch(accountId, id),
        type: 'PayoutBatch',
        id,
        rail: 'paypal',
        currency: 'USD',
        status: 'processing',
        payout_ids: payoutIds,
        amount: 0,
        created_at: now(),
        rail_batch_id: `PAYPAL-${newEntityId().slice(-10)}`,
      },
    }),
  );
  return id;
}

/** A processing PayPal payout its rail reports UNCLAIMED (ResendPayout's one case), in a processing batch. */
export async function putUnclaimedPaypalPayout(accountId: string, memberId = randomUUID().replace(/-/g, '')): Promise<Payout> {
  const id = `po_${newEntityId()}`;
  const batchId = await putProcessingRailBatch(accountId, [id]);
  const p: Payout = {
    id,
    member_id: memberId,
    currency: 'USD',
    amount: 2500,
    reward_ids: [],
    status: 'processing',
    period_start: now() - 86_400,
    period_end: now() - 3600,
    paid_at: null,
    reference: null,
    failure_reason: null,
    batch_id: batchId,
    payout_email: 'ann@example.com',
    member_identifier: null,
    member_email: null,
    member_name: null,
    rail: 'paypal',
    rail_status: 'UNCLAIMED',
    rail_item_id: `ITEM${newEntityId().slice(-10)}`,
    created_at: now() - 3600,
    updated_at: now() - 3600,
    version: 3,
  };
  await db().send(new PutCommand({ TableName: tableName(), Item: payoutItem(accountId, p) }));
  return p;
}
