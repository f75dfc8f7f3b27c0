// CDK assertions on the synthesized stacks: one function and one API route per line of the route
// table, least privilege per route, the queue + worker defaults, schedules, the provider-secret Deny,
// the table's safety settings, and the operations of issue 17 (tracing, the access log, EventBridge DLQs,
// the alarm topic, the secrets key and its grants, the SES identity warning; the monitoring stack and
// cdk-nag have their own files; the templates' sizes and the route groups, headroom.cases.ts). RefloopApi's
// routes and workers are in nested stacks: the tests read it and them as one template (./templates.ts).
// Bundling is skipped here (fast); the last test really bundles one handler with esbuild and checks its size.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Schedule } from 'aws-cdk-lib/aws-events';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { fallbackRoute, routes } from '../../functions/routes';
import { scheduledJobs, workers } from '../../functions/workers';
import {
  ACCESS_LOG_FORMAT,
  DEFAULT_API_THROTTLE,
  DEFAULT_WORKER_RESERVED_CONCURRENCY,
  gatewayPath,
  limitsFromContext,
  PROVIDER_SECRET_KEY_PATTERN,
  RefloopApiStack,
  routeProfile,
  WEBHOOK_SECRET_KEY_PATTERN,
  PROVIDER_WEBHOOK_SECRET_KEY_PATTERN,
  TAX_DETAILS_KEY_PATTERN,
  RAIL_SECRET_KEY_PATTERN,
} from '../../infra/cloud/api-stack';
import { RefloopFunction } from '../../infra/cloud/function';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Topic } from 'aws-cdk-lib/aws-sns';
import {
  batchingWindowOf,
  DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY,
  eventSourceCap,
  maxConcurrencyFromContext,
  QueueWorker as QueueWorkerConstruct,
} from '../../infra/cloud/queue-worker';
import { DOCS_PATHS } from '../../infra/cloud/dashboard-site';
import { ORIGIN_VERIFY_ENV, ORIGIN_VERIFY_HEADER } from '../../shared/http/client-ip';
import { PROVIDER_DEFINITIONS } from '../../shared/billing/registry';
import { SIGNATURE_HEADER as PADDLE_SIGNATURE_HEADER } from '../../shared/providers/paddle-billing/signature';
import { SIGNATURE_HEADER as STRIPE_SIGNATURE_HEADER } from '../../shared/providers/stripe/signature';
import { SECRET_WRITERS } from '../../infra/cloud/secrets-key';
import { secretsKeyUses } from '../../infra/cloud/secrets-key';
import { RefloopStatefulStack } from '../../infra/cloud/stateful-stack';
import { QUEUES, type QueueName } from '../../shared/queue/queues';
import { uniqueKeys, providerSecretKey, providerWebhookSecretKey, webhookKeys } from '../../shared/store/table';
import { taxKeys } from '../../shared/store/tax-details';
import { railKeys } from '../../shared/store/rail-connections';
import { PORTAL_HTML_DEFINE } from '../../shared/portal/page';
import { deployedStacks } from './app-fixture';
import { flatLogicalId, flatTemplate } from './templates';

const WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:TransactWriteItems',
];
const READ_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
  'dynamodb:GetRecords',
  'dynamodb:GetShardIterator',
];

/** What Lambda's active tracing adds to every function's role (on "*": X-Ray has no resource-level permissions). */
const XRAY_ACTIONS = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'];

const keyUses = secretsKeyUses();
/** The KMS actions a function may use on the secrets key (./secrets-key.ts decides). */
const kmsActionsOf = (name: string) => [
  ...(keyUses.get(name)?.decrypt ? ['kms:Decrypt'] : []),
  ...(keyUses.get(name)?.encrypt ? ['kms:Encrypt'] : []),
];

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };
type Statement = { Effect: 'Allow' | 'Deny'; Action: string | string[]; Resource: unknown; Condition?: unknown; Sid?: string };

let stateful: Template;
let api: Template;
let apiStack: RefloopApiStack;

let limited: { stack: RefloopApiStack; template: Template } | undefined;

/**
 * The API stack with every limit set by context, as `cdk deploy -c apiThrottleRate=42 -c apiThrottleBurst=84
 * -c workerReservedConcurrency=5` builds it: built once, for the throttle's and the reservation's tests.
 */
function limitedStack(): { stack: RefloopApiStack; template: Template } {
  if (!limited) {
    const app = new App({
      context: { 'aws:cdk:bundling-stacks': [], apiThrottleRate: '42', apiThrottleBurst: '84', workerReservedConcurrency: '5' },
    });
    const data = new RefloopStatefulStack(app, 'LimitedStateful');
    const stack = new RefloopApiStack(app, 'LimitedApi', { table: data.table, secretsKey: data.secretsKey, ...limitsFromContext(app) });
    limited = { stack, template: flatTemplate(stack) };
  }
  return limited;
}

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const data = new RefloopStatefulStack(app, 'TestStateful');
  apiStack = new RefloopApiStack(app, 'TestApi', { table: data.table, secretsKey: data.secretsKey });
  stateful = Template.fromStack(data);
  // The API stack with its nested stacks (route groups, workers) as one template (./templates.ts).
  api = flatTemplate(apiStack);
});

/** The alarm topic's logical id. */
function topicId(): string {
  return flatLogicalId(apiStack.alarmTopic);
}

function logicalId(routeName: string): string {
  const fn = apiStack.functions.get(routeName);
  if (!fn) throw new Error(`no function for ${routeName}`);
  return flatLogicalId(fn);
}

function queueIds(queue: QueueName): { queue: string; dlq: string } {
  const qw = apiStack.queueWorkers.get(queue);
  if (!qw) throw new Error(`no queue worker for ${queue}`);
  return {
    queue: flatLogicalId(qw.queue),
    dlq: flatLogicalId(qw.deadLetterQueue),
  };
}

function resource(template: Template, id: string): Resource {
  const r = template.toJSON().Resources[id] as Resource | undefined;
  if (!r) throw new Error(`no resource ${id}`);
  return r;
}

/** Every IAM statement of a function's role, through any policy attached to it. */
function statementsOf(routeName: string): Statement[] {
  const roleId = resource(api, logicalId(routeName)).Properties.Role['Fn::GetAtt'][0] as string;
  const policies = Object.values(api.findResources('AWS::IAM::Policy')) as Resource[];
  return policies
    .filter((p) => (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId })))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

const actionList = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

/** Every IAM action granted (Allow) to a function's role. */
function actionsOf(routeName: string): string[] {
  return statementsOf(routeName)
    .filter((s) => s.Effect === 'Allow')
    .flatMap(actionList);
}

