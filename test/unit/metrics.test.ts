// shared/metrics.ts: the EMF lines Powertools Metrics prints (namespace, `service` and the metric's own
// dimensions, values, units), one line per dimension set per flush, nothing outside Lambda unless
// REFLOOP_METRICS=1, and the flush the HTTP, SQS and scheduled wrappers make however the invocation ends.
import type { APIGatewayProxyEventV2, Context, SQSEvent } from 'aws-lambda';
import { countMetric, flushMetrics, metricsEnabled, resetMetrics, timingMetric, withMetrics } from '../../shared/metrics';
import { publicHandler } from '../../shared/http/respond';
import { scheduledJob, sqsWorker } from '../../shared/queue/worker';

interface Emf {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [key: string]: unknown;
}

const written: string[] = [];
const ENV_KEYS = ['REFLOOP_METRICS', 'AWS_LAMBDA_FUNCTION_NAME', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_SERVICE_NAME'] as const;
const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));

beforeAll(() => {
  jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: unknown) => {
    written.push(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));
    return true;
  }) as unknown as typeof process.stdout.write);
});

afterAll(() => {
  jest.restoreAllMocks();
  for (const k of ENV_KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  resetMetrics();
});

beforeEach(() => {
  for (const k of ENV_KEYS) delete process.env[k];
  process.env.REFLOOP_METRICS = '1';
  resetMetrics();
  written.length = 0;
});

/** The EMF objects printed since the test began. */
const emf = (): Emf[] =>
  written
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{"_aws"'))
    .map((line) => JSON.parse(line) as Emf);

const definition = (e: Emf) => e._aws.CloudWatchMetrics[0] as Emf['_aws']['CloudWatchMetrics'][number];

describe('EMF output', () => {
  it('a count without dimensions: namespace Refloop, dimension service=refloop, value 1, unit Count', () => {
    countMetric('ReferralsCreated');
    expect(emf()).toEqual([]); // kept until the invocation's flush
    flushMetrics();
    const [line, ...rest] = emf();
    expect(rest).toEqual([]);
    expect(line).toEqual({
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [{ Namespace: 'Refloop', Dimensions: [['service']], Metrics: [{ Name: 'ReferralsCreated', Unit: 'Count' }] }],
      },
      service: 'refloop',
      ReferralsCreated: 1,
    });
    expect(Math.abs((line?._aws.Timestamp ?? 0) - Date.now())).toBeLessThan(60_000);
  });

  it("each dimension set is its own line: one metric's dimensions never reach another's", () => {
    countMetric('Conversions');
    countMetric('ProviderErrors', { Provider: 'stripe' });
    countMetric('ProviderErrorsByCall', { Provider: 'stripe', Call: 'retrieve-subscription' });
    countMetric('ProviderCalls', { Provider: 'paddle-classic' });
    flushMetrics();
    const lines = emf();
    expect(lines).toHaveLength(4);
    const byMetric = (name: string) => lines.find((l) => definition(l).Metrics.some((m) => m.Name === name)) as Emf;

    expect(definition(byMetric('Conversions'))).toEqual({
      Namespace: 'Refloop',
      Dimensions: [['service']],
      Metrics: [{ Name: 'Conversions', Unit: 'Count' }],
    });
    expect(byMetric('Conversions')).not.toHaveProperty('Provider');

    expect(definition(byMetric('ProviderErrors')).Dimensions).toEqual([['service', 'Provider']]);
    expect(byMetric('ProviderErrors')).toMatchObject({ service: 'refloop', Provider: 'stripe', ProviderErrors: 1 });
    expect(byMetric('ProviderErrors')).not.toHaveProperty('Call');

    expect(definition(byMetric('ProviderErrorsByCall')).Dimensions).toEqual([['service', 'Call', 'Provider']]);
    expect(byMetric('ProviderErrorsByCall')).toMatchObject({ Provider: 'stripe', Call: 'retrieve-subscription', ProviderErrorsByCall: 1 });

    expect(byMetric('ProviderCalls')).toMatchObject({ Provider: 'paddle-classic', ProviderCalls: 1 });
    // Every line holds one metric only: nothing from another dimension set.
    for (const line of lines) expect(definition(line).Metrics).toHaveLength(1);
  });

  it('repeats within one invocation are one line with a value array; counts and timings carry their values and units', () => {
    countMetric('RewardsCreated', { RewardType: 'credit' }, 2);
    countMetric('RewardsCreated', { RewardType: 'credit' });
    countMetric('RewardsCreated', { RewardType: 'commission' });
    timingMetric('WebhookLag', { Provider: 'paddle-billing' }, 1234.4);
    timingMetric('WebhookLag', { Provider: 'paddle-billing' }, -5); // clock skew: 0, never negative
    flushMetrics();
    const lines = emf();
    expect(lines).toHaveLength(3);
    expect(lines).toContainEqual(expect.objectContaining({ RewardType: 'credit', RewardsCreated: [2, 1] }));
    expect(lines).toContainEqual(expect.objectContaining({ RewardType: 'commission', RewardsCreated: 1 }));
    const lag = lines.find((l) => 'WebhookLag' in l) as Emf;
    expect(definition(lag)).toEqual({
      Namespace: 'Refloop',
      Dimensions: [['service', 'Provider']],
      Metrics: [{ Name: 'WebhookLag', Unit: 'Milliseconds' }],
    });
    expect(lag).toMatchObject({ Provider: 'paddle-billing', WebhookLag: [1234, 0] });
  });

  it('a flush prints once: the next flush prints nothing, and nothing is printed for an invocation without metrics', () => {
    countMetric('CreditsApplied');
    flushMetrics();
    flushMetrics();
    expect(emf()).toHaveLength(1);
    written.length = 0;
    flushMetrics();
    expect(written.join('')).toBe(''); // not even Powertools' "No application metrics to publish" warning
  });

  it('takes the namespace and the service from the stack environment', () => {
    process.env.POWERTOOLS_METRICS_NAMESPACE = 'RefloopStaging';
    process.env.POWERTOOLS_SERVICE_NAME = 'refloop-staging';
    resetMetrics();
    countMetric('OutgoingWebhookFailures');
    flushMetrics();
    expect(emf()).toEqual([expect.objectContaining({ service: 'refloop-staging', OutgoingWebhookFailures: 1 })]);
    expect(definition(emf()[0] as Emf).Namespace).toBe('RefloopStaging');
  });
});

describe('where metrics are printed', () => {
  it('only in Lambda by default, or with REFLOOP_METRICS=1; REFLOOP_METRICS=0 turns them off everywhere', () => {
    delete process.env.REFLOOP_METRICS;
    expect(metricsEnabled()).toBe(false); // npm start, tests
    countMetric('ReferralsCreated');
    flushMetrics();
    expect(emf()).toEqual([]);

    process.env.AWS_LAMBDA_FUNCTION_NAME = 'RefloopApi-CreateReferral';
    expect(metricsEnabled()).toBe(true);
    countMetric('ReferralsCreated');
    flushMetrics();
    expect(emf()).toHaveLength(1);

    process.env.REFLOOP_METRICS = '0';
    expect(metricsEnabled()).toBe(false);
  });
});

describe('the invocation wrappers flush, however the invocation ends', () => {
  const context = { awsRequestId: 'lambda-request-1' } as Context;

  it('withMetrics prints when its function throws', async () => {
    await expect(
      withMetrics(async () => {
        countMetric('Conversions');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(emf()).toEqual([expect.objectContaining({ Conversions: 1 })]);
  });

  it('publicHandler: after a 200 and after a 500', async () => {
    const event = {
      routeKey: 'POST /v1/things/',
      rawPath: '/v1/things/',
      requestContext: { requestId: 'req-1', http: { method: 'POST' } },
    } as unknown as APIGatewayProxyEventV2;
    const ok = publicHandler(async () => {
      countMetric('ReferralsCreated');
      return { statusCode: 200, body: '{}' };
    });
    expect((await ok(event, context)).statusCode).toBe(200);
    expect(emf()).toEqual([expect.objectContaining({ ReferralsCreated: 1 })]);

    written.length = 0;
    const failing = publicHandler(async () => {
      countMetric('Conversions');
      throw new Error('after the commit');
    });
    expect((await failing(event, context)).statusCode).toBe(500);
    expect(emf()).toEqual([expect.objectContaining({ Conversions: 1 })]);
  });

  it('sqsWorker: once per batch, failed records included', async () => {
    const handler = sqsWorker<{ account_id: string; fail?: boolean }>('rewards', async (message) => {
      countMetric('CreditsApplied');
      if (message.fail) throw new Error('provider down');
    });
    const records = [{ account_id: 'a1' }, { account_id: 'a2', fail: true }].map((body, i) => ({
      messageId: `m-${i}`,
      body: JSON.stringify(body),
      attributes: {},
    }));
    const out = await handler({ Records: records } as unknown as SQSEvent, context);
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    expect(emf()).toEqual([expect.objectContaining({ CreditsApplied: [1, 1] })]);
  });

  it('scheduledJob: after a run that throws', async () => {
    const job = scheduledJob('webhook-sweep', async () => {
      countMetric('OutgoingWebhookFailures');
      throw new Error('table unavailable');
    });
    await expect(job({}, context)).rejects.toThrow('table unavailable');
    expect(emf()).toEqual([expect.objectContaining({ OutgoingWebhookFailures: 1 })]);
  });
});
