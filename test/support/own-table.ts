// A table of the test file's own in the run's shared DynamoDB Local (each test file has its own copy of
// process.env, so this changes nothing for the other files).
//
// For files that Scan the table to check what a request wrote (DynamoDB Local answers a Scan by reading
// the whole table, on one SQLite thread that every other file's requests queue behind): on the shared
// table their Scans grow with everything the files before them wrote, and a run that ordered the big
// writers first took minutes instead of seconds for every file at once. Also for files that run the
// background sync, which queues every account of the table (test/support/paddle-tenant.ts).
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { resetConfig } from '../../shared/config';
import { ensureTable } from '../../shared/store/create-table';

export async function useOwnTable(): Promise<void> {
  const name = `refloop-test-${randomUUID().slice(0, 8)}`;
  const client = new DynamoDBClient({
    endpoint: process.env.DYNAMODB_ENDPOINT,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await ensureTable(client, name);
  } finally {
    client.destroy();
  }
  process.env.TABLE_NAME = name;
  resetConfig();
}
