// shared/tracing.ts: the X-Ray segment documents sent to the daemon (here a UDP socket of the test) in a
// sampled Lambda invocation: the handler's subsegment with its annotations, an AWS SDK call's subsegment
// under it (operation, table, request id, status, the trace header naming it), a provider call's remote
// subsegment with its fault; and nothing at all without a sampled trace.
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ProviderUnavailableError } from '../../shared/billing/port';
import { providerCall } from '../../shared/providers/retry';
import { daemonAddress, traceClient, traced } from '../../shared/tracing';

const ROOT = '1-5759e988-bd862e3fe1be46a994272793';
const PARENT = '53995c3f42cd8ad8';
const ENV_KEYS = [
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_XRAY_DAEMON_ADDRESS',
  '_X_AMZN_TRACE_ID',
  'POWERTOOLS_TRACE_ENABLED',
  'REFLOOP_TRACING',
] as const;
const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));

let daemon: Socket;
const documents: Record<string, any>[] = [];
const headers: string[] = [];

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (msg) => {
    const [header, body] = msg.toString('utf8').split('\n', 2);
    headers.push(header ?? '');
    documents.push(JSON.parse(body ?? '{}'));
  });
  await new Promise<void>((ok) => daemon.bind(0, '127.0.0.1', () => ok()));
});

