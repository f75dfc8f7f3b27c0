// The CDK app (`npx cdk synth`, `npx cdk deploy --all`): data in one stack, compute in another.
// Synthesizes offline: no lookups, no context that needs AWS. Without CDK_DEFAULT_ACCOUNT/REGION
// the stacks are environment-agnostic and deploy to the CLI's account and region.
import { App } from 'aws-cdk-lib';
import { limitsFromContext, RefloopApiStack } from './api-stack';
import { RefloopStatefulStack } from './stateful-stack';

const app = new App();
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };

const stateful = new RefloopStatefulStack(app, 'RefloopStateful', {
  env,
  description: 'Refloop data: DynamoDB table (retained on delete)',
});
new RefloopApiStack(app, 'RefloopApi', {
  env,
  description: 'Refloop compute: Lambda functions and HTTP API',
  table: stateful.table,
  // The verified SES identity member emails are sent from: `npx cdk deploy --all -c emailIdentity=mail.example.com`.
  emailIdentity: app.node.tryGetContext('emailIdentity') as string | undefined,
  // `-c apiThrottleRate=1000 -c apiThrottleBurst=2000 -c workerReservedConcurrency=10` (defaults in api-stack.ts).
  ...limitsFromContext(app),
});