/** The function an API route invokes: route -> integration -> function logical id. */
function functionBehind(route: Resource): string {
  const target = JSON.stringify(route.Properties.Target);
  const integrationId = /integrations\/","?\{"Ref":"([A-Za-z0-9]+)"/.exec(target)?.[1];
  if (!integrationId) throw new Error(`unexpected route target ${target}`);
  return resource(api, integrationId).Properties.IntegrationUri['Fn::GetAtt'][0] as string;
}

describe('API stack', () => {
  it('has one API route per route-table line plus $default, and nothing else', () => {
    const keys = (Object.values(api.findResources('AWS::ApiGatewayV2::Route')) as Resource[]).map((r) => r.Properties.RouteKey as string);
    const expected = [...routes.map((r) => `${r.method} ${gatewayPath(r.path)}`), '$default'];
    expect([...keys].sort()).toEqual([...expected].sort());
  });

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s has its own function and route', (_, route) => {
    const fnId = logicalId(route.name);
    const fn = resource(api, fnId).Properties;
    expect(fn).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
      Timeout: route.timeoutSeconds ?? 10,
      Environment: {
        Variables: { NODE_OPTIONS: '--enable-source-maps', ...(route.table === 'none' ? {} : { TABLE_NAME: expect.anything() }) },
      },
    });
    if (route.table === 'none') expect(fn.Environment.Variables.TABLE_NAME).toBeUndefined();
    const [apiRoute] = Object.values(
      api.findResources('AWS::ApiGatewayV2::Route', {
        Properties: { RouteKey: `${route.method} ${gatewayPath(route.path)}` },
      }),
    ) as Resource[];
    expect(apiRoute).toBeDefined();
    expect(functionBehind(apiRoute as Resource)).toBe(fnId);
  });

  it('sends every unmatched request to the fallback function', () => {
    const [defaultRoute] = Object.values(
      api.findResources('AWS::ApiGatewayV2::Route', { Properties: { RouteKey: '$default' } }),
    ) as Resource[];
    expect(defaultRoute).toBeDefined();
    expect(functionBehind(defaultRoute as Resource)).toBe(logicalId(fallbackRoute.name));
    const fn = resource(api, logicalId(fallbackRoute.name)).Properties;
    expect(fn).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'] });
    expect(fn.Environment.Variables.TABLE_NAME).toBeUndefined();
  });

  it('registers route paths without the trailing slash HTTP APIs reject', () => {
    // The root route is `/` itself (an HTTP API route key may be exactly `/`).
    for (const r of routes) expect(gatewayPath(r.path)).toMatch(r.path === '/' ? /^\/$/ : /[^/]$/);
    expect(gatewayPath('/')).toBe('/');
    expect(gatewayPath('/v1/referrals/{id}/')).toBe('/v1/referrals/{id}');
  });

  it('gives read routes read-only table access and write routes write access', () => {
    expect(routes.some((r) => r.table === 'read')).toBe(true);
    expect(routes.some((r) => r.table === 'write')).toBe(true);
    for (const route of routes) {
      const actions = actionsOf(route.name);
      const dynamo = actions.filter((a) => a.startsWith('dynamodb:'));
      // Routes that enqueue also send to their queues (checked in 'queues and workers'); every function may
      // send its traces to X-Ray; the secrets key's users (checked in 'the secrets key') use it.
      const expected = (a: string) =>
        a.startsWith('dynamodb:') ||
        (route.queues !== undefined && a.startsWith('sqs:')) ||
        XRAY_ACTIONS.includes(a) ||
        kmsActionsOf(route.name).includes(a);
      expect({ route: route.name, unexpected: actions.filter((a) => !expected(a)) }).toEqual({
        route: route.name,
        unexpected: [],
      });
      if (route.table === 'none') {
        expect({ route: route.name, dynamo }).toEqual({ route: route.name, dynamo: [] });
      } else if (route.table === 'read') {
        // A read route that takes a dashboard session slides its expiry: UpdateItem on session items
        // (`SESSION#<digest>`), and counts the API key's rate window (`A#<acct>#RATE#…`), nothing else; the
        // others write nothing at all.
        const slides = ['api-key', 'session', 'login'].includes(route.auth ?? 'api-key');
        const writes = statementsOf(route.name)
          .filter((s) => s.Effect === 'Allow')
          .flatMap((s) =>
            actionList(s)
              .filter((a) => a.startsWith('dynamodb:') && !READ_ACTIONS.includes(a))
              .map((a) => ({ action: a, sid: s.Sid, condition: s.Condition })),
          );
        // A portal read route slides an affiliate's cookie session: UpdateItem on `PORTAL_SESSION#<digest>` only.
        const slidesPortal = route.auth === 'portal';
        expect({ route: route.name, writes }).toEqual({
          route: route.name,
          writes: slides
            ? [
                {
                  action: 'dynamodb:UpdateItem',
                  sid: 'SlideDashboardSession',
                  condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['SESSION#*'] } },
                },
                // The API key's rate window (and failed logins'), counted by every /v1/ request.
                {
                  action: 'dynamodb:UpdateItem',
                  sid: 'CountRateWindow',
                  condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['A#*#RATE#*'] } },
                },
              ]
            : slidesPortal
              ? [
                  {
                    action: 'dynamodb:UpdateItem',
                    sid: 'SlidePortalSession',
                    condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PORTAL_SESSION#*'] } },
                  },
                  {
                    action: 'dynamodb:UpdateItem',
                    sid: 'CountRateWindow',
                    condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['A#*#RATE#*'] } },
                  },
                ]
              : [],
        });
        expect(dynamo).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem']));
      } else {
        expect(dynamo).toEqual(
          expect.arrayContaining([...WRITE_ACTIONS.filter((a) => a !== 'dynamodb:TransactWriteItems'), 'dynamodb:GetItem']),
        );
      }
    }
  });

  it('gives the fallback no table access', () => {
    expect(actionsOf(fallbackRoute.name).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
  });

  it("keeps every log for 30 days: one group shared by the routes, one per other function, the API's access log", () => {
    const groups = Object.entries(api.findResources('AWS::Logs::LogGroup')) as [string, Resource][];
    expect(groups).toHaveLength(1 + 1 + workers.length + scheduledJobs.length + 1);
    for (const [, g] of groups) expect(g.Properties.RetentionInDays).toBe(30);
    const shared = groups.find(([id]) => id.startsWith('RouteLogs'))?.[0];
    expect(shared).toBeDefined();
    for (const route of routes) {
      expect({ route: route.name, group: resource(api, logicalId(route.name)).Properties.LoggingConfig?.LogGroup }).toEqual({
        route: route.name,
        group: { Ref: shared },
      });
    }
  });

  // Issue 11 item 11: a flood is throttled by API Gateway before any Lambda runs.
  it('throttles every route of the $default stage by default; the rate and burst come from the stack props (context)', () => {
    api.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    api.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: DEFAULT_API_THROTTLE.rateLimit, ThrottlingBurstLimit: DEFAULT_API_THROTTLE.burstLimit },
    });
    expect(DEFAULT_API_THROTTLE.rateLimit).toBeGreaterThan(0);
    limitedStack().template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 42, ThrottlingBurstLimit: 84 },
    });
    // 0 (the default) reserves nothing.
    for (const fn of Object.values(api.findResources('AWS::Lambda::Function')) as Resource[]) {
      expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
    }
  });

  it('the CDK app reads the throttle and the worker reservation from context (defaults without it; bad values refused)', () => {
    expect(limitsFromContext(new App())).toEqual({
      apiThrottle: DEFAULT_API_THROTTLE,
      workerReservedConcurrency: DEFAULT_WORKER_RESERVED_CONCURRENCY,
    });
    const app = new App({ context: { apiThrottleRate: '50', apiThrottleBurst: 100, workerReservedConcurrency: '5' } });
    expect(limitsFromContext(app)).toEqual({ apiThrottle: { rateLimit: 50, burstLimit: 100 }, workerReservedConcurrency: 5 });
    expect(() => limitsFromContext(new App({ context: { apiThrottleRate: 'lots' } }))).toThrow(
      'context apiThrottleRate must be a non-negative number',
    );
  });

  it('outputs the API URL', () => {
    api.hasOutput('ApiUrl', {});
  });
});

