// The raw TransactWriteItems rate of DynamoDB Local, measured beside the webhook drains so each drain's
// applied rate can be given as a ratio to it (issue 29: the drain's "applied / raw TransactWriteItems"
// ratio, both from the same run). The same shape and loops as test/bench/load.ts's raw TransactWriteItems:
// 10 closed loops of a 4-item transaction (2 conditional Puts of new items, an ADD on one item per lane,
// an ADD on one shared counter), with the service's own SDK client configuration, under keys of its own.
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoClient } from '../../shared/store/client';
import type { BenchRuntime } from './harness';

export interface RawTransactRate {
  /** Completed transactions per second (all lanes). */
  opsPerSecond: number;
  ops: number;
  errors: number;
  seconds: number;
}

/** `lanes` concurrent closed loops of `op` for `seconds`: completed ops per second. */
async function closedLoop(lanes: number, seconds: number, op: (lane: number) => Promise<unknown>): Promise<RawTransactRate> {
  let ops = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (performance.now() < deadline) {
        try {
          await op(lane);
          ops++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { opsPerSecond: ops / elapsed, ops, errors, seconds: elapsed };
}

/**
 * The 4-item transaction of POST /v1/referrals/'s shape, under `benchPk`: a referral-sized item and a claim
 * (conditional Puts of new items), an ADD on the lane's member item, an ADD on one shared counter. The load
 * section's raw row and the drain's raw rate both send it.
 */
export function referralShapedTransaction(
  table: string,
  benchPk: string,
  referral: Record<string, unknown>,
  n: number,
  lane: number,
): TransactWriteCommand {
  return new TransactWriteCommand({
    TransactItems: [
      {
        Put: {
          TableName: table,
          Item: {
            ...referral,
            pk: `${benchPk}#REFERRAL`,
            sk: `r${n}`,
            gsi1pk: `${benchPk}#BY_MEMBER#${lane}`,
            gsi1sk: `r${n}`,
            user_identifier: `raw-${n}`,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: table,
          Item: { pk: `${benchPk}#CLAIM#raw-${n}`, sk: 'CLAIM', type: 'Bench', referral_id: `r${n}`, member_id: String(lane) },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          TableName: table,
          Key: { pk: `${benchPk}#MEMBER`, sk: String(lane) },
          UpdateExpression: 'ADD referrals :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
      {
        Update: {
          TableName: table,
          Key: { pk: benchPk, sk: 'COUNT#referrals' },
          UpdateExpression: 'SET #type = :type ADD n :one',
          ExpressionAttributeNames: { '#type': 'type' },
          ExpressionAttributeValues: { ':one': 1, ':type': 'Counter' },
        },
      },
    ],
  });
}

let client: DynamoDBDocumentClient | undefined;
let seq = 0;

/** The raw 4-item TransactWriteItems rate right now (10 closed loops for `seconds`, after a 1 s warm-up). */
export async function measureRawTransactRate(bench: BenchRuntime, seconds = 4, lanes = 10): Promise<RawTransactRate> {
  client ??= DynamoDBDocumentClient.from(createDynamoClient({ endpoint: bench.runtime.dynamodbEndpoint, region: 'us-east-1' }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const doc = client;
  const table = bench.tableName;
  const benchPk = `BENCHRAWDRAIN#${process.pid}`;
  for (let lane = 0; lane < lanes; lane++)
    await doc.send(new PutCommand({ TableName: table, Item: { pk: `${benchPk}#MEMBER`, sk: String(lane), type: 'Bench', referrals: 0 } }));
  // A referral-sized item (the load section Puts a copy of a seeded referral).
  const referral = {
    type: 'Referral',
    member_id: '0192a4b5c6d7e8f90123456789abcdef',
    campaign_id: '0192a4b5c6d7e8f90123456789abcde0',
    created_at: Math.floor(Date.now() / 1000),
    created_ms: Date.now(),
    is_converted: false,
    subscription: null,
    rewards: [],
    source: 'api',
  };
  const op = (lane: number) => {
    const n = seq++;
    return doc.send(referralShapedTransaction(table, benchPk, { ...referral, id: `r${n}` }, n, lane));
  };
  await closedLoop(lanes, 1, op);
  return closedLoop(lanes, seconds, op);
}
