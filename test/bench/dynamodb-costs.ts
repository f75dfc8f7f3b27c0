// What DynamoDB Local costs per call on its own: a fresh DynamoDB Local on a file store (as npm start runs it,
// in write-ahead-log mode), warm, 4 closed loops from this process with the service's client, each operation's
// rate and DynamoDB Local's CPU per call (from /proc). docs/capacity.md "DynamoDB Local's connections" has a run.
//
//   npx tsx test/bench/dynamodb-costs.ts
//
// DDBCOST_SEED=<n> writes n items first (with a GSI key, 4 lanes of BatchWriteItem) and lists the store's files
// after: the log's size is what infra/local/wal-checkpoint.ts keeps down. DDBCOST_DIR=<dir> puts the store in
// another directory (/dev/shm: tmpfs, where a sync costs nothing); DDBCOST_STORE=memory runs `-inMemory`.
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { startDynamoLocal, freePort } from '../../infra/local/dynamodb';
import { createDynamoClient } from '../../shared/store/client';

const TICK = 100; // clock ticks per second
function cpuOf(pid: number): number {
  // utime + stime (fields 14 and 15 of /proc/<pid>/stat), in clock ticks.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) / TICK) * 1000;
}
function javaPid(): number {
  return Number(execSync(`pgrep -f 'DynamoDBLocal.jar.*-port ${port}'`).toString().trim().split('\n')[0]);
}
let port = 0;
async function main() {
  port = await freePort();
  const dir = mkdtempSync(join(process.env.DDBCOST_DIR ?? tmpdir(), 'ddbcost-'));
  const memory = process.env.DDBCOST_STORE === 'memory';
  const ddb = await startDynamoLocal({ port, path: memory ? null : dir, tableName: 'cost' });
  console.log(`store: ${memory ? 'in memory' : dir}`);
  const pid = javaPid();
  const doc = DynamoDBDocumentClient.from(createDynamoClient({ endpoint: ddb.endpoint, region: 'us-east-1', localConnections: 4 }));
  const T = 'cost';
  const body = {
    type: 'Referral',
    member_id: 'x'.repeat(32),
    campaign_id: 'y'.repeat(32),
    created_at: 1,
    user_identifier: 'someone@example.com',
    rewards: [{ id: 'r', amount: 1234, currency: 'USD', status: 'pending', created_at: 1 }],
    subscription: { id: 'sub_1', email: 'a@b.c', status: 'active' },
    note: 'z'.repeat(400),
  };
  for (let i = 0; i < 300; i++)
    await doc.send(
      new PutCommand({ TableName: T, Item: { pk: 'P', sk: `s${String(i).padStart(5, '0')}`, gsi1pk: 'G', gsi1sk: `s${i}`, ...body } }),
    );
  const seed = Number(process.env.DDBCOST_SEED ?? 0);
  if (seed > 0) {
    const t = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < seed) {
          const from = next;
          next += 25;
          await doc.send(
            new BatchWriteCommand({
              RequestItems: {
                [T]: Array.from({ length: 25 }, (_, j) => ({
                  PutRequest: {
                    Item: {
                      pk: `SEED#${(from + j) % 997}`,
                      sk: `k${from + j}`,
                      gsi1pk: `G${(from + j) % 101}`,
                      gsi1sk: `s${from + j}`,
                      ...body,
                    },
                  },
                })),
              },
            }),
          );
        }
      }),
    );
    console.log(`seeded ${seed} items in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    if (!memory) console.log(execSync(`ls -la ${dir}`).toString().trim());
  }
  const lanes = 4;
  async function measure(name: string, n: number, op: (i: number) => Promise<unknown>) {
    // warm
    let k = 0;
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        while (k < n / 4) await op(k++);
      }),
    );
    const c0 = cpuOf(pid);
    const t0 = performance.now();
    let i = 0;
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        while (i < n) await op(100000 + i++);
      }),
    );
    const ms = performance.now() - t0;
    const cpu = cpuOf(pid) - c0;
    console.log(`${name}: ${(n / (ms / 1000)).toFixed(0)}/s, java CPU ${(cpu / n).toFixed(2)} ms per call`);
  }
  await measure('GetItem', 3000, (i) =>
    doc.send(new GetCommand({ TableName: T, Key: { pk: 'P', sk: `s${String(i % 300).padStart(5, '0')}` } })),
  );
  await measure('BatchGet 5', 2000, (i) =>
    doc.send(
      new BatchGetCommand({
        RequestItems: { [T]: { Keys: [0, 1, 2, 3, 4].map((j) => ({ pk: 'P', sk: `s${String((i * 5 + j) % 300).padStart(5, '0')}` })) } },
      }),
    ),
  );
  await measure('Query 150 (GSI)', 300, () =>
    doc.send(
      new QueryCommand({
        TableName: T,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :p',
        ExpressionAttributeValues: { ':p': 'G' },
        Limit: 150,
      }),
    ),
  );
  await measure('Query 10', 1500, (i) =>
    doc.send(
      new QueryCommand({
        TableName: T,
        KeyConditionExpression: 'pk = :p AND sk >= :s',
        ExpressionAttributeValues: { ':p': 'P', ':s': `s${String(i % 290).padStart(5, '0')}` },
        Limit: 10,
      }),
    ),
  );
  await measure('PutItem', 1500, (i) => doc.send(new PutCommand({ TableName: T, Item: { pk: 'W', sk: `w${i}`, ...body } })));
  const tx = (n: number) => (i: number) =>
    doc.send(
      new TransactWriteCommand({
        TransactItems: Array.from({ length: n }, (_, j) =>
          j === 0
            ? { Put: { TableName: T, Item: { pk: `X${n}`, sk: `x${i}`, ...body }, ConditionExpression: 'attribute_not_exists(pk)' } }
            : {
                Update: {
                  TableName: T,
                  Key: { pk: `C${j}`, sk: `c${i % 8}` },
                  UpdateExpression: 'ADD n :one',
                  ExpressionAttributeValues: { ':one': 1 },
                },
              },
        ),
      }),
    );
  await measure('TWI 1', 1000, tx(1));
  await measure('TWI 4', 1000, tx(4));
  await measure('TWI 8', 800, tx(8));
  await measure('TWI 21', 400, tx(21));
  await ddb.stop();
  rmSync(dir, { recursive: true, force: true });
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
