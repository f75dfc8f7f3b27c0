// Business metrics in CloudWatch's Embedded Metric Format, through AWS Lambda Powertools Metrics.
//
// The metric contract (the stack's dashboard and alarms are built on it; do not rename):
//   namespace `Refloop` (POWERTOOLS_METRICS_NAMESPACE), default dimension `service` = `refloop`
//   (POWERTOOLS_SERVICE_NAME), and
//   - ReferralsCreated         Count                          a referral written (not a replayed create)
//   - Conversions              Count                          a referral marked converted (by the API or a provider event)
//   - RewardsCreated           Count  RewardType              rewards written by an evaluation (credit | commission)
//   - CreditsApplied           Count                          a credit recorded as applied at the provider
//   - ProviderCalls            Count  Provider                one provider API call (its retries included)
//   - ProviderErrors           Count  Provider                a provider call that failed for good (unreachable,
//   - ProviderErrorsByCall     Count  Provider, Call            timeout, 429/5xx past its retry budget, unreadable answer)
//   - WebhookLag               Milliseconds  Provider          intake's acceptance -> applied by the provider-events worker
//   - OutgoingWebhookFailures  Count                          a failed delivery attempt to a customer's endpoint
//   (DLQ depth is SQS's own ApproximateNumberOfMessagesVisible.)
//
// Each emission is made once per business event, after the write that records it committed (the callers
// in shared/flows/, shared/webhooks/deliver.ts and shared/providers/retry.ts say where).
//
// Metrics are kept in memory and printed once per invocation by `flushMetrics()`, which publicHandler,
// the SQS worker wrapper and the scheduled-job wrapper call in a `finally` (a failed invocation's metrics
// are printed too). Every distinct set of dimensions has its own Powertools instance (its dimensions are
// that instance's default dimensions, never added per call), so one metric's dimensions never leak onto
// another's; each set is one EMF line per flush, with repeated values as an EMF value array.
//
// Printed only in Lambda (AWS_LAMBDA_FUNCTION_NAME set) or when REFLOOP_METRICS=1; REFLOOP_METRICS=0 turns
// them off in Lambda too. Under `npm start` and in tests nothing is kept or printed, so nobody's console
// fills with EMF JSON. The environment is read on every call (a test file may set it after import).
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ProviderKind } from './billing/port';

export const DEFAULT_NAMESPACE = 'Refloop';
export const DEFAULT_SERVICE = 'refloop';

/** The dimensions each metric of the contract carries, beyond `service`. */
export interface MetricDimensions {
  ReferralsCreated: undefined;
  Conversions: undefined;
  RewardsCreated: { RewardType: 'credit' | 'commission' };
  CreditsApplied: undefined;
  ProviderCalls: { Provider: ProviderKind };
  ProviderErrors: { Provider: ProviderKind };
  ProviderErrorsByCall: { Provider: ProviderKind; Call: string };
  WebhookLag: { Provider: ProviderKind };
  OutgoingWebhookFailures: undefined;
  /** A stored provider or webhook secret that does not decrypt (shared/secrets): an operator must set it again. */
  SecretDecryptionFailures: undefined;
}

export type MetricName = keyof MetricDimensions;
export type TimingMetricName = 'WebhookLag';
export type CountMetricName = Exclude<MetricName, TimingMetricName>;

/** `countMetric('Conversions')`, `countMetric('RewardsCreated', { RewardType: 'credit' }, 2)`. */
type CountArgs<N extends CountMetricName> = MetricDimensions[N] extends undefined
  ? [value?: number]
  : [dimensions: MetricDimensions[N], value?: number];

export function metricsEnabled(): boolean {
  const flag = process.env.REFLOOP_METRICS;
  if (flag === '1' || flag === 'true') return true;
  if (flag === '0' || flag === 'false') return false;
  return Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);
}

/** One Powertools instance per dimension set ('' = `service` alone). */
const instances = new Map<string, Metrics>();

function instanceFor(dimensions: Record<string, string> | undefined): Metrics {
  const entries = Object.entries(dimensions ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  const key = entries.map(([k, v]) => `${k}=${v}`).join('\u0000');
  let metrics = instances.get(key);
  if (!metrics) {
    metrics = new Metrics({
      namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || DEFAULT_NAMESPACE,
      serviceName: process.env.POWERTOOLS_SERVICE_NAME || DEFAULT_SERVICE,
      ...(entries.length > 0 ? { defaultDimensions: Object.fromEntries(entries) } : {}),
    });
    instances.set(key, metrics);
  }
  return metrics;
}

function record(
  name: MetricName,
  unit: (typeof MetricUnit)[keyof typeof MetricUnit],
  value: number,
  dimensions: Record<string, string> | undefined,
): void {
  if (!metricsEnabled() || !Number.isFinite(value)) return;
  try {
    instanceFor(dimensions).addMetric(name, unit, value);
  } catch {
    // A metric must never fail the business operation it describes.
  }
}

/** Counts `value` (default 1) of a Count metric of the contract. */
export function countMetric<N extends CountMetricName>(name: N, ...args: CountArgs<N>): void {
  const [first, second] = args as [unknown, unknown];
  const dimensions = typeof first === 'object' && first !== null ? (first as Record<string, string>) : undefined;
  const value = typeof first === 'number' ? first : typeof second === 'number' ? second : 1;
  record(name, MetricUnit.Count, value, dimensions);
}

/** Records a duration in milliseconds (negative durations, from clock skew, are recorded as 0). */
export function timingMetric<N extends TimingMetricName>(name: N, dimensions: MetricDimensions[N], ms: number): void {
  record(name, MetricUnit.Milliseconds, Math.max(0, Math.round(ms)), dimensions as unknown as Record<string, string>);
}

/** Prints what was recorded since the last flush, one EMF line per dimension set. Never throws. */
export function flushMetrics(): void {
  for (const metrics of instances.values()) {
    try {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    } catch {
      metrics.clearMetrics();
    }
  }
}

/** Tests: forget every instance (and anything recorded), so a changed environment is read again. */
export function resetMetrics(): void {
  for (const metrics of instances.values()) metrics.clearMetrics();
  instances.clear();
}

/** Runs an invocation and prints its metrics when it ends, however it ends. */
export async function withMetrics<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    flushMetrics();
  }
}