describe('queues, workers and schedules', () => {
  /** Every function with its table access, queues it sends to and provider-secret need. */
  const users = [
    ...routes.map((r) => ({ name: r.name, table: r.table, sends: r.queues ?? [], providerSecrets: r.providerSecrets === true })),
    ...workers.map((w) => ({ name: w.name, table: 'write' as const, sends: w.sends, providerSecrets: w.providerSecrets })),
    ...scheduledJobs.map((j) => ({ name: j.name, table: 'read' as const, sends: j.sends, providerSecrets: j.providerSecrets })),
  ];
  const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });

  it('has exactly one queue and one DLQ per worker, and the two EventBridge DLQs', () => {
    // The EventBridge DLQs (the schedules', the SES events rule's) are checked in 'EventBridge targets'.
    expect(Object.keys(api.findResources('AWS::SQS::Queue'))).toHaveLength(2 * workers.length + 2);
    expect(new Set(workers.map((w) => w.queue)).size).toBe(workers.length);
  });

  it.each(workers.map((w) => [w.name, w] as const))(
    '%s: DLQ kept 14 days, redrive after 5 receives, visibility 6x the timeout',
    (_, worker) => {
      const ids = queueIds(worker.queue);
      const queue = resource(api, ids.queue).Properties;
      const dlq = resource(api, ids.dlq).Properties;
      expect(queue.RedrivePolicy).toEqual({ deadLetterTargetArn: arnOf(ids.dlq), maxReceiveCount: 5 });
      expect(queue.VisibilityTimeout).toBe(6 * worker.timeoutSeconds);
      expect(dlq.MessageRetentionPeriod).toBe(14 * 24 * 3600);
      expect(dlq.RedrivePolicy).toBeUndefined();
      for (const q of [queue, dlq]) expect(q.SqsManagedSseEnabled).toBe(true);
      expect(resource(api, logicalId(worker.name)).Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Timeout: worker.timeoutSeconds,
        Environment: { Variables: { TABLE_NAME: expect.anything() } },
      });
    },
  );

  // Issue 23 item 1: a new account (quota 10 or 50) must deploy. Lambda keeps 100 executions unreserved, so
  // the default reserves nothing and caps each event source instead; a reservation is opt-in (context), and
  // then the event source stays within it (throttled SQS invocations would count toward the DLQ).
  const scalingOf = (template: Template, fnId: string) =>
    (Object.values(template.findResources('AWS::Lambda::EventSourceMapping')) as Resource[]).find(
      (m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: fnId }),
    )?.Properties.ScalingConfig;

  it("reserves no concurrency by default (no function at all), and caps each worker's event source", () => {
    expect(DEFAULT_WORKER_RESERVED_CONCURRENCY).toBe(0);
    expect(DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY).toBeGreaterThanOrEqual(2);
    for (const [id, fn] of Object.entries(api.findResources('AWS::Lambda::Function')) as [string, Resource][]) {
      expect({ id, reserved: fn.Properties.ReservedConcurrentExecutions }).toEqual({ id, reserved: undefined });
    }
    for (const worker of workers) {
      expect({ worker: worker.name, scaling: scalingOf(api, logicalId(worker.name)) }).toEqual({
        worker: worker.name,
        scaling: { MaximumConcurrency: DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY },
      });
    }
    // The CDK app's default (no context) is the same.
    expect(limitsFromContext(new App()).workerReservedConcurrency).toBe(0);
  });

  it('reserves concurrency for every queue worker when asked (-c workerReservedConcurrency=5), capping its event source at it; no API function reserves any', () => {
    const { stack, template } = limitedStack();
    const idOf = (name: string) => flatLogicalId(stack.functions.get(name) as RefloopFunction);
    for (const worker of workers) {
      expect({ worker: worker.name, reserved: resource(template, idOf(worker.name)).Properties.ReservedConcurrentExecutions }).toEqual({
        worker: worker.name,
        reserved: 5,
      });
      expect({ worker: worker.name, scaling: scalingOf(template, idOf(worker.name)) }).toEqual({
        worker: worker.name,
        scaling: { MaximumConcurrency: 5 },
      });
    }
    for (const route of [...routes, fallbackRoute]) {
      expect({ route: route.name, reserved: resource(template, idOf(route.name)).Properties.ReservedConcurrentExecutions }).toEqual({
        route: route.name,
        reserved: undefined,
      });
    }
    // A reservation above the default cap raises the cap with it.
    expect(eventSourceCap(12)).toEqual({ maxConcurrency: 12 });
    expect(eventSourceCap(0)).toEqual({ maxConcurrency: DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY });
  });

  // Issue 29: a worker's concurrency is raised by context, per worker or for all (docs/operations.md "Fair
  // queues and worker concurrency"); it reserves nothing, and never goes above a reservation.
  it('takes the event source concurrency from -c workerMaxConcurrency=10 and -c workerMaxConcurrency.SubscriptionSync=20, within a reservation', () => {
    const scalingWith = (context: Record<string, unknown>, reservedConcurrency?: number) => {
      const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
      const stack = new Stack(app, 'Workers');
      const table = new Table(stack, 'Table', { partitionKey: { name: 'pk', type: AttributeType.STRING } });
      const alarmTopic = new Topic(stack, 'Alarms');
      const fnIds = workers
        .filter((w) => w.name === 'SubscriptionSync' || w.name === 'RewardFanout')
        .map((worker) => {
          const construct = new QueueWorkerConstruct(stack, worker.name, { worker, table, alarmTopic, reservedConcurrency });
          return [worker.name, stack.getLogicalId(construct.fn.node.defaultChild as CfnElement)] as const;
        });
      const mappings = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::EventSourceMapping')) as Resource[];
      return Object.fromEntries(
        fnIds.map(([name, fnId]) => [
          name,
          mappings.find((m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: fnId }))?.Properties.ScalingConfig,
        ]),
      );
    };
    const both = (a: number, b: number) => ({ SubscriptionSync: { MaximumConcurrency: a }, RewardFanout: { MaximumConcurrency: b } });
    expect(scalingWith({})).toEqual(both(DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY, DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY));
    expect(scalingWith({ workerMaxConcurrency: '10' })).toEqual(both(10, 10));
    expect(scalingWith({ workerMaxConcurrency: '10', 'workerMaxConcurrency.SubscriptionSync': '20' })).toEqual(both(20, 10));
    // Within a reservation: invoking past it would throttle, and throttled receives count toward the DLQ.
    expect(scalingWith({ 'workerMaxConcurrency.SubscriptionSync': '20' }, 8)).toEqual(both(8, 8));
    expect(scalingWith({ 'workerMaxConcurrency.SubscriptionSync': '3' }, 8)).toEqual(both(3, 8));
    for (const bad of ['1', '1001', '2.5', 'many', true, ''])
      expect(() => maxConcurrencyFromContext(new App({ context: { workerMaxConcurrency: bad } }), 'SubscriptionSync')).toThrow(
        /workerMaxConcurrency must be a whole number from 2 to 1000/,
      );
  });

  it('feeds each worker from its queue with partial batch responses', () => {
    const mappings = Object.values(api.findResources('AWS::Lambda::EventSourceMapping')) as Resource[];
    expect(mappings).toHaveLength(workers.length);
    for (const m of mappings) expect(m.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    for (const worker of workers) {
      const mine = mappings.filter((m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: logicalId(worker.name) }));
      expect(mine).toHaveLength(1);
      expect(mine[0]?.Properties).toMatchObject({
        EventSourceArn: arnOf(queueIds(worker.queue).queue),
        BatchSize: worker.batchSize,
        MaximumBatchingWindowInSeconds: worker.batchingWindowSeconds ?? 1,
      });
    }
    // The reward fan-out has none (functions/workers.ts); Lambda refuses one under 1 s above 10 records.
    expect(workers.find((w) => w.name === 'RewardFanout')?.batchingWindowSeconds).toBe(0);
    expect(() => batchingWindowOf({ name: 'Big', batchSize: 25, batchingWindowSeconds: 0 })).toThrow(
      /Big: a batch of 25 records needs a batching window of at least 1 s/,
    );
    expect(batchingWindowOf({ name: 'Small', batchSize: 10, batchingWindowSeconds: 0 }).toSeconds()).toBe(0);
    expect(batchingWindowOf({ name: 'Default', batchSize: 25 }).toSeconds()).toBe(1);
  });

  it('alarms on the first message in each DLQ, to the alarm topic, naming the runbook', () => {
    const alarms = Object.values(api.findResources('AWS::CloudWatch::Alarm')) as Resource[];
    // One per worker's DLQ, one per EventBridge DLQ (checked in 'EventBridge targets'); the other alarms are
    // in the monitoring stack (test/infra/monitoring.cases.ts).
    expect(alarms).toHaveLength(workers.length + 2);
    const topic = { Ref: topicId() };
    for (const a of alarms) {
      expect(a.Properties).toMatchObject({
        AlarmActions: [topic],
        OKActions: [topic],
        AlarmDescription: expect.stringMatching(/\. Runbook: docs\/operations\.md#alarm-dlq$/),
      });
    }
    for (const worker of workers) {
      const dlqName = { 'Fn::GetAtt': [queueIds(worker.queue).dlq, 'QueueName'] };
      const mine = alarms.filter(
        (a) => JSON.stringify(a.Properties.Dimensions) === JSON.stringify([{ Name: 'QueueName', Value: dlqName }]),
      );
      expect(mine).toHaveLength(1);
      expect(mine[0]?.Properties).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        Period: 60,
        TreatMissingData: 'notBreaching',
        AlarmDescription: `${worker.name}: messages of queue ${worker.queue} are in its DLQ. Runbook: docs/operations.md#alarm-dlq`,
      });
    }
  });

  it.each(scheduledJobs.map((j) => [j.name, j] as const))('%s runs on its EventBridge schedule with read-only table access', (_, job) => {
    const fnId = logicalId(job.name);
    const rules = (Object.values(api.findResources('AWS::Events::Rule')) as Resource[]).filter((r) =>
      (r.Properties.Targets as { Arn: unknown }[]).some((t) => JSON.stringify(t.Arn) === JSON.stringify(arnOf(fnId))),
    );
    expect(rules).toHaveLength(1);
    // CDK writes the rate in the largest whole unit (360 minutes -> `rate(6 hours)`).
    const rate = Schedule.rate(Duration.minutes(job.everyMinutes)).expressionString;
    expect(rules[0]?.Properties).toMatchObject({ ScheduleExpression: rate, State: 'ENABLED' });
    api.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: arnOf(fnId),
    });
    expect(resource(api, fnId).Properties.Timeout).toBe(job.timeoutSeconds);
    const dynamo = actionsOf(job.name).filter((a) => a.startsWith('dynamodb:'));
    expect(dynamo.filter((a) => !READ_ACTIONS.includes(a))).toEqual([]);
    expect(dynamo).toContain('dynamodb:Query');
  });

  it('gives workers read-write table access', () => {
    for (const worker of workers) {
      expect(actionsOf(worker.name)).toEqual(
        expect.arrayContaining([...WRITE_ACTIONS.filter((a) => a !== 'dynamodb:TransactWriteItems'), 'dynamodb:GetItem']),
      );
    }
  });

  it('gives each function that sends to a queue the queue URL and send permission, and no other function either', () => {
    expect(users.some((u) => u.sends.length > 0 && routes.some((r) => r.name === u.name))).toBe(true);
    for (const user of users) {
      const env = resource(api, logicalId(user.name)).Properties.Environment.Variables as Record<string, unknown>;
      const sendTargets = statementsOf(user.name)
        .filter((s) => s.Effect === 'Allow' && actionList(s).includes('sqs:SendMessage'))
        .map((s) => JSON.stringify(s.Resource));
      for (const q of Object.keys(QUEUES) as QueueName[]) {
        const queueId = queueIds(q).queue;
        const sends = user.sends.includes(q);
        expect({ fn: user.name, queue: q, url: env[QUEUES[q].envVar] }).toEqual({
          fn: user.name,
          queue: q,
          url: sends ? { Ref: queueId } : undefined,
        });
        expect({ fn: user.name, queue: q, send: sendTargets.includes(JSON.stringify(arnOf(queueId))) }).toEqual({
          fn: user.name,
          queue: q,
          send: sends,
        });
      }
    }
    // The fallback sends nothing.
    expect(actionsOf(fallbackRoute.name).filter((a) => a.startsWith('sqs:'))).toEqual([]);
  });

  it('denies the provider secret items (and Scan) to every function that does not call the vendor API', () => {
    expect(users.some((u) => u.providerSecrets)).toBe(true);
    expect(users.some((u) => !u.providerSecrets)).toBe(true);
    for (const user of users) {
      // The webhook signing secrets have their own Deny (next test).
      const denies = statementsOf(user.name).filter(
        (s) =>
          s.Effect === 'Deny' &&
          s.Sid !== 'DenyWebhookSecretItems' &&
          s.Sid !== 'DenyProviderWebhookSecretItems' &&
          s.Sid !== 'DenyTaxDetailItems' &&
          s.Sid !== 'DenyRailSecretItems',
      );
      if (user.providerSecrets) {
        expect({ fn: user.name, denies }).toEqual({ fn: user.name, denies: [] });
        continue;
      }
      const items = denies.find((s) => s.Condition !== undefined);
      expect({ fn: user.name, condition: items?.Condition }).toEqual({
        fn: user.name,
        condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [PROVIDER_SECRET_KEY_PATTERN] } },
      });
      expect(actionList(items as Statement)).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:UpdateItem']),
      );
      // The table and its indexes.
      expect(items?.Resource).toHaveLength(2);
      expect(JSON.stringify(items?.Resource)).toContain('/index/*');
      const scan = denies.find((s) => s.Condition === undefined);
      expect(scan && actionList(scan)).toEqual(['dynamodb:Scan']);
    }
    // The key the pattern protects is the one the store writes.
    const accountId = '0123456789abcdef';
    const like = new RegExp(`^${PROVIDER_SECRET_KEY_PATTERN.replace(/\?/g, '.')}$`);
    expect(providerSecretKey(accountId).pk).toMatch(like);
    // A tenant-chosen key that merely ends the same way is not matched.
    expect(uniqueKeys.memberIdentifierClaim(accountId, 'x#PROVIDER_SECRET').pk).not.toMatch(like);
  });

  it('denies the webhook signing secret items to every function but the endpoint create / delete routes and the delivery worker', () => {
    const allowed = [
      ...routes.filter((r) => r.webhookSecrets).map((r) => r.name),
      ...workers.filter((w) => w.webhookSecrets).map((w) => w.name),
    ].sort();
    expect(allowed).toEqual(['CreateWebhookEndpoint', 'DeleteWebhookEndpoint', 'WebhookDelivery']);
    for (const user of users) {
      const deny = statementsOf(user.name).filter((s) => s.Effect === 'Deny' && s.Sid === 'DenyWebhookSecretItems');
      if (allowed.includes(user.name)) {
        expect({ fn: user.name, deny }).toEqual({ fn: user.name, deny: [] });
        continue;
      }
      expect({ fn: user.name, condition: deny[0]?.Condition }).toEqual({
        fn: user.name,
        condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [WEBHOOK_SECRET_KEY_PATTERN] } },
      });
      expect(actionList(deny[0] as Statement)).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem']),
      );
    }
    const like = new RegExp(`^${WEBHOOK_SECRET_KEY_PATTERN.replace(/\?/g, '.')}$`);
    expect(webhookKeys.webhookSecret('0123456789abcdef', '0'.repeat(32)).pk).toMatch(like);
  });

  it("denies members' tax details to every function but the portal's tax-details routes and the tax export", () => {
    const allowed = routes.filter((r) => r.taxDetails).map((r) => r.name);
    expect(allowed.sort()).toEqual(['ExportTaxDetails', 'GetPortalTaxDetails', 'PutPortalTaxDetails']);
    for (const user of users) {
      const deny = statementsOf(user.name).filter((s) => s.Effect === 'Deny' && s.Sid === 'DenyTaxDetailItems');
      if (allowed.includes(user.name)) {
        expect({ fn: user.name, deny }).toEqual({ fn: user.name, deny: [] });
        continue;
      }
      expect({ fn: user.name, condition: deny[0]?.Condition }).toEqual({
        fn: user.name,
        condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [TAX_DETAILS_KEY_PATTERN] } },
      });
    }
    const like = new RegExp(`^${TAX_DETAILS_KEY_PATTERN.replace(/\?/g, '.').replace('*', '.*')}$`);
    expect(taxKeys.item('0123456789abcdef', '0'.repeat(32)).pk).toMatch(like);
    expect(uniqueKeys.memberIdentifierClaim('0123456789abcdef', 'x#TAX#DETAILS').pk).not.toMatch(like);
  });

  it('denies the payout-rail secrets to every function but the routes that write, delete and read them and the PayoutRails worker', () => {
    const allowed = [...routes.filter((r) => r.railSecrets).map((r) => r.name), ...workers.filter((w) => w.railSecrets).map((w) => w.name)];
    expect(allowed.sort()).toEqual([
      'DeletePayoutRail',
      'PayoutRails',
      'PaypalRailWebhook',
      'PortalStripeAccountLink',
      'SetPayoutRail',
      'StripeConnectRailWebhook',
      'WiseRailWebhook',
    ]);
    for (const user of users) {
      const deny = statementsOf(user.name).filter((s) => s.Effect === 'Deny' && s.Sid === 'DenyRailSecretItems');
      if (allowed.includes(user.name)) {
        expect({ fn: user.name, deny }).toEqual({ fn: user.name, deny: [] });
        continue;
      }
      expect({ fn: user.name, condition: deny[0]?.Condition }).toEqual({
        fn: user.name,
        condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [RAIL_SECRET_KEY_PATTERN] } },
      });
    }
    const like = new RegExp(`^${RAIL_SECRET_KEY_PATTERN.replace(/\?/g, '.')}$`);
    expect(railKeys.secret('0123456789abcdef', 'paypal').pk).toMatch(like);
    expect(railKeys.settings('0123456789abcdef', 'paypal').pk).not.toMatch(like);
  });

  it("denies Paddle Billing's and Stripe's webhook secret to every function but their intakes (denied the API secret) and the provider connection route", () => {
    const allowed = routes.filter((r) => r.providerWebhookSecrets).map((r) => r.name);
    expect(allowed.sort()).toEqual(['ProviderWebhook', 'SetProviderConnection']);
    // The intakes read the webhook secret only; POST /v1/account/provider/ (dashboard session only) writes
    // both secrets, so it alone holds both.
    for (const name of ['ProviderWebhook']) expect(routes.find((r) => r.name === name)?.providerSecrets).not.toBe(true);
    expect(routes.filter((r) => r.providerSecrets && r.providerWebhookSecrets).map((r) => [r.name, r.auth])).toEqual([
      ['SetProviderConnection', 'session'],
    ]);
    for (const user of users) {
      const deny = statementsOf(user.name).filter((s) => s.Effect === 'Deny' && s.Sid === 'DenyProviderWebhookSecretItems');
      if (allowed.includes(user.name)) {
        expect({ fn: user.name, deny }).toEqual({ fn: user.name, deny: [] });
        continue;
      }
      expect({ fn: user.name, condition: deny[0]?.Condition }).toEqual({
        fn: user.name,
        condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [PROVIDER_WEBHOOK_SECRET_KEY_PATTERN] } },
      });
      expect(actionList(deny[0] as Statement)).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query']),
      );
    }
    const like = new RegExp(`^${PROVIDER_WEBHOOK_SECRET_KEY_PATTERN.replace(/\?/g, '.')}$`);
    expect(providerWebhookSecretKey('0123456789abcdef').pk).toMatch(like);
    expect(providerSecretKey('0123456789abcdef').pk).not.toMatch(like);
    expect(providerWebhookSecretKey('0123456789abcdef').pk).not.toMatch(new RegExp(`^${PROVIDER_SECRET_KEY_PATTERN.replace(/\?/g, '.')}$`));
  });

  it('outputs the queue URLs and the DLQ alarm names', () => {
    const outputs = Object.keys(api.toJSON().Outputs ?? {});
    expect(outputs).toEqual(expect.arrayContaining(['ProviderEventsQueueUrl', 'RewardsQueueUrl']));
    for (const worker of workers) expect(outputs).toContain(`${worker.name}DlqAlarmName`);
  });
});

