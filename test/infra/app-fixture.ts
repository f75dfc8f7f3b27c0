// The app as `cdk deploy` builds it (createStacks with a dashboard, an alarm address and an email identity),
// made once per test file and shared by the suites that only read it (./headroom.cases.ts,
// ./monitoring.cases.ts; ./cdk.test.ts runs them in one file). A suite that adds constructs builds its own.
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { createStacks, type RefloopStacks } from '../../infra/cloud/stacks';

let shared: RefloopStacks | undefined;

export function deployedStacks(): RefloopStacks {
  shared ??= createStacks(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), {
    // web/dist is built by the test run's global setup (test/support/global-setup.ts).
    dashboardDir: join(__dirname, '..', '..', 'web', 'dist'),
    alarmEmail: 'oncall@example.com',
    emailIdentity: 'mail.example.com',
  });
  return shared;
}
