// The one logger (shared/log.ts): worker failures name their account, HTTP lines carry the request id and
// route (and the account: an error answer's `request answered` line names it), scheduled jobs their name,
// `npm start` prints readable timestamped lines and one line per request, Lambda lines are JSON with the
// cold start flag.
import type { APIGatewayProxyEventV2, Context, SQSEvent } from 'aws-lambda';
import { startGateway, type Gateway } from '../../infra/local/gateway';
import { freePort } from '../../infra/local/dynamodb';
import { publicHandler } from '../../shared/http/respond';
import { readableLine, setLogLevel, useReadableLogs } from '../../shared/log';
import { scheduledJob, sqsWorker } from '../../shared/queue/worker';

const written: string[] = [];

beforeAll(() => {
  // Jest's global setup silences the logger; this file is about its lines.
  setLogLevel('DEBUG');
  const capture = (chunk: unknown): boolean => {
    written.push(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));
    return true;
  };
  jest.spyOn(process.stdout, 'write').mockImplementation(capture as unknown as typeof process.stdout.write);
  jest.spyOn(process.stderr, 'write').mockImplementation(capture as unknown as typeof process.stderr.write);
});

afterAll(() => {
  jest.restoreAllMocks();
});

beforeEach(() => {
  written.length = 0;
  useReadableLogs(false);
});

const jsonLines = () =>
  written
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const context = { awsRequestId: 'lambda-request-1' } as Context;

function sqsEvent(bodies: string[]): SQSEvent {
  return {
    Records: bodies.map((body, i) => ({
      messageId: `m-${i}`,
      receiptHandle: `r-${i}`,
      body,
      attributes: { ApproximateReceiveCount: '2' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:rewards',
      awsRegion: 'us-east-1',
    })),
  } as unknown as SQSEvent;
}

describe('worker lines', () => {
  it('a failed record names its account, queue and message, and lines logged while it ran carry them too', async () => {
    const { log } = await import('../../shared/log');
    const handler = sqsWorker<{ account_id: string }>('reward-fanout', async (message) => {
      log('info', 'working', { step: 1 });
      throw new Error(`the payment provider could not be reached (${message.account_id})`);
    });
    const out = await handler(sqsEvent([JSON.stringify({ kind: 'evaluate-referral', account_id: 'acct0123456789ab' })]), context);
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'm-0' }]);
    const lines = jsonLines();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'INFO',
        message: 'working',
        step: 1,
        account_id: 'acct0123456789ab',
        queue: 'reward-fanout',
        message_id: 'm-0',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        message: 'reward-fanout: record failed',
        account_id: 'acct0123456789ab',
        queue: 'reward-fanout',
        message_id: 'm-0',
        function_request_id: 'lambda-request-1',
        receive_count: '2',
        error: 'Error',
        service: 'refloop',
        timestamp: expect.any(String),
      }),
    );
  });

  it('an SES event names the account of its tags; a body that is not JSON names none', async () => {
    const handler = sqsWorker('email-events', async () => {
      throw new Error('down');
    });
    const ses = { detail: { mail: { tags: { account_id: ['acctfromsestags'] } } } };
    await handler(sqsEvent([JSON.stringify(ses), 'not json']), context);
    const failed = jsonLines().filter((l) => l.message === 'email-events: record failed');
    expect(failed).toHaveLength(2);
    expect(failed.find((l) => l.message_id === 'm-0')).toMatchObject({ account_id: 'acctfromsestags' });
    expect(failed.find((l) => l.message_id === 'm-1')).toMatchObject({ error: 'PoisonMessageError' });
    expect(failed.find((l) => l.message_id === 'm-1')).not.toHaveProperty('account_id');
  });
});

describe('HTTP lines', () => {
  it('a 500 is logged with its request id, route and stack', async () => {
    const handler = publicHandler(async () => {
      throw new Error('boom');
    });
    const event = { routeKey: 'GET /v1/things/', rawPath: '/v1/things/', requestContext: { requestId: 'req-42', http: { method: 'GET' } } };
    const res = await handler(event as unknown as APIGatewayProxyEventV2, context);
    expect(res.statusCode).toBe(500);
    expect(jsonLines()).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        message: 'unhandled error',
        request_id: 'req-42',
        route: 'GET /v1/things/',
        reason: 'boom',
        stack: expect.stringContaining('boom'),
      }),
    );
  });
});