describe('the dashboard on the API origin (CloudFront + S3)', () => {
  let site: Template;
  let siteStack: RefloopApiStack;

  beforeAll(() => {
    // web/dist is built by the test run's global setup (test/support/global-setup.ts).
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const data = new RefloopStatefulStack(app, 'SiteStateful');
    siteStack = new RefloopApiStack(app, 'SiteApi', {
      table: data.table,
      secretsKey: data.secretsKey,
      dashboardDir: join(__dirname, '..', '..', 'web', 'dist'),
    });
    site = flatTemplate(siteStack);
  });

  it("stays under CloudFormation's 500 resources per stack, with room for the next routes", () => {
    // RefloopApi's own template; its nested stacks are counted in 'every template keeps its headroom'.
    const count = Object.keys(Template.fromStack(siteStack).toJSON().Resources).length;
    expect(count).toBeLessThan(490);
  });

  const distributionConfig = () =>
    (Object.values(site.findResources('AWS::CloudFront::Distribution')) as Resource[])[0]?.Properties.DistributionConfig;
  const policyConfig = (type: string, ref: unknown) => {
    const id = (ref as { Ref?: string }).Ref;
    if (!id) throw new Error(`not a reference to a ${type}: ${JSON.stringify(ref)}`);
    const r = resource(site, id);
    expect(r.Type).toBe(type);
    return r.Properties;
  };

  it('routes /app/* to a private bucket through origin access control, the documents and everything else to the HTTP API', () => {
    const dists = Object.values(site.findResources('AWS::CloudFront::Distribution')) as Resource[];
    expect(dists).toHaveLength(1);
    const config = dists[0]?.Properties.DistributionConfig;
    const patterns = (config.CacheBehaviors as { PathPattern: string }[]).map((b) => b.PathPattern).sort();
    expect(patterns).toEqual(['/app', '/app/*', ...DOCS_PATHS].sort());
    expect(config.DefaultCacheBehavior).toMatchObject({
      ViewerProtocolPolicy: 'https-only',
      AllowedMethods: expect.arrayContaining(['POST', 'PATCH', 'DELETE']),
    });
    const s3Origin = (config.Origins as { S3OriginConfig?: unknown; OriginAccessControlId?: unknown }[]).find((o) => o.S3OriginConfig);
    expect(s3Origin?.OriginAccessControlId).toBeDefined();
    site.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    site.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
  });

  // Issue 23 item 2: behind the distribution, API Gateway's sourceIp is a CloudFront edge; the viewer's address
  // must reach the handlers, and nothing but the distribution may reach the API.
  it('forwards CloudFront-Viewer-Address and every header the handlers read (Authorization through the cache key), never Host', () => {
    const config = distributionConfig();
    const request = policyConfig(
      'AWS::CloudFront::OriginRequestPolicy',
      config.DefaultCacheBehavior.OriginRequestPolicyId,
    ).OriginRequestPolicyConfig;
    expect(request.HeadersConfig.HeaderBehavior).toBe('whitelist');
    const forwarded = (request.HeadersConfig.Headers as string[]).map((h) => h.toLowerCase());
    expect(forwarded).toContain('cloudfront-viewer-address');
    expect(forwarded.length).toBeLessThanOrEqual(10); // CloudFront's quota of headers per origin request policy
    // Host would make API Gateway refuse the request; Authorization is refused in an origin request policy.
    expect(forwarded).not.toContain('host');
    expect(forwarded).not.toContain('authorization');
    const cache = policyConfig('AWS::CloudFront::CachePolicy', config.DefaultCacheBehavior.CachePolicyId).CachePolicyConfig;
    const key = cache.ParametersInCacheKeyAndForwardedToOrigin;
    expect(key.HeadersConfig).toEqual({ HeaderBehavior: 'whitelist', Headers: ['authorization'] });
    expect(key.CookiesConfig).toEqual({ CookieBehavior: 'all' });
    expect(key.QueryStringsConfig).toEqual({ QueryStringBehavior: 'all' });
    // Nothing is cached that the API does not mark cacheable, and then for a second at most.
    expect({ min: cache.MinTTL, default: cache.DefaultTTL, max: cache.MaxTTL }).toEqual({ min: 0, default: 0, max: 1 });
    // Every header a handler reads (header(event, '...') in functions/ and shared/) reaches it.
    const exempt: Record<string, string> = {
      cookie: 'cookies are all in the cache key',
      authorization: 'in the cache key',
      'accept-encoding': 'normalized by the cache policy (gzip, br)',
      host: 'never forwarded; links come from PUBLIC_BASE_URL',
      'x-forwarded-proto': 'https only through the distribution; links come from PUBLIC_BASE_URL',
      [ORIGIN_VERIFY_HEADER]: 'added by the distribution itself',
    };
    const read = new Set<string>();
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) =>
        statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : [],
      );
    for (const file of [...walk(join(__dirname, '..', '..', 'functions')), ...walk(join(__dirname, '..', '..', 'shared'))].filter(
      (f) => !f.includes('emulator'),
    )) {
      for (const m of readFileSync(file, 'utf8').matchAll(/header\((?:req\.)?event, '([a-z0-9-]+)'\)/g)) read.add(m[1] as string);
    }
    read.add(PADDLE_SIGNATURE_HEADER);
    read.add(STRIPE_SIGNATURE_HEADER);
    // Every provider's webhook header (Chargebee's is Authorization: Basic, which reaches the intake through the cache key).
    for (const definition of PROVIDER_DEFINITIONS) if (definition.webhook.signatureHeader) read.add(definition.webhook.signatureHeader);
    expect(read).toContain('authorization');
    expect(read.size).toBeGreaterThan(5);
    for (const name of read) expect({ name, forwarded: forwarded.includes(name) || name in exempt }).toEqual({ name, forwarded: true });
  });

  it('adds the secret origin header to every API request and gives the same secret to every HTTP function (not to workers)', () => {
    const config = distributionConfig();
    const apiOrigin = (config.Origins as { Id: string; OriginCustomHeaders?: { HeaderName: string; HeaderValue: unknown }[] }[]).find(
      (o) => o.Id === config.DefaultCacheBehavior.TargetOriginId,
    );
    const header = apiOrigin?.OriginCustomHeaders?.find((h) => h.HeaderName === ORIGIN_VERIFY_HEADER);
    const readerId = siteStack.getLogicalId(siteStack.originSecretReader?.node.defaultChild as CfnElement);
    expect(header?.HeaderValue).toEqual({ 'Fn::GetAtt': [readerId, 'SecretString'] });
    // Generated by Secrets Manager (48 characters), read by the custom resource at deploy.
    site.hasResourceProperties('AWS::SecretsManager::Secret', { GenerateSecretString: { PasswordLength: 48, ExcludePunctuation: true } });
    const envOf = (name: string) =>
      resource(site, flatLogicalId(siteStack.functions.get(name) as RefloopFunction)).Properties.Environment?.Variables ?? {};
    for (const route of [...routes, fallbackRoute])
      expect({ route: route.name, secret: envOf(route.name)[ORIGIN_VERIFY_ENV] }).toEqual({
        route: route.name,
        secret: header?.HeaderValue,
      });
    for (const worker of workers)
      expect({ worker: worker.name, secret: envOf(worker.name)[ORIGIN_VERIFY_ENV] }).toEqual({ worker: worker.name, secret: undefined });
    // The execute-api URL is output as the origin it now is.
    site.hasOutput('ApiUrl', { Description: Match.stringLikeRegexp('403') });
  });

  it('caches and compresses /docs and /v1/openapi.json (gzip and brotli, as long as their max-age)', () => {
    const config = distributionConfig();
    for (const path of DOCS_PATHS) {
      const behavior = (
        config.CacheBehaviors as { PathPattern: string; CachePolicyId: unknown; Compress: boolean; TargetOriginId: string }[]
      ).find((b) => b.PathPattern === path);
      expect(behavior?.Compress).toBe(true);
      expect(behavior?.TargetOriginId).toBe(config.DefaultCacheBehavior.TargetOriginId);
      // The managed CachingOptimized policy (gzip and brotli, nothing in the key): the handlers' max-age=300 sets the time.
      expect(behavior?.CachePolicyId).toBe('658327ea-f89d-4fab-a63d-7e88639e58f6');
    }
  });

  it("logs every request with the viewer's address: the distribution's standard access log, kept 30 days", () => {
    const config = distributionConfig();
    const bucketId = siteStack.getLogicalId(siteStack.site?.logBucket.node.defaultChild as CfnElement);
    expect(config.Logging).toMatchObject({ Bucket: { 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] } });
    expect(resource(site, bucketId).Properties).toMatchObject({
      LifecycleConfiguration: { Rules: [expect.objectContaining({ ExpirationInDays: 30, Status: 'Enabled' })] },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'ObjectWriter' }] },
    });
    site.hasOutput('AccessLogBucketName', {});
    // The HTTP API's own log cannot carry a header: its `ip` is the edge's, and says so.
    expect(ACCESS_LOG_FORMAT.ip).toBe('$context.identity.sourceIp');
  });

  it("sends the dashboard's security headers and rewrites deep links to index.html", () => {
    site.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: {
        SecurityHeadersConfig: {
          ContentSecurityPolicy: { ContentSecurityPolicy: Match.stringLikeRegexp("frame-ancestors 'none'") },
          FrameOptions: { FrameOption: 'DENY' },
          ContentTypeOptions: { Override: true },
        },
      },
    });
    const fns = Object.values(site.findResources('AWS::CloudFront::Function')) as Resource[];
    expect(fns).toHaveLength(1);
    expect(String(fns[0]?.Properties.FunctionCode)).toContain('/app/index.html');
  });

  it('gives every function the public origin (PUBLIC_BASE_URL) and outputs it', () => {
    const functions = Object.entries(site.findResources('AWS::Lambda::Function')) as [string, Resource][];
    const ours = functions.filter(([id]) => [...siteStack.functions.values()].some((fn) => flatLogicalId(fn) === id));
    expect(ours.length).toBe(siteStack.functions.size);
    for (const [id, fn] of ours)
      expect({ id, url: JSON.stringify(fn.Properties.Environment?.Variables?.PUBLIC_BASE_URL ?? null) }).toEqual({
        id,
        url: expect.stringContaining('DomainName'),
      });
    site.hasOutput('PublicUrl', {});
    site.hasOutput('DashboardUrl', {});
  });

  it('shares a role only between routes that need exactly the same permissions', () => {
    const byRole = new Map<string, string[]>();
    for (const route of routes) {
      const fn = siteStack.functions.get(route.name);
      const role = JSON.stringify(resource(site, flatLogicalId(fn as RefloopFunction)).Properties.Role);
      byRole.set(role, [...(byRole.get(role) ?? []), route.name]);
    }
    for (const names of byRole.values()) {
      const profiles = new Set(names.map((n) => routeProfile(routes.find((r) => r.name === n) as (typeof routes)[number])));
      expect({ names, profiles: profiles.size }).toEqual({ names, profiles: 1 });
    }
  });
});