afterAll(async () => {
  await new Promise<void>((ok) => daemon.close(() => ok()));
  for (const k of ENV_KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

beforeEach(() => {
  documents.length = 0;
  headers.length = 0;
  process.env.AWS_LAMBDA_FUNCTION_NAME = 'RefloopApi-ConvertReferral';
  process.env.AWS_XRAY_DAEMON_ADDRESS = `127.0.0.1:${(daemon.address() as AddressInfo).port}`;
  process.env._X_AMZN_TRACE_ID = `Root=${ROOT};Parent=${PARENT};Sampled=1;Lineage=a87bd80c:0`;
});

/** Datagrams are local but asynchronous: wait until `n` documents arrived. */
async function received(n: number): Promise<Record<string, any>[]> {
  for (let i = 0; i < 100 && documents.length < n; i++) await new Promise((ok) => setTimeout(ok, 10));
  await new Promise((ok) => setTimeout(ok, 20)); // and nothing more
  return documents;
}

/** A DynamoDB client whose calls never leave the process: the last step answers (or fails) like the service. */
function fakeDynamo(answer: 'ok' | 'throttled', sentHeaders: Record<string, string>[]): DynamoDBClient {
  const client = traceClient(
    new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1 }),
  );
  client.middlewareStack.add(
    () => async (args: any) => {
      sentHeaders.push({ ...args.request.headers });
      if (answer === 'throttled') {
        throw Object.assign(new Error('Rate exceeded'), {
          name: 'ProvisionedThroughputExceededException',
          $fault: 'client',
          $metadata: { httpStatusCode: 400, requestId: 'req-throttled' },
        });
      }
      return { response: {}, output: { Item: undefined, $metadata: { httpStatusCode: 200, requestId: 'req-ok' } } } as any;
    },
    { step: 'finalizeRequest', name: 'fakeAnswer', priority: 'low' },
  );
  return client;
}

describe('in a sampled Lambda invocation', () => {
  it('sends the handler subsegment with its annotations, and an SDK call under it, named by the trace header', async () => {
    const sent: Record<string, string>[] = [];
    const client = fakeDynamo('ok', sent);
    const out = await traced(
      '## handler',
      { Service: 'refloop', ColdStart: true, route: 'POST /referrals/{id}/conversion/' },
      async () => {
        await client.send(new GetItemCommand({ TableName: 'refloop-table', Key: { pk: { S: 'a' }, sk: { S: 'b' } } }));
        return { statusCode: 201 };
      },
      (r) => ({ annotations: { status: r.statusCode, account_id: '0123456789abcdef' } }),
    );
    expect(out).toEqual({ statusCode: 201 });
    const docs = await received(2);
    expect(docs).toHaveLength(2);
    expect(new Set(headers)).toEqual(new Set(['{"format":"json","version":1}']));

    const handler = docs.find((d) => d.name === '## handler');
    const call = docs.find((d) => d.name === 'DynamoDB');
    expect(handler).toEqual({
      type: 'subsegment',
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      trace_id: ROOT,
      parent_id: PARENT, // Lambda's function segment
      name: '## handler',
      start_time: expect.any(Number),
      end_time: expect.any(Number),
      annotations: {
        Service: 'refloop',
        ColdStart: true,
        route: 'POST /referrals/{id}/conversion/',
        status: 201,
        account_id: '0123456789abcdef',
      },
    });
    expect(call).toMatchObject({
      type: 'subsegment',
      trace_id: ROOT,
      parent_id: handler?.id,
      namespace: 'aws',
      aws: { operation: 'GetItem', table_name: 'refloop-table', request_id: 'req-ok', region: process.env.AWS_REGION },
      http: { response: { status: 200 } },
    });
    expect(call).not.toHaveProperty('fault');
    expect(call?.start_time).toBeGreaterThanOrEqual(handler?.start_time);
    expect(call?.end_time).toBeLessThanOrEqual(handler?.end_time);
    expect(handler?.start_time).toBeGreaterThan(1.7e9); // seconds since the epoch
    // The request carried the trace header naming the SDK call's subsegment (a queued message's consumer continues under it).
    expect(sent[0]?.['X-Amzn-Trace-Id']).toBe(`Root=${ROOT};Parent=${call?.id};Sampled=1`);
  });

  it('flags a throttled SDK call, a failed provider call (remote, fault) and a handler that threw', async () => {
    const client = fakeDynamo('throttled', []);
    await expect(
      traced('## handler', { Service: 'refloop' }, async () => {
        await expect(client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }))).rejects.toThrow('Rate exceeded');
        await expect(
          providerCall('stripe', 'retrieve subscription', async () => {
            throw new ProviderUnavailableError('HTTP 503 after 5 attempt(s)', 'stripe', 'retrieve subscription');
          }),
        ).rejects.toThrow(ProviderUnavailableError);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const docs = await received(3);
    expect(docs).toHaveLength(3);
    const handler = docs.find((d) => d.name === '## handler');
    expect(handler).toMatchObject({ fault: true });
    expect(docs.find((d) => d.name === 'DynamoDB')).toMatchObject({
      parent_id: handler?.id,
      throttle: true,
      error: true,
      aws: { request_id: 'req-throttled' },
      http: { response: { status: 400 } },
    });
    expect(docs.find((d) => d.name === 'stripe')).toMatchObject({
      parent_id: handler?.id,
      namespace: 'remote',
      fault: true,
      annotations: { provider: 'stripe', call: 'retrieve-subscription' },
    });
  });
});

describe('without a sampled trace, nothing is sent', () => {
  it.each([
    ['not sampled', () => (process.env._X_AMZN_TRACE_ID = `Root=${ROOT};Parent=${PARENT};Sampled=0`)],
    ['no trace header', () => delete process.env._X_AMZN_TRACE_ID],
    ['not in Lambda (npm start, tests)', () => delete process.env.AWS_LAMBDA_FUNCTION_NAME],
    ['no daemon', () => delete process.env.AWS_XRAY_DAEMON_ADDRESS],
    ['tracing turned off', () => (process.env.POWERTOOLS_TRACE_ENABLED = 'false')],
  ])('%s', async (_case, change) => {
    change();
    try {
      const sent: Record<string, string>[] = [];
      const client = fakeDynamo('ok', sent);
      expect(
        await traced(
          '## handler',
          {},
          async () => (await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }))).$metadata.requestId,
        ),
      ).toBe('req-ok');
      expect(await received(1)).toEqual([]);
    } finally {
      delete process.env.POWERTOOLS_TRACE_ENABLED;
    }
  });
});

describe('daemon address', () => {
  it("reads host:port and Lambda's tcp/udp pair", () => {
    expect(daemonAddress('169.254.79.129:2000')).toEqual({ host: '169.254.79.129', port: 2000 });
    expect(daemonAddress('tcp:169.254.79.129:2000 udp:169.254.79.130:2001')).toEqual({ host: '169.254.79.130', port: 2001 });
    expect(daemonAddress('')).toBeNull();
  });
});

describe('the SDK logger middleware', () => {
  it('is removed: no call walks its input and output for a log line nobody keeps', async () => {
    const plain = new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    expect(plain.middlewareStack.identify().some((m) => m.startsWith('loggerMiddleware'))).toBe(true);
    const sent: Record<string, string>[] = [];
    const client = fakeDynamo('ok', sent);
    expect(client.middlewareStack.identify().some((m) => m.startsWith('loggerMiddleware'))).toBe(false);
    // Calls still answer.
    const out = await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }));
    expect(out.$metadata.requestId).toBe('req-ok');
    expect(sent).toHaveLength(1);
  });
});
