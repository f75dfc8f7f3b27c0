// Helpers for tests that drive a tenant wired to the Paddle emulator through the real handlers:
// accounts with provider settings, signed alerts through the webhook, and the API calls around them.
import { startPaddleEmulator, type DeliveredAlert, type PaddleEmulator } from '../../infra/local/emulators/paddle-classic';
import type { Pollers } from '../../infra/local/pollers';
import { saveProviderSettings } from '../../shared/store/provider';
import { getSubscription } from '../../shared/store/subscriptions';
import { api } from './api';
import { newAccount, pollUntil } from './fixtures';
import { useOwnTable } from './own-table';
import { startTestPollers, startTestQueues, type TestQueues } from './queues';

/**
 * The asynchronous path on real parts for one test file: its own local SQS with the real workers behind
 * pollers, and a Paddle emulator on loopback (started before the file's tests, stopped after them).
 */
export function pipelineWorld(options: { ownTable?: boolean } = {}): { queues: TestQueues; pollers: Pollers; paddle: PaddleEmulator } {
  const world = {} as { queues: TestQueues; pollers: Pollers; paddle: PaddleEmulator };
  beforeAll(async () => {
    // A file that runs the background sync (which queues every account of the table) gets a table of its
    // own in the shared DynamoDB Local: otherwise it also syncs the accounts of every file that ran before
    // it, whose emulators have stopped, and its own account waits behind hundreds of failing syncs.
    if (options.ownTable) await useOwnTable();
    world.queues = await startTestQueues();
    world.pollers = startTestPollers(world.queues);
    world.paddle = await startPaddleEmulator({ webhookUrl: null });
  });
  afterAll(async () => {
    await world.pollers?.stop();
    await world.queues?.stop();
    await world.paddle?.stop();
  });
  return world;
}

export interface Tenant {
  accountId: string;
  key: string;
  publishableKey: string;
}

export function paddleTenants(paddle: () => PaddleEmulator) {
  const tenant = async (): Promise<Tenant> => {
    const { accountId, apiKey, publishableKey } = await newAccount();
    const p = paddle();
    await saveProviderSettings(accountId, {
      vendorId: p.vendorId,
      authCode: p.authCode,
      publicKey: p.publicKeyPem,
      vendorsApiUrl: p.vendorsApiUrl,
      checkoutApiUrl: p.checkoutApiUrl,
    });
    return { accountId, key: apiKey, publishableKey };
  };

  const json = (method: string, path: string, t: Tenant, body?: unknown) =>
    api(method, path, { key: t.key, ...(body === undefined ? {} : { body }) });

  /** One signed (or forged) alert through the webhook intake. */
  const post = (t: Tenant, fields: Record<string, string>) =>
    api('POST', `/webhooks/paddle/${t.accountId}/`, {
      rawBody: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

  const deliver = async (t: Tenant, alerts: DeliveredAlert[]): Promise<void> => {
    for (const alert of alerts) expect((await post(t, alert.fields)).status).toBe(200);
  };

  const campaign = async (t: Tenant, body: Record<string, unknown>) => {
    const res = await json('POST', '/v1/campaigns/', t, { name: `c-${Math.random()}`, ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string } & Record<string, unknown>;
  };

  const member = async (t: Tenant, n: string, body: Record<string, unknown> = {}) => {
    const res = await json('POST', '/v1/members/', t, { identifier: `m-${n}`, email: `${n}@example.com`, ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; code: string; email: string };
  };

  const referral = async (t: Tenant, user: string, code: string) => {
    const res = await json('POST', '/v1/referrals/', t, { user_identifier: user, member_code: code });
    expect(res.status).toBe(200);
    return res.body as { id: string; coupon_code: string | null };
  };

  /** A checkout whose alerts reach the service, once both are applied. */
  const subscribed = async (t: Tenant, email: string, options: { planId?: number; coupon?: string } = {}) => {
    const out = await paddle().checkout({
      plan_id: options.planId ?? 9001,
      email,
      deliver: false,
      ...(options.coupon ? { coupon: options.coupon } : {}),
    });
    await deliver(t, out.alerts);
    await pollUntil(async () => {
      const s = await getSubscription(t.accountId, out.subscription.subscription_id);
      return s?.status === 'active' && s.last_bill_date !== null;
    });
    return out;
  };

  const getReferral = async (t: Tenant, id: string) => (await json('GET', `/v1/referrals/${id}/`, t)).body;
  const getMember = async (t: Tenant, id: string) => (await json('GET', `/v1/members/${id}/`, t)).body;

  return { tenant, json, post, deliver, campaign, member, referral, subscribed, getReferral, getMember };
}
