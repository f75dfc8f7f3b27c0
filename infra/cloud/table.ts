// The DynamoDB table in AWS, built from the same `tableSchema` the local runtime and the tests use.
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { tableSchema } from '../../shared/store/table';

const stringKey = (name: string) => ({ name, type: AttributeType.STRING });

/**
 * On-demand, point-in-time recovery, TTL, both GSIs projecting ALL. The table keeps its data whatever
 * happens to the stack: it is retained when removed from the stack and protected against deletion.
 * No physical name, so several stages can live in one account; the stack outputs it.
 */
export function createTable(scope: Construct, id: string): TableV2 {
  return new TableV2(scope, id, {
    partitionKey: stringKey(tableSchema.partitionKey),
    sortKey: stringKey(tableSchema.sortKey),
    globalSecondaryIndexes: tableSchema.globalSecondaryIndexes.map((g) => ({
      indexName: g.indexName,
      partitionKey: stringKey(g.partitionKey),
      sortKey: stringKey(g.sortKey),
      projectionType: ProjectionType.ALL,
    })),
    timeToLiveAttribute: tableSchema.ttlAttribute,
    billing: Billing.onDemand(),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    // The table holds each account's Paddle vendor auth code: encrypt it with the account's AWS-managed
    // KMS key (aws/dynamodb), so every use of the key is in CloudTrail, rather than an AWS-owned key.
    encryption: TableEncryptionV2.awsManagedKey(),
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
}
