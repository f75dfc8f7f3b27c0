// REFLOOP_CALL_LOG (infra/local/call-log.ts) on the real local pollers, the real local SQS and DynamoDB
// Local: a worker's DynamoDB calls are logged with its name, a call made outside any batch without one.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { QueueWorker } from '../../functions/workers';
import { startCallLog } from '../../infra/local/call-log';
import type { Pollers } from '../../infra/local/pollers';
import { getItem } from '../../shared/store/ops';
import { keys } from '../../shared/store/table';
import { parseCallLog } from '../bench/call-log';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

const dir = mkdtempSync(join(tmpdir(), 'refloop-call-log-'));
const file = join(dir, 'calls.jsonl');
const WORKER: QueueWorker = {
  name: 'CallLogWorker',
  entry: 'functions/workers/does-not-exist.ts',
  queue: 'rewards',
  timeoutSeconds: 5,
  batchSize: 10,
  sends: [],
  providerSecrets: false,
};
let queues: TestQueues;
let pollers: Pollers;
let stopLog: () => void;
let accountId: string;

beforeAll(async () => {
  ({ accountId } = await newAccount());
  queues = await startTestQueues();
  stopLog = startCallLog(file);
  pollers = startTestPollers(queues, {
    workers: [WORKER],
    handlers: {
      // One GetItem per record, inside the worker's batch.
      [WORKER.name]: async (event) => {
        for (const r of event.Records) await getItem(keys.member(accountId, JSON.parse(r.body).member));
        return { batchItemFailures: [] };
      },
    },
  });
});

afterAll(async () => {
  stopLog?.();
  await pollers?.stop();
  await queues?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('names the worker whose batch made a call, and no worker for a call made outside one', async () => {
  await getItem(keys.member(accountId, 'outside'));
  await queues.client.send(
    new SendMessageCommand({ QueueUrl: queues.queueUrls.rewards, MessageBody: JSON.stringify({ member: 'inside' }) }),
  );
  await queues.drained(['rewards']);
  // The log is written once a second.
  const lines = await pollUntil(
    () => {
      try {
        const all = parseCallLog(readFileSync(file, 'utf8'));
        return all.some((l) => l.caller === WORKER.name) ? all : null;
      } catch {
        return null;
      }
    },
    { timeoutMs: 15_000 },
  );
  const gets = lines.filter((l) => l.op === 'GetItem');
  expect(gets.filter((l) => l.caller === WORKER.name)).toHaveLength(1);
  expect(gets.some((l) => l.caller === undefined)).toBe(true);
  for (const l of lines) {
    expect(l.pid).toBe(process.pid);
    expect(l.ms).toBeGreaterThanOrEqual(0);
  }
});
