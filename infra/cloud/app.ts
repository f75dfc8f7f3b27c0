// The CDK app (`npx cdk synth`, `npx cdk deploy --all`): data, compute and monitoring in three stacks
// (./stacks.ts; the compute stack's routes and workers are in nested stacks it deploys itself). Synthesizes
// offline: no lookups, no context that needs AWS. Without CDK_DEFAULT_ACCOUNT/REGION the stacks are
// environment-agnostic and deploy to the CLI's account and region.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { limitsFromContext } from './api-stack';
import { createStacks } from './stacks';

const app = new App();

// The dashboard is built before synth when its sources changed (web/build.ts; Vite runs in a child process
// because it is an ES module), so `cdk deploy` stays one command.
const root = join(__dirname, '..', '..');
const built = spawnSync(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'web/build.ts', '--if-changed'], {
  cwd: root,
  stdio: 'inherit',
});
if (built.status !== 0) throw new Error('the dashboard build failed: run npx tsx web/build.ts');
const context = (name: string) => app.node.tryGetContext(name) as string | undefined;

createStacks(app, {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  // The verified SES identity member emails are sent from: `npx cdk deploy --all -c emailIdentity=mail.example.com`
  // (without it, synth warns: member emails cannot be sent).
  emailIdentity: context('emailIdentity'),
  // Subscribes an address to the alarm topic: `-c alarmEmail=oncall@example.com` (AWS emails a confirmation link).
  alarmEmail: context('alarmEmail'),
  // `-c apiThrottleRate=1000 -c apiThrottleBurst=2000 -c workerReservedConcurrency=5` (defaults in api-stack.ts; the
  // reservation is opt-in: it needs an account concurrency quota of 100 + 8 x the reservation, one per queue worker).
  // Each worker's event source concurrency (MaximumConcurrency, 5 by default, reserves nothing): read by the
  // worker construct itself, `-c workerMaxConcurrency=10` for every worker, `-c workerMaxConcurrency.SubscriptionSync=20`
  // for one (./queue-worker.ts; the account quota it needs: docs/operations.md "Fair queues and worker concurrency").
  ...limitsFromContext(app),
  dashboardDir: join(root, 'web', 'dist'),
  // A custom domain in front of the distribution: `-c publicBaseUrl=https://referrals.example.com`.
  publicBaseUrl: context('publicBaseUrl'),
});

// cdk-nag's AWS Solutions checks on every synth: a finding that is not acknowledged (./nag.ts, with its
// reason) fails `cdk synth` and `cdk deploy`, with the report.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
