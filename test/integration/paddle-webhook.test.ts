// Paddle Classic webhook intake (docs/design/api-contract.md "Provider webhooks"): POST /webhooks/paddle/{account_id}/
// verifies p_signature with the account's public key over the exact decoded form fields, queues the
// alert on provider-events and answers 200; anything that does not verify is a 403 and queues nothing.
// No pollers run here, so every queued message can be read back with receiveAll.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { handler } from '../../functions/webhooks/provider';
import { freePort } from '../../infra/local/dynamodb';
import { startPaddleEmulator, type PaddleEmulator } from '../../infra/local/emulators/paddle-classic';
import { setQueueEnvironment } from '../../infra/local/sqs';
import type { AlertFields } from '../../shared/providers/paddle-classic/signature';
import { QUEUE_NAMES, type QueueName } from '../../shared/queue/queues';
import { clearProviderCache, saveProviderSettings } from '../../shared/store/provider';
import { api, type ApiResponse } from '../support/api';
import { newAccount } from '../support/fixtures';
import { startTestQueues, type ReceivedMessage, type TestQueues } from '../support/queues';

interface SignedFixtures {
  public_key: string;
  alerts: Record<string, { verifies: boolean; fields: AlertFields }>;
}
const fixtures = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'paddle', 'signed-alerts.json'), 'utf8')) as SignedFixtures;

const VALID = Object.entries(fixtures.alerts)
  .filter(([, a]) => a.verifies)
  .map(([name, a]) => [name, a.fields] as [string, AlertFields]);
const INVALID = Object.entries(fixtures.alerts)
  .filter(([, a]) => !a.verifies)
  .map(([name, a]) => [name, a.fields] as [string, AlertFields]);

const FORM = 'application/x-www-form-urlencoded';
const INVALID_SIGNATURE = { detail: 'Invalid signature.' };
const NOT_FOUND = { detail: 'Not found.' };

/** A valid alert to tamper with: the one with the most fields. */
const [, BASE_ALERT] = [...VALID].sort(([, a], [, b]) => Object.keys(b).length - Object.keys(a).length)[0] as [string, AlertFields];

const withoutSignature = (fields: AlertFields): AlertFields => {
  const { p_signature: _signature, ...rest } = fields;
  return rest;
};

const form = (fields: AlertFields): string => new URLSearchParams(Object.entries(fields)).toString();

/** Posts a form-encoded alert through the in-process gateway, with no Authorization header. */
function post(
  accountId: string,
  body: string,
  { slash = true, contentType = FORM }: { slash?: boolean; contentType?: string } = {},
): Promise<ApiResponse> {
  return api('POST', `/webhooks/paddle/${accountId}${slash ? '/' : ''}`, { rawBody: body, headers: { 'content-type': contentType } });
}

