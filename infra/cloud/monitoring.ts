// The operator's view of the running service, in a stack of its own (RefloopMonitoring), apart from the
// compute it watches: the alarms that are not about one queue, and the CloudWatch dashboard. It reads the API stack's API, queues and alarm topic (cross-stack references).
//
// Alarms (each notifies the alarm topic, and names its runbook section, docs/operations.md#<anchor>):
// - the API's 5xx rate and p99 latency (AWS/ApiGateway, this API's id);
// - Lambda throttles and errors, aggregated over the account and region (AWS/Lambda without FunctionName:
//   one alarm per function would be ~95 alarms; an alarm's metric math takes at most 10 metrics). The
//   dashboard's top-10 widgets name the function;
// - per payment provider, its error rate (ProviderErrors / ProviderCalls) and its webhook lag (p95).
// The DLQ alarms live beside their queues in the API stack (./queue-worker.ts, ./alarms.ts).
//
// Missing data is not breaching anywhere: every metric here is published only when something happens
// (requests, invocations, provider calls, webhooks), so silence is a quiet service, not a broken one. What
// silence could hide (a worker that stopped consuming) shows as queue depth and, after five receives, as
// a DLQ message.
import { CfnOutput, CrossStackReferences, Duration, ReferenceStrength, Stack, type StackProps } from 'aws-cdk-lib';
import {
  type Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { PROVIDER_KINDS } from '../../shared/billing/registry';
import { alarmDescription, notify } from './alarms';
import type { RefloopApiStack } from './api-stack';
import { METRICS_NAMESPACE, SERVICE_NAME } from './function';

/** The business metrics the application emits (shared/metrics.ts; Powertools Metrics, EMF): the contract. */
export const BUSINESS_METRICS = {
  ReferralsCreated: [],
  Conversions: [],
  RewardsCreated: ['RewardType'],
  CreditsApplied: [],
  ProviderCalls: ['Provider'],
  ProviderErrors: ['Provider'],
  ProviderErrorsByCall: ['Provider', 'Call'],
  WebhookLag: ['Provider'],
  OutgoingWebhookFailures: [],
  SecretDecryptionFailures: [],
} as const satisfies Record<string, readonly string[]>;
export type BusinessMetricName = keyof typeof BUSINESS_METRICS;

/** RewardsCreated's RewardType values. */
export const REWARD_TYPES = ['credit', 'commission'] as const;

/** The thresholds, in one place (the runbook quotes them; the infra tests assert them). */
export const THRESHOLDS = {
  /** 5xx responses, % of requests over 5 minutes, once the API served at least `minRequests` in them. */
  api5xx: { percent: 1, minRequests: 20, period: Duration.minutes(5) },
  /** p99 of the API's latency (request in to response out, ms), three 5-minute periods in a row. */
  apiLatencyP99: { ms: 3000, period: Duration.minutes(5), periods: 3 },
  /** Any throttled Lambda invocation in 5 minutes: a throttled API request is a failed one. */
  lambdaThrottles: { count: 0, period: Duration.minutes(5) },
  /** Invocations that failed (uncaught error, timeout, out of memory) in 5 minutes; handlers answer errors themselves. */
  lambdaErrors: { count: 5, period: Duration.minutes(5) },
  /** A provider's failed calls, % of its calls over 10 minutes, from `minCalls` calls on. */
  providerErrors: { percent: 20, minCalls: 5, period: Duration.minutes(10) },
  /** Any stored secret that does not decrypt in 5 minutes: that account's webhooks and provider calls answer 503. */
  secretDecryption: { count: 0, period: Duration.minutes(5) },
  /** p95 of webhook intake -> applied, ms, two 5-minute periods in a row. */
  webhookLagP95: { ms: 5 * 60 * 1000, period: Duration.minutes(5), periods: 2 },
};

/** A metric of the contract: namespace Refloop, dimension service=refloop plus the metric's own. */
export function businessMetric(
  name: BusinessMetricName,
  dimensions: Record<string, string>,
  options: { statistic?: string; period?: Duration; label?: string } = {},
): Metric {
  const expected = [...BUSINESS_METRICS[name]].sort();
  if (JSON.stringify(Object.keys(dimensions).sort()) !== JSON.stringify(expected))
    throw new Error(`${name} has the dimensions ${expected.join(', ') || '(service only)'}`);
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service: SERVICE_NAME, ...dimensions },
    statistic: options.statistic ?? 'Sum',
    period: options.period ?? Duration.minutes(5),
    ...(options.label ? { label: options.label } : {}),
  });
}

