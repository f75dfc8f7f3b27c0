// The SQS consumer wrapper every worker uses: parses each record, runs the worker's function on it,
// and reports the records that failed (partial batch response), so SQS redelivers only those and
// moves a message that keeps failing to the DLQ after maxReceiveCount receives.
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { errorFields, invocationKeys, log, withLogKeys } from '../log';
import { flushMetrics } from '../metrics';
import { handlerAnnotations, traced } from '../tracing';

export class PoisonMessageError extends Error {
  override readonly name = 'PoisonMessageError';
}

export type RecordHandler<M> = (message: M, record: SQSRecord) => Promise<void>;

/**
 * Records of a batch run concurrently, at most `concurrency` at a time. A record that throws is
 * reported in `batchItemFailures`; the others are acknowledged. A body that is not JSON is poison:
 * it fails every time and so ends in the DLQ after maxReceiveCount receives. Every line logged while a
 * record runs carries the queue, the message id and the message's account, so does the failure line.
 * When the batch is done (however it ends) its metrics are printed (shared/metrics.ts); in a sampled
 * X-Ray trace the batch is a `## handler` subsegment and each record a `## record` one (shared/tracing.ts).
 */
export function sqsWorker<M>(name: string, handle: RecordHandler<M>, concurrency = 5) {
  return async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    const records = [...(event.Records ?? [])];
    const keys = invocationKeys(context);
    const invocation = { ...keys, queue: name };
    const run = (record: SQSRecord) => {
      const accountId = accountOf(record.body);
      return withLogKeys({ ...invocation, message_id: record.messageId, ...(accountId ? { account_id: accountId } : {}) }, () =>
        traced(
          '## record',
          { queue: name, account_id: accountId },
          async () => {
            try {
              let message: M;
              try {
                message = JSON.parse(record.body) as M;
              } catch {
                throw new PoisonMessageError('Message body is not JSON');
              }
              await handle(message, record);
              return true;
            } catch (err) {
              log('error', `${name}: record failed`, { receive_count: record.attributes?.ApproximateReceiveCount, ...errorFields(err) });
              failures.push({ itemIdentifier: record.messageId });
              return false;
            }
          },
          (ok) => (ok ? {} : { fault: true }),
        ),
      );
    };
    try {
      return await traced(
        '## handler',
        handlerAnnotations(keys, { queue: name, records: records.length }),
        async () => {
          const lanes = Array.from({ length: Math.min(concurrency, records.length) }, async () => {
            for (let record = records.shift(); record; record = records.shift()) await run(record);
          });
          await Promise.all(lanes);
          return { batchItemFailures: failures };
        },
        (out) => (out.batchItemFailures.length > 0 ? { fault: true, annotations: { failed: out.batchItemFailures.length } } : {}),
      );
    } finally {
      flushMetrics();
    }
  };
}

/** One record of a batch handed whole to a batch handler: its parsed message. */
export interface BatchEntry<M> {
  message: M;
  record: SQSRecord;
}

/**
 * A handler of a whole batch: it answers the records that failed (message id -> the error), every other
 * record is acknowledged. It must never throw for one record: what it cannot apply it lists.
 */
export type BatchHandler<M> = (entries: BatchEntry<M>[]) => Promise<Map<string, unknown>>;

/**
 * The batch variant of sqsWorker, for a worker that applies the records of a batch together
 * (shared/flows/provider-batch.ts): the same partial batch response (a failed record is redelivered
 * alone), poison bodies (not JSON) fail on their own, one line per failed record with its message id and
 * account, and the batch's metrics and trace. A handler that throws fails every record it was given.
 */
export function sqsBatchWorker<M>(name: string, handleBatch: BatchHandler<M>) {
  return async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    const records = event.Records ?? [];
    const keys = invocationKeys(context);
    const invocation = { ...keys, queue: name };
    try {
      return await withLogKeys(invocation, () =>
        traced(
          '## handler',
          handlerAnnotations(keys, { queue: name, records: records.length }),
          async () => {
            const failed = new Map<string, unknown>();
            const entries: BatchEntry<M>[] = [];
            for (const record of records) {
              try {
                entries.push({ message: JSON.parse(record.body) as M, record });
              } catch {
                failed.set(record.messageId, new PoisonMessageError('Message body is not JSON'));
              }
            }
            if (entries.length > 0) {
              try {
                for (const [id, err] of await handleBatch(entries)) failed.set(id, err);
              } catch (err) {
                for (const e of entries) failed.set(e.record.messageId, err);
              }
            }
            const failures: SQSBatchResponse['batchItemFailures'] = [];
            for (const record of records) {
              if (!failed.has(record.messageId)) continue;
              const accountId = accountOf(record.body);
              log('error', `${name}: record failed`, {
                message_id: record.messageId,
                ...(accountId ? { account_id: accountId } : {}),
                receive_count: record.attributes?.ApproximateReceiveCount,
                ...errorFields(failed.get(record.messageId)),
              });
              failures.push({ itemIdentifier: record.messageId });
            }
            return { batchItemFailures: failures };
          },
          (out) => (out.batchItemFailures.length > 0 ? { fault: true, annotations: { failed: out.batchItemFailures.length } } : {}),
        ),
      );
    } finally {
      flushMetrics();
    }
  };
}

/**
 * A scheduled job's handler (EventBridge Scheduler -> Lambda): its lines carry the job's name and the
 * invocation's keys, its metrics are printed when it ends, and a sampled trace gets its `## handler`.
 */
export function scheduledJob<R>(name: string, run: () => Promise<R>) {
  return async (_event?: unknown, context?: Context): Promise<R> => {
    const keys = invocationKeys(context);
    const invocation = { ...keys, job: name };
    try {
      return await withLogKeys(invocation, () =>
        traced('## handler', handlerAnnotations(keys, { job: name }), async () => {
          try {
            return await run();
          } catch (err) {
            log('error', `${name}: job failed`, errorFields(err, true));
            throw err;
          }
        }),
      );
    } finally {
      flushMetrics();
    }
  };
}

/** The account a message is about (`account_id`, or the SES tags of an email event), for the log lines. */
function accountOf(body: string): string | undefined {
  try {
    const m = JSON.parse(body) as { account_id?: unknown; detail?: { mail?: { tags?: { account_id?: unknown[] } } } };
    const id = typeof m.account_id === 'string' ? m.account_id : m.detail?.mail?.tags?.account_id?.[0];
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
