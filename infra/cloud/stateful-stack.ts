// Everything that holds data (the table; the queues and DLQs next), apart from the compute in
// RefloopApiStack, so functions and routes can be redeployed or torn down without touching data.
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { createTable } from './table';

export class RefloopStatefulStack extends Stack {
  readonly table: TableV2;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.table = createTable(this, 'Table');
    // The operator CLI needs the physical name: TABLE_NAME=<this> npm run admin -- ...
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'DynamoDB table (TABLE_NAME)' });
  }
}