describe('member emails (SES)', () => {
  const allFunctions = [
    ...routes.map((r) => r.name),
    ...workers.map((w) => w.name),
    ...scheduledJobs.map((j) => j.name),
    fallbackRoute.name,
  ];
  const sesStatements = (name: string) =>
    statementsOf(name).filter((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]).some((a) => a.startsWith('ses:')));

  it('only the member-emails worker may send email: ses:SendEmail on the identity and the configuration set', () => {
    for (const name of allFunctions.filter((n) => n !== 'MemberEmails'))
      expect({ name, ses: sesStatements(name) }).toEqual({ name, ses: [] });
    const statements = sesStatements('MemberEmails');
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatchObject({ Effect: 'Allow', Action: 'ses:SendEmail' });
    const resources = JSON.stringify(statements[0]?.Resource);
    expect(resources).toContain(':identity/example.com');
    expect(resources).toContain(':configuration-set/');
    expect(resources).not.toContain('*');
    const env = resource(api, logicalId('MemberEmails')).Properties.Environment.Variables;
    expect(env).toMatchObject({ SES_CONFIGURATION_SET: expect.anything(), EMAIL_DEFAULT_FROM: 'no-reply@example.com' });
    expect(env.EMAIL_OUTBOX_DIR).toBeUndefined();
  });

  it('sends SES bounces and complaints through EventBridge to the email-events queue', () => {
    const destinations = Object.values(api.findResources('AWS::SES::ConfigurationSetEventDestination')) as Resource[];
    expect(destinations).toHaveLength(1);
    expect(destinations[0]?.Properties.EventDestination).toMatchObject({ Enabled: true, MatchingEventTypes: ['bounce', 'complaint'] });
    expect(JSON.stringify(destinations[0]?.Properties.EventDestination.EventBridgeDestination)).toContain(':event-bus/default');
    const queueArn = { 'Fn::GetAtt': [queueIds('email-events').queue, 'Arn'] };
    const rules = (Object.values(api.findResources('AWS::Events::Rule')) as Resource[]).filter(
      (r) => r.Properties.EventPattern?.source?.[0] === 'aws.ses',
    );
    expect(rules).toHaveLength(1);
    expect(rules[0]?.Properties.EventPattern).toEqual({
      source: ['aws.ses'],
      'detail-type': ['Email Bounced', 'Email Complaint Received'],
      detail: { mail: { tags: { member_id: [{ exists: true }] } } },
    });
    expect(rules[0]?.Properties.Targets).toEqual([expect.objectContaining({ Arn: queueArn })]);
  });
});

