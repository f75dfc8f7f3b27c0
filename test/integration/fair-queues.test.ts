// Fair queues (issue 29): every message of a per-tenant queue carries its account as MessageGroupId
// (shared/queue/queues.ts messageGroupId), and the local SQS serves groups fairly (infra/local/fair-queue.ts),
// as AWS SQS fair queues do. A noisy account's backlog of 500-2,000 messages does not hold up a quiet account's
// 20: they are received within a few receives, counted by receives (not by time). Every message of both is
// received once and deleted; a failing record still goes to the DLQ with its group, and the operator's
// redrive sends it back with it.
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import type { QueueWorker } from '../../functions/workers';
import type { Pollers } from '../../infra/local/pollers';
import { localFairQueues } from '../../infra/local/sqs';
import { redrive } from '../../infra/ops';
import { setLogLevel } from '../../shared/log';
import { publish, publishAll } from '../../shared/queue/publish';
import type { QueueName, RewardMessage, SyncAccountMessage } from '../../shared/queue/queues';
import { pollUntil } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

const NOISY = 'acct_noisy';
const QUIET = 'acct_quiet';
const BACKLOG = 2_000;
const QUIET_COUNT = 20;
/** The local fair queues' window in this file: what infra/local/sqs.ts gives a worker of batch size 10 and one lane. */
const WINDOW = 20;

let queues: TestQueues;
let stderr: jest.SpyInstance;

beforeAll(async () => {
  // The poison record's failures are logged by design (JSON lines on stderr), silently here.
  setLogLevel('DEBUG');
  stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  queues = await startTestQueues({ visibilityTimeoutSeconds: 1, maxReceiveCount: 2, fairWindow: WINDOW });
});

afterAll(async () => {
  await queues?.stop();
  stderr?.mockRestore();
});

