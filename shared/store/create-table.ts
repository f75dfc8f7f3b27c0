// Creates the table from `tableSchema` when it is missing: used by the local runtime, the operator
// CLI against DynamoDB Local, and the test setup. The CDK stack builds the same schema in AWS.
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { tableSchema } from './table';

export async function ensureTable(client: DynamoDBClient, name: string): Promise<'created' | 'exists'> {
  try {
    await client.send(new DescribeTableCommand({ TableName: name }));
    return 'exists';
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
  const keyAttrs = new Set<string>([tableSchema.partitionKey, tableSchema.sortKey]);
  for (const g of tableSchema.globalSecondaryIndexes) {
    keyAttrs.add(g.partitionKey);
    keyAttrs.add(g.sortKey);
  }
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...keyAttrs].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: tableSchema.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableSchema.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: tableSchema.globalSecondaryIndexes.map((g) => ({
        IndexName: g.indexName,
        KeySchema: [
          { AttributeName: g.partitionKey, KeyType: 'HASH' },
          { AttributeName: g.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: name });
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: { AttributeName: tableSchema.ttlAttribute, Enabled: true },
    }),
  );
  return 'created';
}