describe('stateful stack', () => {
  it('keeps the table: retained, deletion-protected, point-in-time recovery on', () => {
    const tables = Object.values(stateful.findResources('AWS::DynamoDB::GlobalTable')) as Resource[];
    expect(tables).toHaveLength(1);
    const table = tables[0] as Resource;
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    for (const replica of table.Properties.Replicas as Record<string, any>[]) {
      expect(replica.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(replica.DeletionProtectionEnabled).toBe(true);
    }
  });

  it('encrypts the table (and so the provider auth codes) with the AWS-managed KMS key', () => {
    stateful.hasResourceProperties('AWS::DynamoDB::GlobalTable', { SSESpecification: { SSEEnabled: true, SSEType: 'KMS' } });
  });

  it('builds the table from tableSchema: on demand, TTL, both GSIs projecting ALL', () => {
    stateful.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      GlobalSecondaryIndexes: [
        {
          IndexName: 'gsi1',
          KeySchema: [
            { AttributeName: 'gsi1pk', KeyType: 'HASH' },
            { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'gsi2',
          KeySchema: [
            { AttributeName: 'gsi2pk', KeyType: 'HASH' },
            { AttributeName: 'gsi2sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });

  it('outputs the table name for the operator CLI', () => {
    stateful.hasOutput('TableName', {});
  });
});

// Issue 17: tracing, the metric contract's environment, the API's access log, EventBridge DLQs, the alarm
// topic, the secrets key and the SES identity warning.
describe('operations (issue 17)', () => {
  const allNames = () => [...apiStack.functions.keys()];

  it('traces every function actively with X-Ray and names the Powertools service and metric namespace', () => {
    expect(apiStack.functions.size).toBe(routes.length + workers.length + scheduledJobs.length + 1);
    for (const name of allNames()) {
      const fn = resource(api, logicalId(name)).Properties;
      expect({ name, tracing: fn.TracingConfig }).toEqual({ name, tracing: { Mode: 'Active' } });
      expect({ name, env: fn.Environment.Variables }).toMatchObject({
        name,
        env: { POWERTOOLS_SERVICE_NAME: 'refloop', POWERTOOLS_METRICS_NAMESPACE: 'Refloop' },
      });
      // X-Ray's actions are the only ones granted on "*".
      const wildcard = statementsOf(name).filter(
        (s) => s.Effect === 'Allow' && (s.Resource === '*' || (Array.isArray(s.Resource) && s.Resource.includes('*'))),
      );
      expect({ name, actions: wildcard.flatMap(actionList).sort() }).toEqual({ name, actions: [...XRAY_ACTIONS].sort() });
    }
  });

  it('writes a JSON access log line per request of the $default stage to a group kept 30 days', () => {
    const stage = (Object.values(api.findResources('AWS::ApiGatewayV2::Stage')) as Resource[])[0]?.Properties;
    const groupId = apiStack.getLogicalId(apiStack.accessLogs.node.defaultChild as CfnElement);
    expect(stage?.AccessLogSettings.DestinationArn).toEqual({ 'Fn::GetAtt': [groupId, 'Arn'] });
    const format = JSON.parse(stage?.AccessLogSettings.Format as string) as Record<string, string>;
    expect(format).toEqual({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      requestTime: '$context.requestTime',
      httpMethod: '$context.httpMethod',
      routeKey: '$context.routeKey',
      path: '$context.path',
      status: '$context.status',
      protocol: '$context.protocol',
      responseLength: '$context.responseLength',
      integrationLatency: '$context.integrationLatency',
      responseLatency: '$context.responseLatency',
      integrationError: '$context.integrationErrorMessage',
    });
    expect(resource(api, groupId).Properties.RetentionInDays).toBe(30);
  });

  describe('EventBridge targets', () => {
    const rules = () => Object.values(api.findResources('AWS::Events::Rule')) as Resource[];
    const dlqArn = (queue: Queue) => ({ 'Fn::GetAtt': [flatLogicalId(queue), 'Arn'] });

    it('every target of every rule has a DLQ and a retry policy', () => {
      expect(rules()).toHaveLength(scheduledJobs.length + 1);
      for (const rule of rules()) {
        for (const target of rule.Properties.Targets as Record<string, any>[]) {
          expect({ rule: rule.Properties.Description, dlq: target.DeadLetterConfig?.Arn }).toEqual({
            rule: rule.Properties.Description,
            dlq: expect.anything(),
          });
          expect(target.RetryPolicy).toEqual({ MaximumRetryAttempts: expect.any(Number), MaximumEventAgeInSeconds: expect.any(Number) });
        }
      }
    });

    it.each(scheduledJobs.map((j) => [j.name, j] as const))('%s: the schedules DLQ, retried until its next run is due', (_, job) => {
      const fnArn = { 'Fn::GetAtt': [logicalId(job.name), 'Arn'] };
      const [rule] = rules().filter((r) =>
        (r.Properties.Targets as { Arn: unknown }[]).some((t) => JSON.stringify(t.Arn) === JSON.stringify(fnArn)),
      );
      const target = (rule?.Properties.Targets as Record<string, any>[])[0];
      expect(target?.DeadLetterConfig).toEqual({ Arn: dlqArn(apiStack.scheduleDeadLetterQueue) });
      expect(target?.RetryPolicy).toEqual({
        MaximumRetryAttempts: 3,
        MaximumEventAgeInSeconds: Math.min(Math.max(job.everyMinutes, 1), 1440) * 60,
      });
    });

    it("the SES events rule: its own DLQ (SES events, to move back into the email-events queue) after EventBridge's longest retry", () => {
      const [rule] = rules().filter((r) => r.Properties.EventPattern?.source?.[0] === 'aws.ses');
      const target = (rule?.Properties.Targets as Record<string, any>[])[0];
      expect(target?.DeadLetterConfig).toEqual({ Arn: dlqArn(apiStack.memberEmail.deadLetterQueue) });
      expect(target?.RetryPolicy).toEqual({ MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 });
    });

    it('the DLQs: kept 14 days, encrypted, TLS only, EventBridge may send (from its rules only), alarmed on their first message', () => {
      for (const queue of [apiStack.scheduleDeadLetterQueue, apiStack.memberEmail.deadLetterQueue]) {
        const id = flatLogicalId(queue);
        expect(resource(api, id).Properties).toMatchObject({ MessageRetentionPeriod: 14 * 24 * 3600, SqsManagedSseEnabled: true });
        const policies = (Object.values(api.findResources('AWS::SQS::QueuePolicy')) as Resource[]).filter(
          (p) => JSON.stringify(p.Properties.Queues) === JSON.stringify([{ Ref: id }]),
        );
        expect(policies).toHaveLength(1);
        const statements = policies[0]?.Properties.PolicyDocument.Statement as Record<string, any>[];
        expect(statements).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            expect.objectContaining({
              Effect: 'Allow',
              Principal: { Service: 'events.amazonaws.com' },
              Action: 'sqs:SendMessage',
              Condition: { ArnEquals: { 'aws:SourceArn': expect.anything() } },
            }),
          ]),
        );
        const alarms = (Object.values(api.findResources('AWS::CloudWatch::Alarm')) as Resource[]).filter(
          (a) =>
            JSON.stringify(a.Properties.Dimensions) === JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id, 'QueueName'] } }]),
        );
        expect(alarms).toHaveLength(1);
        expect(alarms[0]?.Properties).toMatchObject({
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          AlarmActions: [{ Ref: topicId() }],
        });
      }
      api.hasOutput('ScheduleDeadLetterQueueUrl', {});
      api.hasOutput('EmailEventsRuleDeadLetterQueueUrl', {});
    });
  });

  describe('the alarm topic', () => {
    it('enforces TLS, lets CloudWatch alarms of this account publish, is output; no subscription without alarmEmail', () => {
      api.resourceCountIs('AWS::SNS::Topic', 1);
      api.resourceCountIs('AWS::SNS::Subscription', 0);
      const [policy] = Object.values(api.findResources('AWS::SNS::TopicPolicy')) as Resource[];
      const statements = policy?.Properties.PolicyDocument.Statement as Record<string, any>[];
      expect(statements).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          expect.objectContaining({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: expect.objectContaining({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
          }),
        ]),
      );
      api.hasOutput('AlarmTopicArn', {});
    });

    it('subscribes the alarmEmail address; refuses something that is not one', () => {
      // The app as deployed (./app-fixture.ts: alarmEmail oncall@example.com), shared with the suites that read it.
      const stack = deployedStacks().api;
      Template.fromStack(stack).hasResourceProperties('AWS::SNS::Subscription', {
        Protocol: 'email',
        Endpoint: 'oncall@example.com',
        TopicArn: { Ref: stack.getLogicalId(stack.alarmTopic.node.defaultChild as CfnElement) },
      });
      const other = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
      const otherData = new RefloopStatefulStack(other, 'BadStateful');
      expect(
        () => new RefloopApiStack(other, 'BadApi', { table: otherData.table, secretsKey: otherData.secretsKey, alarmEmail: 'oncall' }),
      ).toThrow('alarmEmail must be an email address');
    });
  });

  describe('the secrets key', () => {
    const keyArn = () => ({ 'Fn::ImportValue': expect.stringContaining('SecretsKey') });
    const kmsStatements = (name: string) => statementsOf(name).filter((s) => actionList(s).some((a) => a.startsWith('kms:')));
    const condition = {
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['account_id'] },
      Null: { 'kms:EncryptionContextKeys': 'false' },
    };

    it('is a customer-managed key in the stateful stack: rotation on, retained, output for the operator CLI', () => {
      const keys = Object.values(stateful.findResources('AWS::KMS::Key')) as Resource[];
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
        Properties: { EnableKeyRotation: true, PendingWindowInDays: 30 },
      });
      stateful.hasOutput('SecretsKeyArn', {});
    });

    it('only the functions that read a provider secret and the delivery worker may decrypt; only the secret writers may encrypt', () => {
      const decrypt = allNames()
        .filter((n) => kmsStatements(n).some((s) => actionList(s).includes('kms:Decrypt')))
        .sort();
      const encrypt = allNames()
        .filter((n) => kmsStatements(n).some((s) => actionList(s).includes('kms:Encrypt')))
        .sort();
      expect(decrypt).toEqual([
        'ConvertReferral',
        'ConvertReferralV1',
        'ExportTaxDetails',
        'GetPortalTaxDetails',
        'PayoutRails',
        'PaypalRailWebhook',
        'PortalStripeAccountLink',
        'ProviderWebhook',
        'RewardFanout',
        'StripeConnectRailWebhook',
        'SubscriptionSync',
        'WebhookDelivery',
        'WiseRailWebhook',
      ]);
      expect(encrypt).toEqual(['CreateWebhookEndpoint', 'PutPortalTaxDetails', 'SetPayoutRail', 'SetProviderConnection']);
      // The same lists, from the flags of the route and worker tables.
      expect(decrypt).toEqual(
        [
          ...routes
            .filter(
              (r) =>
                (r.providerSecrets || r.providerWebhookSecrets || r.taxDetails || (r.railSecrets && r.name !== 'DeletePayoutRail')) &&
                !SECRET_WRITERS.includes(r.name),
            )
            .map((r) => r.name),
          ...workers.filter((w) => w.providerSecrets || w.webhookSecrets || w.railSecrets).map((w) => w.name),
          ...scheduledJobs.filter((j) => j.providerSecrets).map((j) => j.name),
        ].sort(),
      );
    });

    it('grants exactly kms:Decrypt / kms:Encrypt on the key, with account_id as the only encryption context key, and names the key in SECRETS_KMS_KEY_ID; others get neither', () => {
      for (const name of allNames()) {
        const expected = kmsActionsOf(name);
        const statements = kmsStatements(name);
        expect({ name, actions: statements.flatMap(actionList).sort() }).toEqual({ name, actions: [...expected].sort() });
        for (const s of statements) {
          expect({ name, effect: s.Effect, resource: s.Resource, condition: s.Condition }).toEqual({
            name,
            effect: 'Allow',
            resource: keyArn(),
            condition,
          });
        }
        const env = resource(api, logicalId(name)).Properties.Environment.Variables as Record<string, unknown>;
        expect({ name, env: env.SECRETS_KMS_KEY_ID ?? null }).toEqual({ name, env: expected.length > 0 ? keyArn() : null });
      }
      // The webhook endpoint's delete removes the signing secret's item: no key for it.
      expect(kmsActionsOf('DeleteWebhookEndpoint')).toEqual([]);
    });
  });

  describe('the SES identity', () => {
    it('synth without -c emailIdentity warns that member emails cannot be sent', () => {
      Annotations.fromStack(apiStack).hasWarning('*', Match.stringLikeRegexp('member emails cannot be sent until one is .*emailIdentity'));
    });

    it('no warning when an identity is given', () => {
      // The app as deployed (./app-fixture.ts: emailIdentity mail.example.com).
      const stack = deployedStacks().api;
      Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('member emails cannot be sent'));
      flatTemplate(stack).hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ EMAIL_DEFAULT_FROM: 'no-reply@mail.example.com' }) },
      });
    });
  });
});