export interface RefloopMonitoringStackProps extends StackProps {
  /** The API stack: its HTTP API, queues, EventBridge DLQs, DLQ alarms and alarm topic. */
  api: RefloopApiStack;
}

export class RefloopMonitoringStack extends Stack {
  readonly dashboard: Dashboard;
  /** The alarms of this stack by name (api5xx, apiLatency, lambdaThrottles, lambdaErrors, secretDecryption, providerErrors:<kind>, webhookLag:<kind>). */
  readonly alarms = new Map<string, Alarm>();

  constructor(scope: Construct, id: string, props: RefloopMonitoringStackProps) {
    super(scope, id, props);
    // Like the API stack: CloudFormation exports, so the API stack cannot drop a queue or the API these
    // alarms watch while they still watch it.
    CrossStackReferences.of(this).consume(ReferenceStrength.STRONG);
    const { api: apiStack } = props;
    const api = apiStack.api;
    const topic = apiStack.alarmTopic;
    const add = (key: string, alarm: Alarm) => {
      this.alarms.set(key, notify(alarm, topic));
      return alarm;
    };

    // ---- API ----
    const t5 = THRESHOLDS.api5xx;
    const requests = api.metricCount({ period: t5.period, statistic: 'Sum', label: 'Requests' });
    const serverErrors = api.metricServerError({ period: t5.period, statistic: 'Sum', label: '5xx' });
    const clientErrors = api.metricClientError({ period: t5.period, statistic: 'Sum', label: '4xx' });
    // Below the minimum a handful of failures is no rate worth waking someone for (it reads as 0 %).
    const errorRate = new MathExpression({
      expression: `IF(requests >= ${t5.minRequests}, 100 * FILL(errors, 0) / requests, 0)`,
      usingMetrics: { requests, errors: serverErrors },
      period: t5.period,
      label: '5xx rate (%)',
    });
    add(
      'api5xx',
      errorRate.createAlarm(this, 'ApiServerErrorRateAlarm', {
        alarmDescription: alarmDescription(
          `The HTTP API answered more than ${t5.percent}% 5xx over 5 minutes (at least ${t5.minRequests} requests)`,
          'alarm-api-5xx',
        ),
        threshold: t5.percent,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    const tl = THRESHOLDS.apiLatencyP99;
    const latencyP99 = api.metricLatency({ period: tl.period, statistic: 'p99', label: 'Latency p99' });
    add(
      'apiLatency',
      latencyP99.createAlarm(this, 'ApiLatencyAlarm', {
        alarmDescription: alarmDescription(
          `The HTTP API's p99 latency was over ${tl.ms / 1000} s for ${tl.periods} 5-minute periods in a row`,
          'alarm-api-latency',
        ),
        threshold: tl.ms,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: tl.periods,
        datapointsToAlarm: tl.periods,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    // ---- Lambda (account and region) ----
    const tt = THRESHOLDS.lambdaThrottles;
    const throttles = LambdaFunction.metricAllThrottles({ period: tt.period, statistic: 'Sum', label: 'Throttles' });
    add(
      'lambdaThrottles',
      throttles.createAlarm(this, 'LambdaThrottlesAlarm', {
        alarmDescription: alarmDescription(
          'Lambda throttled invocations in this account and region (all functions) in the last 5 minutes',
          'alarm-lambda-throttles',
        ),
        threshold: tt.count,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    const te = THRESHOLDS.lambdaErrors;
    const errors = LambdaFunction.metricAllErrors({ period: te.period, statistic: 'Sum', label: 'Errors' });
    add(
      'lambdaErrors',
      errors.createAlarm(this, 'LambdaErrorsAlarm', {
        alarmDescription: alarmDescription(
          `At least ${te.count} failed Lambda invocations (uncaught error, timeout) in this account and region in 5 minutes`,
          'alarm-lambda-errors',
        ),
        threshold: te.count,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    // A provider or webhook secret that no longer decrypts (shared/secrets: another key wrote it): the
    // account's webhooks and provider calls answer 503 until an operator sets it again.
    const ts = THRESHOLDS.secretDecryption;
    const secretFailures = businessMetric('SecretDecryptionFailures', {}, { period: ts.period, label: 'Secrets that do not decrypt' });
    add(
      'secretDecryption',
      secretFailures.createAlarm(this, 'SecretDecryptionAlarm', {
        alarmDescription: alarmDescription(
          "A stored provider or webhook secret did not decrypt with the service's key in 5 minutes (that account answers 503)",
          'alarm-secret-decryption',
        ),
        threshold: ts.count,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    // ---- Providers ----
    const tp = THRESHOLDS.providerErrors;
    const tw = THRESHOLDS.webhookLagP95;
    const providerRates: IMetric[] = [];
    const lags: IMetric[] = [];
    for (const provider of PROVIDER_KINDS) {
      const id = provider.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase());
      const calls = businessMetric('ProviderCalls', { Provider: provider }, { period: tp.period });
      const failed = businessMetric('ProviderErrors', { Provider: provider }, { period: tp.period });
      const rate = new MathExpression({
        // Ids unique per provider: the three rates share a graph, where every id must be unique.
        expression: `IF(calls${id} >= ${tp.minCalls}, 100 * FILL(errors${id}, 0) / calls${id}, 0)`,
        usingMetrics: { [`calls${id}`]: calls, [`errors${id}`]: failed },
        period: tp.period,
        label: `${provider} error rate (%)`,
      });
      providerRates.push(rate);
      add(
        `providerErrors:${provider}`,
        rate.createAlarm(this, `${id}ErrorRateAlarm`, {
          alarmDescription: alarmDescription(
            `More than ${tp.percent}% of the calls to ${provider} failed over 10 minutes (at least ${tp.minCalls} calls)`,
            'alarm-provider-errors',
          ),
          threshold: tp.percent,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
      const lag = businessMetric('WebhookLag', { Provider: provider }, { statistic: 'p95', period: tw.period, label: `${provider} p95` });
      lags.push(lag);
      add(
        `webhookLag:${provider}`,
        lag.createAlarm(this, `${id}WebhookLagAlarm`, {
          alarmDescription: alarmDescription(
            `${provider} webhooks took more than ${tw.ms / 60000} minutes (p95) from intake to applied, ${tw.periods} 5-minute periods in a row`,
            'alarm-webhook-lag',
          ),
          threshold: tw.ms,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: tw.periods,
          datapointsToAlarm: tw.periods,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    // ---- The dashboard ----
    const fiveMinutes = Duration.minutes(5);
    const width = 8;
    const graph = (title: string, left: IMetric[], extra: { right?: IMetric[]; stacked?: boolean; w?: number } = {}) =>
      new GraphWidget({
        title,
        left,
        ...(extra.right ? { right: extra.right } : {}),
        width: extra.w ?? width,
        height: 6,
        ...(extra.stacked ? { stacked: true } : {}),
      });
    /** The 10 functions of the region with the most of `metric` (names the function behind an aggregate alarm). */
    const top10 = (metric: string, label: string) =>
      new MathExpression({
        expression: `SORT(SEARCH('{AWS/Lambda,FunctionName} MetricName="${metric}"', 'Sum', 300), SUM, DESC, 10)`,
        usingMetrics: {},
        label,
        period: fiveMinutes,
      });

    const queueWidgets = [...apiStack.queueWorkers.entries()].map(([name, qw]) =>
      graph(`Queue ${name}: depth and DLQ depth`, [
        qw.queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum', label: `${name} visible` }),
        qw.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: 'Maximum',
          label: `${name} DLQ visible`,
        }),
      ]),
    );
    const eventDlqs = graph('EventBridge targets: DLQ depth', [
      apiStack.scheduleDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: 'Maximum',
        label: 'schedules DLQ visible',
      }),
      apiStack.memberEmail.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: 'Maximum',
        label: 'SES events rule DLQ visible',
      }),
    ]);

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: this.stackName,
      defaultInterval: Duration.hours(6),
      widgets: [
        [
          new TextWidget({
            markdown: `# Refloop\nEvery alarm notifies the SNS topic \`${apiStack.stackName}.AlarmTopicArn\` and names its section of the runbook, docs/operations.md. Business metrics: namespace \`${METRICS_NAMESPACE}\`, dimension service=${SERVICE_NAME}.`,
            width: 24,
            height: 2,
          }),
        ],
        [new AlarmStatusWidget({ title: 'Alarms', alarms: [...this.alarms.values(), ...apiStack.deadLetterAlarms], width: 24, height: 4 })],
        [
          graph('API requests, 4xx, 5xx', [requests, clientErrors, serverErrors]),
          graph('API 5xx rate (%)', [errorRate]),
          graph('API latency (ms)', [
            api.metricLatency({ period: fiveMinutes, statistic: 'p50', label: 'p50' }),
            latencyP99,
            api.metricIntegrationLatency({ period: fiveMinutes, statistic: 'p99', label: 'integration p99' }),
          ]),
        ],
        [
          graph('Lambda errors and throttles (account, region)', [errors, throttles], {
            right: [LambdaFunction.metricAllInvocations({ period: fiveMinutes, statistic: 'Sum', label: 'Invocations' })],
          }),
          graph('Top 10 functions by errors', [top10('Errors', 'Errors')]),
          graph('Top 10 functions by throttles', [top10('Throttles', 'Throttles')]),
        ],
        queueWidgets.slice(0, 3),
        queueWidgets.slice(3, 6),
        [...queueWidgets.slice(6), eventDlqs],
        [
          graph('Referrals and conversions', [
            businessMetric('ReferralsCreated', {}, { label: 'Referrals created' }),
            businessMetric('Conversions', {}, { label: 'Conversions' }),
          ]),
          graph('Rewards created by type, credits applied', [
            ...REWARD_TYPES.map((t) => businessMetric('RewardsCreated', { RewardType: t }, { label: `Rewards: ${t}` })),
            businessMetric('CreditsApplied', {}, { label: 'Credits applied' }),
          ]),
          graph('Outgoing webhook failures, secrets that do not decrypt', [
            businessMetric('OutgoingWebhookFailures', {}, { label: 'Failed delivery attempts' }),
            secretFailures,
          ]),
        ],
        [
          graph(
            'Provider calls and errors',
            PROVIDER_KINDS.flatMap((p) => [
              businessMetric('ProviderCalls', { Provider: p }, { label: `${p} calls` }),
              businessMetric('ProviderErrors', { Provider: p }, { label: `${p} errors` }),
            ]),
          ),
          graph('Provider error rate (%), 10 min', providerRates),
          graph('Provider errors by call', [
            new MathExpression({
              expression: `SEARCH('{${METRICS_NAMESPACE},Call,Provider,service} MetricName="ProviderErrorsByCall"', 'Sum', 300)`,
              usingMetrics: {},
              label: 'errors',
              period: fiveMinutes,
            }),
          ]),
        ],
        [graph('Webhook lag, intake to applied (ms, p95)', lags, { w: 24 })],
      ],
    });
    new CfnOutput(this, 'CloudWatchDashboardUrl', {
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${this.dashboard.dashboardName}`,
      description: 'The CloudWatch dashboard: API, Lambda, queues, business metrics',
    });
  }
}
