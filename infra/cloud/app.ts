// The CDK app (`npx cdk synth`, `npx cdk deploy --all`): data in one stack, compute in another.
// Synthesizes offline: no lookups, no context that needs AWS. Without CDK_DEFAULT_ACCOUNT/REGION
// the stacks are environment-agnostic and deploy to the CLI's account and region.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { limitsFromContext, RefloopApiStack } from './api-stack';
import { RefloopStatefulStack } from './stateful-stack';

const app = new App();

// The dashboard is built before synth when its sources changed (web/build.ts; Vite runs in a child process
// because it is an ES module), so `cdk deploy` stays one command.
const root = join(__dirname, '..', '..');
const built = spawnSync(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'web/build.ts', '--if-changed'], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) throw new Error('the dashboard build failed: run npx tsx web/build.ts');
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
  dashboardDir: join(root, 'web', 'dist'),
  // A custom domain in front of the distribution: `-c publicBaseUrl=https://referrals.example.com`.
  publicBaseUrl: app.node.tryGetContext('publicBaseUrl') as string | undefined,
});

