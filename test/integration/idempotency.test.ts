// Idempotency-Key (issue 7, item 1): first response stored and replayed byte for byte, one effect under
// concurrency, 422 on reuse with another request, 409 while in progress, expiry, the crash window.
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resetConfig } from '../../shared/config';
import { EFFECT_LOST, IN_PROGRESS, MISMATCH } from '../../shared/http/idempotency';
import { resetQueueClient } from '../../shared/queue/publish';
import { saveProviderSettings } from '../../shared/store/provider';
import { saveSubscription } from '../../shared/store/subscriptions';
import { edgeKeys } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { closeVerificationClient, verificationClient } from '../support/dynamo-calls';
import { newAccount } from '../support/fixtures';

// Any RSA public key: the webhook intake is not exercised here.
const PUBLIC_KEY = (
  JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'paddle', 'signed-alerts.json'), 'utf8')) as { public_key: string }
).public_key;

let accountId: string;
let key: string;
let serial = 0;
const unique = (p: string) => `${p}-${++serial}-${Date.now().toString(36)}`;

beforeAll(async () => {
  ({ accountId, apiKey: key } = await newAccount('unlimited'));
});
afterAll(() => closeVerificationClient());

const post = (path: string, body: unknown, idem?: string) =>
  api('POST', path, { key, body, ...(idem === undefined ? {} : { headers: { 'idempotency-key': idem } }) });

const recordKey = (idem: string) => edgeKeys.idempotency(accountId, createHash('sha256').update(idem).digest('hex'));

async function record(idem: string): Promise<Record<string, unknown> | undefined> {
  return (
    await verificationClient().send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: recordKey(idem), ConsistentRead: true }))
  ).Item;
}

