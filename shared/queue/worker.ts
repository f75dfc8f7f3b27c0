// The SQS consumer wrapper every worker uses: parses each record, runs the worker's function on it,
// and reports the records that failed (partial batch response), so SQS redelivers only those and
// moves a message that keeps failing to the DLQ after maxReceiveCount receives.
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export class PoisonMessageError extends Error {
  override readonly name = 'PoisonMessageError';
}

function log(level: 'info' | 'warn' | 'error', message: string, extra: Record<string, unknown>): void {
  const line = JSON.stringify({ level, message, ...extra });
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.log(line);
}

export type RecordHandler<M> = (message: M, record: SQSRecord) => Promise<void>;

/**
 * Records of a batch run concurrently, at most `concurrency` at a time. A record that throws is
 * reported in `batchItemFailures`; the others are acknowledged. A body that is not JSON is poison:
 * it fails every time and so ends in the DLQ after maxReceiveCount receives.
 */
export function sqsWorker<M>(name: string, handle: RecordHandler<M>, concurrency = 5) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    const records = [...(event.Records ?? [])];
    const run = async (record: SQSRecord) => {
      try {
        let message: M;
        try {
          message = JSON.parse(record.body) as M;
        } catch {
          throw new PoisonMessageError('Message body is not JSON');
        }
        await handle(message, record);
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        log('error', `${name}: record failed`, {
          message_id: record.messageId,
          receive_count: record.attributes?.ApproximateReceiveCount,
          error: e.name,
          reason: e.message,
        });
        failures.push({ itemIdentifier: record.messageId });
      }
    };
    const lanes = Array.from({ length: Math.min(concurrency, records.length) }, async () => {
      for (let record = records.shift(); record; record = records.shift()) await run(record);
    });
    await Promise.all(lanes);
    return { batchItemFailures: failures };
  };
}

export { log as workerLog };