describe('bundling (real esbuild run)', () => {
  const MAX_BYTES = 350 * 1024;
  let outdir: string;

  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'refloop-bundle-'));
  });
  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
  });

  it('bundles a handler, SDK included, minified under 350 KB, loadable as CommonJS', () => {
    const route = routes.find((r) => r.name === 'CreateReferral') ?? routes[0];
    if (!route) throw new Error('route table is empty');
    const app = new App({ outdir });
    const stack = new Stack(app, 'BundleTest');
    new RefloopFunction(stack, route.name, { entry: route.entry, description: route.name });
    const assembly = app.synth();

    const assets = readdirSync(assembly.directory).filter((d) => d.startsWith('asset.'));
    expect(assets).toHaveLength(1);
    const dir = join(assembly.directory, assets[0] as string);
    const bundle = join(dir, 'index.js');
    expect(existsSync(join(dir, 'index.js.map'))).toBe(true);
    const size = statSync(bundle).size;
    // Printed on request (TEST_REPORTS=1) so the figure can be tracked; `npm run bench` has all of them.
    if (process.env.TEST_REPORTS === '1')
      console.log(`${route.entry}: ${size} bytes (${(size / 1024).toFixed(1)} KiB) minified, AWS SDK bundled`);
    expect(size).toBeLessThan(MAX_BYTES);

    const load = spawnSync(
      process.execPath,
      ['-e', "process.exit(typeof require(process.argv[1]).handler === 'function' ? 0 : 3)", bundle],
      { env: { ...process.env, TABLE_NAME: 'bundle-test' }, encoding: 'utf8' },
    );
    // stderr shown only on failure: the SDK may warn about Node 20 on stderr, which is no failure.
    expect({ status: load.status, stderr: load.status === 0 ? '' : load.stderr }).toEqual({ status: 0, stderr: '' });
  }, 120_000);

  it("inlines the built portal page into PortalPage's bundle (no file to read in Lambda)", () => {
    const route = routes.find((r) => r.name === 'PortalPage');
    if (!route) throw new Error('no PortalPage route');
    const html = readFileSync(join(__dirname, '..', '..', 'web', 'dist', 'portal.html'), 'utf8');
    const encoded = Buffer.from(html, 'utf8').toString('base64');
    const app = new App({ outdir: join(outdir, 'portal') });
    const stack = new Stack(app, 'PortalBundleTest');
    new RefloopFunction(stack, route.name, {
      entry: route.entry,
      description: route.name,
      define: { [PORTAL_HTML_DEFINE]: JSON.stringify(encoded) },
    });
    const assembly = app.synth();
    const [asset] = readdirSync(assembly.directory).filter((d) => d.startsWith('asset.'));
    const bundle = readFileSync(join(assembly.directory, asset as string, 'index.js'), 'utf8');
    expect(bundle).toContain(encoded);
    expect(bundle).not.toContain('REFLOOP_PORTAL_HTML_B64');
  }, 120_000);
});
