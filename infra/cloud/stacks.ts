// The app's three stacks, built in one place for the CDK app (./app.ts) and the infra tests, so the tests
// check (and cdk-nag reviews) exactly what `cdk deploy` ships:
// - RefloopStateful: the table and the secrets key (retained);
// - RefloopApi: the HTTP API, queues, dashboard site, the alarm topic and the DLQ alarms, and its nested stacks:
//   one per route group with the routes' functions (./route-groups.ts), one with the workers' and jobs'
//   functions and the schedules (./workers-stack.ts). `cdk deploy --all` deploys them with it;
// - RefloopMonitoring: the other alarms and the CloudWatch dashboard.
import type { App, Environment } from 'aws-cdk-lib';
import { RefloopApiStack, type RefloopApiStackProps } from './api-stack';
import { RefloopMonitoringStack } from './monitoring';
import { type Acknowledged, applyNagSuppressions } from './nag';
import { RefloopStatefulStack } from './stateful-stack';

export type RefloopStacksOptions = Pick<
  RefloopApiStackProps,
  'emailIdentity' | 'alarmEmail' | 'apiThrottle' | 'workerReservedConcurrency' | 'dashboardDir' | 'publicBaseUrl'
> & {
  env?: Environment;
};

export interface RefloopStacks {
  stateful: RefloopStatefulStack;
  api: RefloopApiStack;
  monitoring: RefloopMonitoringStack;
  /** The cdk-nag findings acknowledged on purpose, with their reasons (./nag.ts). */
  acknowledged: Acknowledged[];
}

export function createStacks(app: App, options: RefloopStacksOptions): RefloopStacks {
  const { env, ...apiOptions } = options;
  const stateful = new RefloopStatefulStack(app, 'RefloopStateful', {
    ...(env ? { env } : {}),
    description: 'Refloop data: DynamoDB table and the KMS key of stored secrets (both retained on delete)',
  });
  const api = new RefloopApiStack(app, 'RefloopApi', {
    ...(env ? { env } : {}),
    description: 'Refloop compute: Lambda functions, HTTP API, queues, dashboard site, alarm topic',
    table: stateful.table,
    secretsKey: stateful.secretsKey,
    ...apiOptions,
  });
  const monitoring = new RefloopMonitoringStack(app, 'RefloopMonitoring', {
    ...(env ? { env } : {}),
    description: 'Refloop operations: alarms and the CloudWatch dashboard',
    api,
  });
  const stacks = { stateful, api, monitoring };
  return { ...stacks, acknowledged: applyNagSuppressions(stacks) };
}