/** A different character at `index` of `text` (same length, still plain ASCII). */
function changeCharAt(text: string, index: number): string {
  const current = text.charAt(index);
  const replacement = current === 'a' ? 'b' : current === '0' ? '1' : /[0-9]/.test(current) ? '0' : 'a';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

let queues: TestQueues;
let emulator: PaddleEmulator;
/** Configured with the fixtures' (real Paddle test) public key. */
let fixtureAccount: string;
/** Configured with the emulator's public key. */
let emulatorAccount: string;
/** An account without provider settings. */
let bareAccount: string;

beforeAll(async () => {
  queues = await startTestQueues();
  emulator = await startPaddleEmulator();
  clearProviderCache();
  fixtureAccount = (await newAccount()).accountId;
  emulatorAccount = (await newAccount()).accountId;
  bareAccount = (await newAccount()).accountId;
  const common = {
    vendorId: 12345,
    authCode: 'not-a-real-auth-code',
    vendorsApiUrl: emulator.vendorsApiUrl,
    checkoutApiUrl: emulator.checkoutApiUrl,
  };
  await saveProviderSettings(fixtureAccount, { ...common, publicKey: fixtures.public_key });
  await saveProviderSettings(emulatorAccount, { ...common, publicKey: emulator.publicKeyPem });
});

afterAll(async () => {
  await emulator?.stop();
  await queues?.stop();
});

beforeEach(async () => {
  await queues.purge();
});

/** Every message on provider-events now (removing them). */
const queued = (): Promise<ReceivedMessage[]> => queues.receiveAll('provider-events');

/** Exactly one message is queued, the alert of `accountId` with exactly `fields`. */
async function expectQueuedOnce(accountId: string, fields: AlertFields): Promise<void> {
  const messages = await queues.receiveAll('provider-events', { waitMs: 1000 });
  expect(messages).toHaveLength(1);
  const message = (messages[0] as ReceivedMessage).json as Record<string, unknown>;
  // One message kind for every provider: Classic's signed fields travel form-encoded as the raw body.
  expect(message).toMatchObject({ kind: 'provider-webhook', provider: 'paddle-classic', account_id: accountId, headers: {} });
  const queuedFields = Object.fromEntries(new URLSearchParams(message.raw_body as string));
  expect(queuedFields).toEqual(fields);
  expect(queuedFields).not.toHaveProperty('p_signature');
  // Nothing else followed it.
  expect(await queued()).toEqual([]);
}

async function expectRejected(res: ApiResponse): Promise<void> {
  expect(res.status).toBe(403);
  expect(res.body).toEqual(INVALID_SIGNATURE);
  expect(await queued()).toEqual([]);
}

describe('POST /webhooks/paddle/{account_id}/', () => {
  it('has 4 valid and 2 invalid real alerts to work with', () => {
    expect(VALID).toHaveLength(4);
    expect(INVALID).toHaveLength(2);
  });

  it.each(VALID)('accepts the real %s alert and queues exactly its fields', async (_name, fields) => {
    const res = await post(fixtureAccount, form(fields));
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(res.headers['x-request-id']).not.toBe('');
    await expectQueuedOnce(fixtureAccount, withoutSignature(fields));
  });

  it.each(INVALID)('rejects the real %s alert (signature of another alert) with 403 and queues nothing', async (_name, fields) => {
    await expectRejected(await post(fixtureAccount, form(fields)));
  });

  describe('a tampered body is refused and queues nothing', () => {
    const keys = Object.keys(withoutSignature(BASE_ALERT));

    it.each(keys.filter((k) => (BASE_ALERT[k] ?? '') !== ''))('one character of %s changed', async (key) => {
      const value = BASE_ALERT[key] as string;
      await expectRejected(await post(fixtureAccount, form({ ...BASE_ALERT, [key]: changeCharAt(value, Math.floor(value.length / 2)) })));
    });

    it('a field added', async () => {
      await expectRejected(await post(fixtureAccount, form({ ...BASE_ALERT, coupon_code: 'FREE' })));
    });

    it('an empty field added', async () => {
      await expectRejected(await post(fixtureAccount, form({ ...BASE_ALERT, extra: '' })));
    });

    it.each(keys)('field %s removed', async (key) => {
      const { [key]: _removed, ...rest } = BASE_ALERT;
      await expectRejected(await post(fixtureAccount, form(rest)));
    });

    it('a value with surrounding spaces (must not be trimmed into validity)', async () => {
      await expectRejected(await post(fixtureAccount, form({ ...BASE_ALERT, alert_name: ` ${BASE_ALERT.alert_name as string} ` })));
    });

    it('a field sent twice', async () => {
      const body = `${form(BASE_ALERT)}&alert_name=${encodeURIComponent(BASE_ALERT.alert_name as string)}`;
      await expectRejected(await post(fixtureAccount, body));
    });

    it('p_signature missing', async () => {
      await expectRejected(await post(fixtureAccount, form(withoutSignature(BASE_ALERT))));
    });

    it('p_signature empty', async () => {
      await expectRejected(await post(fixtureAccount, form({ ...BASE_ALERT, p_signature: '' })));
    });

    it.each([
      ['not base64', 'not a signature!'],
      ['short base64', 'AAAA'],
      ['random bytes', randomBytes(512).toString('base64')],
      ['a valid signature with one character changed', changeCharAt(BASE_ALERT.p_signature as string, 10)],
    ])('p_signature garbage (%s)', async (_why, signature) => {
      await expectRejected(await post(fixtureAccount, form({ ...BASE_ALERT, p_signature: signature })));
    });

    it('an empty body', async () => {
      await expectRejected(await post(fixtureAccount, ''));
    });

    it('a valid alert of this key sent to an account with another key', async () => {
      await expectRejected(await post(emulatorAccount, form(BASE_ALERT)));
    });
  });

  it('serves the path without the trailing slash identically', async () => {
    const res = await post(fixtureAccount, form(BASE_ALERT), { slash: false });
    expect(res.status).toBe(200);
    await expectQueuedOnce(fixtureAccount, withoutSignature(BASE_ALERT));
    await expectRejected(await post(fixtureAccount, form({ ...BASE_ALERT, p_signature: 'AAAA' }), { slash: false }));
  });

  it('needs no Authorization header, and an API key is not a substitute for the signature', async () => {
    const { apiKey } = await newAccount();
    const res = await api('POST', `/webhooks/paddle/${fixtureAccount}/`, {
      rawBody: form(withoutSignature(BASE_ALERT)),
      headers: { 'content-type': FORM },
      key: apiKey,
    });
    await expectRejected(res);
  });

  it('accepts a content type with a charset parameter', async () => {
    const res = await post(fixtureAccount, form(BASE_ALERT), { contentType: `${FORM}; charset=UTF-8` });
    expect(res.status).toBe(200);
    await expectQueuedOnce(fixtureAccount, withoutSignature(BASE_ALERT));
  });

  it('verifies a body that API Gateway passed base64-encoded', async () => {
    const body = form(BASE_ALERT);
    const res = await invoke(fixtureAccount, Buffer.from(body, 'utf8').toString('base64'), true);
    expect(res.statusCode).toBe(200);
    expect(res.headers?.['X-Request-Id']).toBe(REQUEST_ID);
    await expectQueuedOnce(fixtureAccount, withoutSignature(BASE_ALERT));

    // The same check still applies to the decoded bytes.
    const tampered = form({ ...BASE_ALERT, quantity: '1' });
    const refused = await invoke(fixtureAccount, Buffer.from(tampered, 'utf8').toString('base64'), true);
    expect(refused.statusCode).toBe(403);
    expect(JSON.parse(refused.body ?? '')).toEqual(INVALID_SIGNATURE);
    expect(await queued()).toEqual([]);
  });

  it('verifies a UTF-8 value with a leading space exactly as sent, and queues it untrimmed', async () => {
    const fields = emulator.sign({
      alert_id: '1000009999',
      alert_name: 'subscription_payment_succeeded',
      customer_name: ' Zoë Łukasz-Müller 山田 ',
      email: 'zoe+test@example.com',
      passthrough: '{"member":"AB12 CD"}',
      sale_gross: '10.00',
      currency: 'EUR',
      subscription_id: '70001',
      event_time: '2025-06-01 12:00:00',
    });
    const body = form(fields);
    // Spaces travel as `+`, non-ASCII as percent-encoded UTF-8.
    expect(body).toContain('customer_name=+Zo%C3%AB');
    const res = await post(emulatorAccount, body);
    expect(res.status).toBe(200);
    await expectQueuedOnce(emulatorAccount, withoutSignature(fields));

    // The trimmed value is a different alert: refused.
    await expectRejected(await post(emulatorAccount, form({ ...fields, customer_name: (fields.customer_name as string).trim() })));
  });

  it('verifies and queues an alert type the service ignores (the worker acknowledges it later)', async () => {
    const fields = emulator.sign({
      alert_id: '1000008888',
      alert_name: 'transfer_created',
      amount: '100.00',
      currency: 'USD',
      event_time: '2025-06-01 12:00:00',
    });
    const res = await post(emulatorAccount, form(fields));
    expect(res.status).toBe(200);
    await expectQueuedOnce(emulatorAccount, withoutSignature(fields));
  });

  it.each([
    ['an unknown account id', () => '0123456789abcdef'],
    ['a malformed account id', () => 'not-an-account'],
    ['an upper-case account id', () => fixtureAccount.toUpperCase()],
    ['a too long account id', () => `${fixtureAccount}00`],
    ['an account without provider settings', () => bareAccount],
  ])('answers 404 for %s and queues nothing', async (_why, id) => {
    for (const slash of [true, false]) {
      const res = await post(id(), form(BASE_ALERT), { slash });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    }
    expect(await queued()).toEqual([]);
  });

  it('answers 415 for another content type and queues nothing', async () => {
    const json = await post(fixtureAccount, JSON.stringify(BASE_ALERT), { contentType: 'application/json' });
    expect(json.status).toBe(415);
    expect(json.body).toEqual({ detail: 'Unsupported media type "application/json" in request.' });
    // Even a correctly signed form body is refused when it is labelled as something else.
    const mislabelled = await post(fixtureAccount, form(BASE_ALERT), { contentType: 'application/json' });
    expect(mislabelled.status).toBe(415);
    expect(await queued()).toEqual([]);
  });

  it('answers 405 for another method', async () => {
    const res = await api('GET', `/webhooks/paddle/${fixtureAccount}/`);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });
});

/** Points the publisher at `endpoint` for every queue (the queues of `startTestQueues` stay up, unused). */
function pointQueuesAt(endpoint: string): void {
  setQueueEnvironment({
    endpoint,
    queueUrls: Object.fromEntries(QUEUE_NAMES.map((q) => [q, `${endpoint}/000000000000/${q}`])) as Record<QueueName, string>,
  });
}

async function expectUnavailable(res: ApiResponse): Promise<void> {
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toMatch(/^\d+$/);
  expect(res.body).toEqual({ detail: expect.any(String) });
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
}

describe('POST /webhooks/paddle/{account_id}/ with SQS down', () => {
  let consoleError: jest.SpyInstance;

  beforeAll(() => {
    // The 503 is logged by design; keep the output readable.
    consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => {
    // Back to the live local queues (the file's afterAll stops them).
    setQueueEnvironment(queues);
  });

  afterAll(() => {
    consoleError?.mockRestore();
  });

  it('answers 503 with Retry-After, never 500, when nothing listens on the SQS endpoint', async () => {
    pointQueuesAt(`http://127.0.0.1:${await freePort()}`);
    await expectUnavailable(await post(fixtureAccount, form(BASE_ALERT)));
  });

  it.each([
    [503, 'ServiceUnavailable'],
    [500, 'InternalError'],
  ])('answers 503 with Retry-After, never 500, when SQS answers HTTP %i %s', async (status, code) => {
    let requests = 0;
    const server: Server = createServer((req, res) => {
      requests++;
      req.resume();
      req.on('end', () => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-query-error': `${code};Receiver` });
        res.end(JSON.stringify({ __type: `com.amazonaws.sqs#${code}`, message: 'SQS is having a bad day' }));
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const address = server.address();
      pointQueuesAt(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
      await expectUnavailable(await post(fixtureAccount, form(BASE_ALERT)));
      expect(requests).toBeGreaterThanOrEqual(1);
    } finally {
      await new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      });
    }
  });

  it('still refuses a bad signature with 403 (nothing is sent)', async () => {
    pointQueuesAt(`http://127.0.0.1:${await freePort()}`);
    const res = await post(fixtureAccount, form({ ...BASE_ALERT, p_signature: 'AAAA' }));
    expect(res.status).toBe(403);
    expect(res.body).toEqual(INVALID_SIGNATURE);
  });

  it('queues again once SQS is back', async () => {
    await queues.purge();
    const res = await post(fixtureAccount, form(BASE_ALERT));
    expect(res.status).toBe(200);
    await expectQueuedOnce(fixtureAccount, withoutSignature(BASE_ALERT));
  });
});

// --- calling the handler directly, for events the in-process gateway does not build ---------------

const REQUEST_ID = 'b64-request-0001';

/** The handler as API Gateway invokes it with `isBase64Encoded` (the gateway only does so for non-UTF-8 bodies). */
async function invoke(accountId: string, body: string, isBase64Encoded: boolean): Promise<APIGatewayProxyStructuredResultV2> {
  const now = new Date();
  const path = `/webhooks/paddle/${accountId}/`;
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: 'POST /webhooks/{provider}/{account_id}/',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'api.test', 'content-type': FORM, 'user-agent': 'Paddle' },
    pathParameters: { provider: 'paddle', account_id: accountId },
    body,
    isBase64Encoded,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'api.test',
      domainPrefix: 'api',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'Paddle' },
      requestId: REQUEST_ID,
      routeKey: 'POST /webhooks/{provider}/{account_id}/',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
  };
  const unsupported = () => {
    throw new Error('not supported');
  };
  const context: Context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'ProviderWebhook',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:ProviderWebhook',
    memoryLimitInMB: '1024',
    awsRequestId: REQUEST_ID,
    logGroupName: '/aws/lambda/ProviderWebhook',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 29_000,
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
  return (await handler(event, context)) as APIGatewayProxyStructuredResultV2;
}