describe('request lines', () => {
  const event = (routeKey: string, pathParameters: Record<string, string> = {}) =>
    ({
      routeKey,
      rawPath: '/x/',
      pathParameters,
      requestContext: { requestId: 'req-7', http: { method: 'POST' } },
    }) as unknown as APIGatewayProxyEventV2;

  it('an error answer leaves one INFO line with its status, detail and duration; a webhook intake names the account of its path', async () => {
    const { DetailError } = await import('../../shared/domain/errors');
    const handler = publicHandler(async () => {
      throw new DetailError(403, 'Invalid signature.');
    });
    const res = await handler(event('POST /webhooks/stripe/{account_id}/', { account_id: '0123456789abcdef' }), context);
    expect(res.statusCode).toBe(403);
    const answered = jsonLines().filter((l) => l.message === 'request answered');
    expect(answered).toEqual([
      expect.objectContaining({
        level: 'INFO',
        request_id: 'req-7',
        route: 'POST /webhooks/stripe/{account_id}/',
        account_id: '0123456789abcdef',
        status: 403,
        detail: 'Invalid signature.',
        duration_ms: expect.any(Number),
        function_request_id: 'lambda-request-1',
        timestamp: expect.any(String),
      }),
    ]);
  });

  it('a path parameter that is not an account id is not logged as one; a success is a DEBUG line', async () => {
    const handler = publicHandler(async (e) => ({ statusCode: 200, body: JSON.stringify(e.pathParameters) }));
    await handler(event('POST /webhooks/stripe/{account_id}/', { account_id: 'not an account "id"' }), context);
    const answered = jsonLines().filter((l) => l.message === 'request answered');
    expect(answered).toEqual([expect.objectContaining({ level: 'DEBUG', status: 200 })]);
    expect(answered[0]).not.toHaveProperty('account_id');
  });
});

describe('scheduled job lines', () => {
  it("carry the job's name and the invocation's keys; a failed run is logged with its stack and rethrown", async () => {
    const { log } = await import('../../shared/log');
    const job = scheduledJob('webhook-sweep', async () => {
      log('info', 'swept', { events: 0 });
      throw new Error('table unavailable');
    });
    await expect(job({}, context)).rejects.toThrow('table unavailable');
    expect(jsonLines()).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'swept', job: 'webhook-sweep', function_request_id: 'lambda-request-1' }),
      expect.objectContaining({
        level: 'ERROR',
        message: 'webhook-sweep: job failed',
        job: 'webhook-sweep',
        reason: 'table unavailable',
        stack: expect.stringContaining('table unavailable'),
      }),
    ]);
  });
});

describe('cold start (Lambda only)', () => {
  it('is true on the first invocation of a container, false after', () => {
    const saved = process.env.AWS_LAMBDA_FUNCTION_NAME;
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'RefloopApi-Fn';
    try {
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const fresh = require('../../shared/log') as typeof import('../../shared/log');
        expect(fresh.invocationKeys(context)).toEqual({ cold_start: true, function_request_id: 'lambda-request-1' });
        expect(fresh.invocationKeys(context)).toEqual({ cold_start: false, function_request_id: 'lambda-request-1' });
      });
    } finally {
      if (saved === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      else process.env.AWS_LAMBDA_FUNCTION_NAME = saved;
    }
  });
});

describe('npm start: readable lines', () => {
  const TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} /;

  it('formats a log item as time, level, message and key=value pairs', () => {
    const line = readableLine({
      level: 'ERROR',
      message: 'subscription-sync: record failed',
      timestamp: '2026-05-01T10:00:00.123Z',
      service: 'refloop',
      sampling_rate: 0,
      account_id: 'acct1',
      reason: 'the payment provider could not be reached',
    });
    expect(line).toMatch(TIME);
    expect(line.replace(TIME, '')).toBe(
      'ERROR subscription-sync: record failed  account_id=acct1 reason="the payment provider could not be reached"\n',
    );
  });

  it('the local gateway prints one line per request: method, path, status, duration', async () => {
    useReadableLogs();
    let gateway: Gateway | undefined;
    try {
      gateway = await startGateway({ port: await freePort() });
      const res = await fetch(`${gateway.url}/v1/no-such-thing/?page_size=2`);
      expect(res.status).toBe(404);
      const requestId = res.headers.get('x-request-id');
      const line = written
        .join('')
        .split('\n')
        .find((l) => l.includes('GET /v1/no-such-thing/ 404'));
      expect(line).toMatch(TIME);
      expect(line?.replace(TIME, '')).toMatch(new RegExp(`^INFO  GET /v1/no-such-thing/ 404 \\d+ ms  request_id=${requestId}$`));
    } finally {
      await gateway?.close();
    }
  });
});