async function setRecord(idem: string, values: Record<string, unknown>, remove: string[] = []): Promise<void> {
  const names: Record<string, string> = {};
  const vals: Record<string, unknown> = {};
  const sets = Object.entries(values).map(([k, v], i) => {
    names[`#a${i}`] = k;
    vals[`:v${i}`] = v;
    return `#a${i} = :v${i}`;
  });
  await verificationClient().send(
    new UpdateCommand({
      TableName: process.env.TABLE_NAME,
      Key: recordKey(idem),
      UpdateExpression: `SET ${sets.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: vals,
    }),
  );
}

const count = async (path: string) => (await api('GET', path, { key })).body.count as number;

describe('Idempotency-Key', () => {
  it('stores the first response and replays it byte for byte, with Idempotent-Replayed: true', async () => {
    const idem = unique('create-campaign');
    const body = { name: unique('Campaign'), allows_credit: true, credit_amount: '5.00' };
    const before = await count('/v1/campaigns/');
    const first = await post('/v1/campaigns/', body, idem);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('/v1/campaigns/', body, idem);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe('application/json');
    expect(again.headers['x-request-id']).toBeTruthy();
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await count('/v1/campaigns/')).toBe(before + 1);
    // The record expires 24 hours after the first request.
    const item = await record(idem);
    expect(item).toMatchObject({ type: 'Idempotency', state: 'completed', response_status: 201 });
    expect(Number(item?.expires_at) - Math.floor(Date.now() / 1000)).toBeGreaterThan(24 * 3600 - 60);
  });

  it('10 concurrent identical POSTs with one key: one effect, one stored response, the others replayed or 409', async () => {
    const idem = unique('concurrent');
    const name = unique('member');
    const body = { identifier: name, email: `${name}@example.com` };
    const before = await count('/v1/members/');
    const answers = await Promise.all(Array.from({ length: 10 }, () => post('/v1/members/', body, idem)));
    const created = answers.filter((a) => a.status === 201);
    const inProgress = answers.filter((a) => a.status === 409);
    expect(created.length + inProgress.length).toBe(10);
    for (const a of inProgress) expect(a.body).toEqual({ detail: IN_PROGRESS });
    const fresh = created.filter((a) => a.headers['idempotent-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    for (const a of created) expect(a.text).toBe(fresh[0]?.text);
    expect(await count('/v1/members/')).toBe(before + 1);
    // Whatever answered 409 gets the stored response now.
    const late = await post('/v1/members/', body, idem);
    expect({ status: late.status, replayed: late.headers['idempotent-replayed'], same: late.text === fresh[0]?.text }).toEqual({
      status: 201,
      replayed: 'true',
      same: true,
    });
  });

  it('the same key with another body, path or method: 422, and nothing runs', async () => {
    const idem = unique('reuse');
    const body = { name: unique('Campaign') };
    expect((await post('/v1/campaigns/', body, idem)).status).toBe(201);
    const before = await count('/v1/campaigns/');
    const cases: ApiResponse[] = [
      await post('/v1/campaigns/', { name: unique('Other') }, idem),
      await post('/v1/campaigns/', { ...body, allows_credit: false }, idem),
      await post('/v1/members/', { identifier: unique('m'), email: `${unique('m')}@example.com` }, idem),
      await api('PATCH', `/v1/campaigns/${'0'.repeat(8)}/`, { key, body, headers: { 'idempotency-key': idem } }),
    ];
    for (const res of cases) expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: { detail: MISMATCH } });
    expect(await count('/v1/campaigns/')).toBe(before);
  });

  it('keys are per account: another account may use the same key', async () => {
    const other = await newAccount('regular');
    const idem = unique('shared-key');
    expect((await post('/v1/campaigns/', { name: 'Same name' }, idem)).status).toBe(201);
    const theirs = await api('POST', '/v1/campaigns/', {
      key: other.apiKey,
      body: { name: 'Same name' },
      headers: { 'idempotency-key': idem },
    });
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  it('validation errors are stored and replayed too; keys over 255 characters are refused', async () => {
    const idem = unique('invalid');
    const first = await post('/v1/campaigns/', { credit_amount: 'abc' }, idem);
    expect(first.status).toBe(400);
    const again = await post('/v1/campaigns/', { credit_amount: 'abc' }, idem);
    expect({ status: again.status, text: again.text, replayed: again.headers['idempotent-replayed'] }).toEqual({
      status: 400,
      text: first.text,
      replayed: 'true',
    });

    const long = await post('/v1/campaigns/', { name: unique('Long') }, 'k'.repeat(256));
    expect({ status: long.status, body: long.body }).toEqual({
      status: 400,
      body: { detail: 'Idempotency-Key must be 1 to 255 characters.' },
    });
    expect((await post('/v1/campaigns/', { name: unique('Max') }, `${unique('x')}${'k'.repeat(240)}`.slice(0, 255))).status).toBe(201);
  });

  it('DELETE replays its 204; GET ignores the header', async () => {
    const campaign = (await post('/v1/campaigns/', { name: unique('Doomed') })).body;
    const idem = unique('delete');
    const first = await api('DELETE', `/v1/campaigns/${campaign.id}/`, { key, headers: { 'idempotency-key': idem } });
    expect(first.status).toBe(204);
    const again = await api('DELETE', `/v1/campaigns/${campaign.id}/`, { key, headers: { 'idempotency-key': idem } });
    expect({ status: again.status, text: again.text, replayed: again.headers['idempotent-replayed'] }).toEqual({
      status: 204,
      text: '',
      replayed: 'true',
    });
    // Without the key the second delete is a plain 404.
    expect((await api('DELETE', `/v1/campaigns/${campaign.id}/`, { key })).status).toBe(404);
    const get = await api('GET', '/v1/campaigns/', { key, headers: { 'idempotency-key': idem } });
    expect({ status: get.status, replayed: get.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: undefined });
  });

  it('an expired record (not yet deleted by TTL) counts as absent', async () => {
    const idem = unique('expiry');
    expect((await post('/v1/campaigns/', { name: unique('First') }, idem)).status).toBe(201);
    await setRecord(idem, { expires_at: Math.floor(Date.now() / 1000) - 1 });
    const before = await count('/v1/campaigns/');
    const after = await post('/v1/campaigns/', { name: unique('Second') }, idem);
    expect({ status: after.status, replayed: after.headers['idempotent-replayed'] }).toEqual({ status: 201, replayed: undefined });
    expect(await count('/v1/campaigns/')).toBe(before + 1);
  });

  it('a key whose executor holds the lock answers 409; a lapsed lock without an effect runs again', async () => {
    const idem = unique('locked');
    const body = { name: unique('Locked') };
    expect((await post('/v1/campaigns/', body, idem)).status).toBe(201);
    // As if the first request were still running (state in_progress, lock in the future).
    await setRecord(idem, { state: 'in_progress', owner: 'someone-else', locked_until: Date.now() + 30_000 });
    const busy = await post('/v1/campaigns/', body, idem);
    expect({ status: busy.status, body: busy.body }).toEqual({ status: 409, body: { detail: IN_PROGRESS } });
    // The executor died before committing anything: its lock lapses and a retry runs the request again
    // (here the campaign exists already, so the run answers the name conflict: not a replay).
    await setRecord(idem, { state: 'in_progress', owner: 'dead', locked_until: Date.now() - 1 }, ['effect_by']);
    const retried = await post('/v1/campaigns/', body, idem);
    expect({ status: retried.status, body: retried.body, replayed: retried.headers['idempotent-replayed'] }).toEqual({
      status: 400,
      body: { name: [`The name ${body.name} is already in use; choose another`] },
      replayed: undefined,
    });
  });

  it('the crash window: an effect committed without its response stored answers 409 (stored), never a second effect', async () => {
    const idem = unique('crash');
    const body = { name: unique('Crash') };
    expect((await post('/v1/campaigns/', body, idem)).status).toBe(201);
    // The first executor committed (effect_by is written in the effect's transaction) and died.
    await setRecord(idem, { state: 'in_progress', owner: 'dead', effect_by: 'dead', locked_until: Date.now() - 1 });
    const before = await count('/v1/campaigns/');
    const retry = await post('/v1/campaigns/', body, idem);
    expect({ status: retry.status, body: retry.body }).toEqual({ status: 409, body: { detail: EFFECT_LOST } });
    const again = await post('/v1/campaigns/', body, idem);
    expect({ status: again.status, text: again.text, replayed: again.headers['idempotent-replayed'] }).toEqual({
      status: 409,
      text: retry.text,
      replayed: 'true',
    });
    expect(await count('/v1/campaigns/')).toBe(before);
  });

  describe('answers worth retrying (5xx) are not stored', () => {
    async function referralToConvert(): Promise<{ id: string }> {
      const name = unique('m');
      const member = (await post('/v1/members/', { identifier: name, email: `${name}@example.com` })).body;
      return (await post('/v1/referrals/', { user_identifier: unique('u'), member_code: member.code })).body;
    }

    it('a 503 before any effect releases the key: the retry runs again', async () => {
      // The provider is unreachable (a closed local port): the order lookup fails before anything is written.
      await saveProviderSettings(accountId, {
        vendorId: 1,
        authCode: 'x',
        publicKey: PUBLIC_KEY,
        vendorsApiUrl: 'http://127.0.0.1:9/api',
        checkoutApiUrl: 'http://127.0.0.1:9/api',
      });
      const referral = await referralToConvert();
      const idem = unique('provider-down');
      const first = await post(`/v1/referrals/${referral.id}/conversion/`, { checkout_id: 'chk_1' }, idem);
      expect(first.status).toBe(503);
      expect(await record(idem)).toBeUndefined();
      const again = await post(`/v1/referrals/${referral.id}/conversion/`, { checkout_id: 'chk_1' }, idem);
      expect({ status: again.status, replayed: again.headers['idempotent-replayed'] }).toEqual({ status: 503, replayed: undefined });
    });

    it('a 503 after the effect committed (the queue send failed): the retry gets the effect-lost 409, never a second effect', async () => {
      const referral = await referralToConvert();
      const subscription = await saveSubscription(accountId, {
        id: 93_000_000 + (Date.now() % 1_000_000),
        unit_price: '10.00',
        currency: 'USD',
        status: 'active',
        email: 'b@example.com',
        next_bill_date: null,
        last_bill_date: null,
        plan: { id: 1, name: 'P', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' },
      });
      const saved = process.env.REWARDS_QUEUE_URL;
      process.env.SQS_ENDPOINT = 'http://127.0.0.1:9';
      process.env.REWARDS_QUEUE_URL = 'http://127.0.0.1:9/000000000000/rewards';
      resetConfig();
      resetQueueClient();
      const idem = unique('send-failed');
      try {
        const first = await post(`/v1/referrals/${referral.id}/conversion/`, { subscription_id: subscription.id }, idem);
        expect(first.status).toBe(503);
      } finally {
        if (saved === undefined) delete process.env.REWARDS_QUEUE_URL;
        else process.env.REWARDS_QUEUE_URL = saved;
        delete process.env.SQS_ENDPOINT;
        resetConfig();
        resetQueueClient();
      }
      // Committed: the referral is converted and the key's record says so; its lock was released at once.
      expect((await api('GET', `/v1/referrals/${referral.id}/`, { key })).body.is_converted).toBe(true);
      expect(await record(idem)).toMatchObject({ state: 'in_progress', locked_until: 0, effect_by: expect.any(String) });
      const retry = await post(`/v1/referrals/${referral.id}/conversion/`, { subscription_id: subscription.id }, idem);
      expect({ status: retry.status, body: retry.body }).toEqual({ status: 409, body: { detail: EFFECT_LOST } });
    });
  });

  it("the effect marker is written by the effect's own transaction", async () => {
    const idem = unique('marker');
    const name = unique('member');
    const body = { identifier: name, email: `${name}@example.com` };
    expect((await post('/v1/members/', body, idem)).status).toBe(201);
    const first = await record(idem);
    expect(first?.effect_by).toBe(first?.owner);
  });
});