const page = (account: string, n: number): SyncAccountMessage => ({
  kind: 'sync-account',
  account_id: account,
  state: 'live',
  page: n,
  started_at: 1,
});
const evaluate = (account: string, n: number): RewardMessage => ({
  kind: 'evaluate-referral',
  account_id: account,
  referral_id: `ref_${n}`,
});
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('fair queues on the local SQS (the real SQS client)', () => {
  it("receives a quiet account's messages within a few receives of a noisy account's backlog, each once", async () => {
    const queue: QueueName = 'rewards';
    // A quarter of the pollers' backlog below: the same few receives, in a quarter of the time.
    const BACKLOG = 500;
    await publishAll(
      queue,
      range(BACKLOG).map((i) => evaluate(NOISY, i)),
    );
    await publishAll(
      queue,
      range(QUIET_COUNT).map((i) => evaluate(QUIET, i)),
    );
    // Held messages count as waiting, as SQS counts its whole backlog.
    expect(await queues.count(queue)).toBe(BACKLOG + QUIET_COUNT);
    expect(localFairQueues(queues.endpoint)?.[queue].held()).toBe(BACKLOG + QUIET_COUNT - WINDOW);

    const seen = new Map<string, number>();
    let receives = 0;
    let quietDoneAt: number | undefined;
    while (seen.size < BACKLOG + QUIET_COUNT && receives < 1_000) {
      const out = await queues.client.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.queueUrls[queue],
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 30,
          AttributeNames: ['All'],
        }),
      );
      receives++;
      const messages = out.Messages ?? [];
      for (const m of messages) {
        const body = JSON.parse(m.Body ?? '') as RewardMessage & { referral_id: string };
        // The group is the account, on every message.
        expect(m.Attributes?.MessageGroupId).toBe(body.account_id);
        const key = `${body.account_id}/${body.referral_id}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      if (quietDoneAt === undefined && range(QUIET_COUNT).every((i) => seen.has(`${QUIET}/ref_${i}`))) quietDoneAt = receives;
      if (messages.length > 0)
        await queues.client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queues.queueUrls[queue],
            Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
          }),
        );
    }
    // In arrival order the quiet account's messages would come after 50 receives of 10; here the window of
    // visible messages (20) and then the quiet messages themselves: 4 to 6 receives.
    expect(quietDoneAt).toBeDefined();
    expect(quietDoneAt).toBeLessThanOrEqual(Math.ceil((WINDOW + QUIET_COUNT) / 10) + 2);
    expect(seen.size).toBe(BACKLOG + QUIET_COUNT);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(await queues.count(queue)).toBe(0);
    expect(localFairQueues(queues.endpoint)?.[queue].groups()).toEqual({});
  });

  it('leaves a message without a group (sent before the groups) to the queue as before, and a purge drops held messages', async () => {
    const queue: QueueName = 'fraud';
    await publishAll(
      queue,
      range(50).map((i) => ({ kind: 'screen' as const, account_id: NOISY, event_type: 'referral.created', subject_id: `r${i}` })),
    );
    const legacy = JSON.stringify({ kind: 'screen', account_id: QUIET, event_type: 'referral.created', subject_id: 'legacy' });
    await queues.client.send(new SendMessageCommand({ QueueUrl: queues.queueUrls[queue], MessageBody: legacy }));
    // Straight into the queue, behind the window's 20 only (not behind the 30 held): received within 3 receives.
    const received: string[] = [];
    let legacyGroup: string | undefined = 'none';
    for (let i = 0; i < 3; i++) {
      const out = await queues.client.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.queueUrls[queue],
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 30,
          AttributeNames: ['All'],
        }),
      );
      for (const m of out.Messages ?? []) {
        received.push(m.Body ?? '');
        if (m.Body === legacy) legacyGroup = m.Attributes?.MessageGroupId;
      }
    }
    expect(received).toContain(legacy);
    expect(legacyGroup).toBeUndefined();
    const rest = await queues.receiveAll(queue);
    expect(received.length + rest.length).toBe(51);
    expect(localFairQueues(queues.endpoint)?.[queue].held()).toBe(0);
    await queues.purge();
    // 50 sends at once: the queue takes the window's 20, whatever the order the sends are answered in.
    await Promise.all(
      range(50).map((i) => publish(queue, { kind: 'screen', account_id: NOISY, event_type: 'referral.created', subject_id: `p${i}` })),
    );
    expect(await queues.count(queue)).toBe(50);
    expect(localFairQueues(queues.endpoint)?.[queue].groups()).toEqual({ [NOISY]: { inQueue: WINDOW, held: 50 - WINDOW } });
    await queues.purge();
    expect(await queues.count(queue)).toBe(0);
    expect(localFairQueues(queues.endpoint)?.[queue].held()).toBe(0);
  });
});

describe('fair queues through the pollers (local event source mapping)', () => {
  const SYNC: QueueWorker = {
    name: 'FairSync',
    entry: 'functions/workers/does-not-exist.ts',
    queue: 'provider-events',
    timeoutSeconds: 5,
    batchSize: 10,
    sends: [],
    providerSecrets: false,
  };
  /** Every invocation's records as `<account>/<page>`, in order. */
  const batches: string[][] = [];
  let pollers: Pollers | undefined;

  afterEach(async () => {
    await pollers?.stop();
    pollers = undefined;
  });

  it("handles the quiet account's messages within a few batches of the noisy backlog, every message once; a failing one goes to the DLQ with its group", async () => {
    let quietSentAtBatch = -1;
    pollers = startTestPollers(queues, {
      workers: [SYNC],
      // Two lanes (Lambda's concurrent batches) share the window of 20.
      concurrency: 2,
      maxReceiveCount: 2,
      handlers: {
        [SYNC.name]: async (event: SQSEvent) => {
          const keys = event.Records.map((r) => {
            const m = JSON.parse(r.body) as SyncAccountMessage;
            return `${m.account_id}/${m.page}`;
          });
          batches.push(keys);
          // The quiet account's messages arrive once the noisy backlog is being drained.
          if (batches.length === 2) {
            quietSentAtBatch = batches.length;
            await publishAll(
              'provider-events',
              range(QUIET_COUNT).map((i) => page(QUIET, i)),
            );
            await publish('provider-events', page(QUIET, -1));
          }
          const failed = event.Records.filter((r) => (JSON.parse(r.body) as SyncAccountMessage).page === -1);
          return { batchItemFailures: failed.map((r) => ({ itemIdentifier: r.messageId })) };
        },
      },
    });
    await publishAll(
      'provider-events',
      range(BACKLOG).map((i) => page(NOISY, i)),
    );
    await queues.drained(['provider-events'], 30_000);

    const handled = batches.flat();
    const quietBatches = batches
      .map((b, i) => (b.some((k) => k.startsWith(`${QUIET}/`) && !k.endsWith('/-1')) ? i : -1))
      .filter((i) => i >= 0);
    // The quiet account's 20 are handled within a few batches of being sent, not after the backlog's 200.
    expect(quietSentAtBatch).toBe(2);
    expect(Math.max(...quietBatches) - quietSentAtBatch).toBeLessThanOrEqual(Math.ceil((WINDOW + QUIET_COUNT) / 10) + 2);
    // Every message handled once (the failing one twice: maxReceiveCount), nothing left behind.
    const once = handled.filter((k) => !k.endsWith('/-1'));
    expect(once.length).toBe(BACKLOG + QUIET_COUNT);
    expect(new Set(once).size).toBe(BACKLOG + QUIET_COUNT);
    expect(handled.filter((k) => k === `${QUIET}/-1`)).toHaveLength(2);

    // The failing record is in the DLQ with its group, and the operator's redrive sends it back with it.
    const dead = await pollUntil(async () => {
      // Looked at without hiding it (visibility 0): the redrive below receives it.
      const got = await queues.client.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.dlqUrls['provider-events'],
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          AttributeNames: ['All'],
        }),
      );
      // (A receive with visibility 0 may return one message several times: local-aws-sqs, see infra/local/sqs.ts.)
      return got.Messages?.length ? [...new Map(got.Messages.map((m) => [m.MessageId, m])).values()] : undefined;
    });
    expect(dead).toHaveLength(1);
    expect(dead[0]?.Attributes?.MessageGroupId).toBe(QUIET);
    await pollers.stop();
    pollers = undefined;
    const moved = await redrive(
      queues.client,
      {
        queue: 'provider-events',
        url: queues.queueUrls['provider-events'],
        dlqUrl: queues.dlqUrls['provider-events'],
      },
      1,
    );
    expect(moved).toBe(1);
    const back = await queues.receiveAll('provider-events');
    expect(back.map((m) => [JSON.parse(m.body).page, m.attributes.MessageGroupId])).toEqual([[-1, QUIET]]);
    expect(await queues.count('provider-events-dlq')).toBe(0);
    expect(localFairQueues(queues.endpoint)?.['provider-events'].groups()).toEqual({});
  }, 45_000);
});
