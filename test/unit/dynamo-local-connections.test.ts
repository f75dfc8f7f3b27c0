// DYNAMODB_LOCAL_CONNECTIONS (shared/config.ts, infra/local/start.ts): the client keeps at most that many calls
// in flight to a local endpoint, the others wait in it. Checked against a small HTTP server that answers every
// call as DynamoDB would (an empty GetItem) after a delay and counts the calls it holds at once.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { createDynamoClient } from '../../shared/store/client';

let server: Server;
let endpoint: string;
let open = 0;
let peak = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    open++;
    peak = Math.max(peak, open);
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        open--;
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end('{}');
      }, 150);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function peakOf(localConnections: number | undefined, calls: number): Promise<number> {
  peak = 0;
  const client = createDynamoClient({ endpoint, region: 'us-east-1', ...(localConnections === undefined ? {} : { localConnections }) });
  try {
    const out = await Promise.all(
      Array.from({ length: calls }, (_, i) => client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: `k${i}` } } }))),
    );
    expect(out.every((o) => o.Item === undefined)).toBe(true);
  } finally {
    client.destroy();
  }
  return peak;
}

test('a local endpoint with localConnections 2 has at most 2 calls in flight; every call is answered', async () => {
  expect(await peakOf(2, 8)).toBe(2);
});

test("without it the SDK's own pool (50) lets all of them go at once", async () => {
  expect(await peakOf(undefined, 8)).toBe(8);
  expect(await peakOf(0, 8)).toBe(8);
});
