// Everything that holds data (the table, and the KMS key its secrets are encrypted with), apart from the
// compute in RefloopApiStack, so functions and routes can be redeployed or torn down without touching data.
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { createSecretsKey } from './secrets-key';
import { createTable } from './table';

export class RefloopStatefulStack extends Stack {
  readonly table: TableV2;
  /** Encrypts provider and webhook signing secrets in the application (./secrets-key.ts); retained like the table. */
  readonly secretsKey: Key;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.table = createTable(this, 'Table');
    this.secretsKey = createSecretsKey(this, 'SecretsKey');
    // The operator CLI needs the physical name: TABLE_NAME=<this> npm run admin -- ...
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'DynamoDB table (TABLE_NAME)' });
    // ... and the key to write provider secrets the functions can read: SECRETS_KMS_KEY_ID=<this>.
    new CfnOutput(this, 'SecretsKeyArn', {
      value: this.secretsKey.keyArn,
      description: 'KMS key of the stored secrets (SECRETS_KMS_KEY_ID)',
    });
  }
}
