// The stateless half, RefloopApi: the one HTTP API with its `$default` route to the fallback (404 / 405
// JSON), its stage (throttle, JSON access log), the dashboard site in front of it, the queues and DLQs; the
// routes of `functions/routes.ts` in one nested stack per route group (./route-groups.ts, ./route-stack.ts),
// and the functions of the queue workers and scheduled jobs in another (./workers-stack.ts), so that every
// template keeps its room under CloudFormation's 500 resources. No authorizer at the gateway (handlers
// authenticate keys themselves) and no gateway CORS: /v1/ is a server-to-server API, and the public /js/v1/
// endpoints answer their own preflights and CORS headers (OPTIONS routes in the route table).
// Every function that sends to a queue gets its URL and send permission, and only the functions that call
// the provider's vendor API may read the provider secret (granted here, across the nested stacks).
// Operations: the alarm topic every alarm notifies (the DLQ alarms here, the others in ./monitoring.ts), JSON
// access logs of the API stage, a DLQ on every EventBridge target, and the secrets key's grants
// (./secrets-key.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, CfnOutput, CrossStackReferences, ReferenceStrength, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type CfnStage, HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Rule } from 'aws-cdk-lib/aws-events';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { AwsCustomResource, AwsCustomResourcePolicy, Logging, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { fallbackRoute, type Route, routes as routeTable } from '../../functions/routes';
import { scheduledJobs, workers } from '../../functions/workers';
import { QUEUES, type QueueName } from '../../shared/queue/queues';
import { createAlarmTopic, deadLetterAlarm } from './alarms';
import { RefloopFunction } from './function';
import { MemberEmail } from './member-email';
import { DLQ_RETENTION, QueueWorker } from './queue-worker';
import { ROUTE_GROUPS, routeGroup, WORKERS_GROUP } from './route-groups';
import { RouteGroupStack, slidesPortalSessions, slidesSessions } from './route-stack';
import { grantSecretsKey, secretsKeyUses } from './secrets-key';
import { WorkersStack } from './workers-stack';
import { DashboardSite } from './dashboard-site';
import { ORIGINS_PLACEHOLDER } from '../../shared/portal/page';
import { ORIGIN_VERIFY_ENV } from '../../shared/http/client-ip';

export { gatewayPath, routeProfile } from './route-stack';
export { scheduleTargetRetry } from './workers-stack';

export interface RefloopApiStackProps extends StackProps {
  table: ITable;
  /** The key the application encrypts secrets with (RefloopStatefulStack); granted per function in ./secrets-key.ts. */
  secretsKey: IKey;
  /** Subscribed by email to the alarm topic; CDK context `alarmEmail`. */
  alarmEmail?: string;
  /** Verified SES identity (domain or address) member emails are sent from; CDK context `emailIdentity`. */
  emailIdentity?: string;
  /** The HTTP API stage's default route throttle (requests/s and burst); CDK context `apiThrottleRate` / `apiThrottleBurst`. */
  apiThrottle?: { rateLimit: number; burstLimit: number };
  /** Concurrency reserved for each queue worker (0, the default: none); CDK context `workerReservedConcurrency` (opt-in). */
  workerReservedConcurrency?: number;
  /** The built dashboard (web/dist); without it the stack has no dashboard (tests of other parts). */
  dashboardDir?: string;
  /** The public URL when a custom domain fronts the distribution; CDK context `publicBaseUrl`. */
  publicBaseUrl?: string;
  /** The routes (functions/routes.ts by default; the infra tests add one to see what a route costs). */
  routes?: readonly Route[];
}

/**
 * A flood of requests (unknown keys included: they fail in the handler, after the invocation) must not take
 * the account's whole Lambda concurrency: the stage throttles every route at this rate and burst by default
 * (API Gateway answers 429 itself, no Lambda runs). Queue workers reserve no concurrency by default (a new
 * account's quota is often too small: the first deploy would fail, see ./queue-worker.ts); each event source
 * is capped instead. `-c workerReservedConcurrency=5` reserves 5 per worker on an account that can spare it.
 */
export const DEFAULT_API_THROTTLE = { rateLimit: 500, burstLimit: 1000 };
export const DEFAULT_WORKER_RESERVED_CONCURRENCY = 0;

/** The stack's throttle and worker reservation from CDK context (`-c apiThrottleRate=1000 ...`), defaults above. */
export function limitsFromContext(scope: Construct): Pick<RefloopApiStackProps, 'apiThrottle' | 'workerReservedConcurrency'> {
  const numberContext = (name: string, fallback: number): number => {
    const raw: unknown = scope.node.tryGetContext(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (typeof raw === 'boolean' || raw === '' || !Number.isFinite(n) || n < 0)
      throw new Error(`context ${name} must be a non-negative number, got ${String(raw)}`);
    return n;
  };
  return {
    apiThrottle: {
      rateLimit: numberContext('apiThrottleRate', DEFAULT_API_THROTTLE.rateLimit),
      burstLimit: numberContext('apiThrottleBurst', DEFAULT_API_THROTTLE.burstLimit),
    },
    workerReservedConcurrency: numberContext('workerReservedConcurrency', DEFAULT_WORKER_RESERVED_CONCURRENCY),
  };
}

/** Placeholder identity for synth without context; deploy with `-c emailIdentity=<your verified identity>`. */
export const DEFAULT_EMAIL_IDENTITY = 'example.com';

/** The id of the synth warning given without `-c emailIdentity=` (acknowledge it to silence it on purpose). */
export const MISSING_EMAIL_IDENTITY_WARNING = '@refloop/missing-email-identity';

/**
 * The fields of each access log line (JSON, one line per request). `ip` is the connecting address, which
 * behind the distribution is a CloudFront edge: HTTP API access logs have no variable for a request header,
 * so the viewer's address (CloudFront-Viewer-Address) cannot be logged here. It is in the distribution's
 * standard access log (`c-ip`, ./dashboard-site.ts), and it is what the per-IP limits key on
 * (shared/http/client-ip.ts). The path holds ids, never a credential (keys, session cookies and tokens
 * travel in headers and bodies); the query string is not logged.
 */
export const ACCESS_LOG_FORMAT = {
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
};

/**
 * Partition keys of the provider secret items (`providerSecretKey` in shared/store/table.ts:
 * `A#<acct>#PROVIDER_SECRET`), for the dynamodb:LeadingKeys condition. Account ids are exactly 16
 * hex characters, so the pattern uses 16 single-character wildcards: a tenant-chosen key part that
 * happens to end in `#PROVIDER_SECRET` (a user identifier in a claim key) is not caught by it.
 */
export const PROVIDER_SECRET_KEY_PATTERN = `A#${'?'.repeat(16)}#PROVIDER_SECRET`;

/**
 * Partition keys of Paddle Billing's / Stripe's webhook secret (`providerWebhookSecretKey`:
 * `A#<acct>#PROVIDER_WEBHOOK_SECRET`): readable only by their intake routes, which in turn are denied the
 * API secret above. Neither pattern matches the other's key (`?` is exactly one character).
 */
export const PROVIDER_WEBHOOK_SECRET_KEY_PATTERN = `A#${'?'.repeat(16)}#PROVIDER_WEBHOOK_SECRET`;

/** Partition keys of the webhook signing secrets (`webhookKeys.webhookSecret`: `A#<acct>#WEBHOOK_SECRET`). */
export const WEBHOOK_SECRET_KEY_PATTERN = `A#${'?'.repeat(16)}#WEBHOOK_SECRET`;

/**
 * Partition keys of members' tax details (`A#<acct>#TAX#DETAILS`, shared/store/tax-details.ts): only the
 * portal's tax-details routes and the tax export (`taxDetails` in functions/routes.ts) may touch them.
 */
export const TAX_DETAILS_KEY_PATTERN = `A#${'?'.repeat(16)}#TAX#*`;

/**
 * Partition keys of the payout-rail secrets (`A#<acct>#RAIL_SECRET`, shared/store/rail-connections.ts): only
 * the routes with `railSecrets` (functions/routes.ts) may touch them. `A#<acct>#RAIL`, the public part, is
 * not matched (the pattern has no trailing wildcard).
 */
export const RAIL_SECRET_KEY_PATTERN = `A#${'?'.repeat(16)}#RAIL_SECRET`;

/** The item actions whose dynamodb:LeadingKeys is the partition key (of the table or of the index queried). */
export const SECRET_ITEM_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
  // A write can read too (ReturnValues: ALL_OLD); no function writes the secret (the admin CLI does).
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];

/**
 * The vendor auth code (provider secret) lets whoever holds it act on the tenant's Paddle account
 * (credit, refund, cancel). Table grants are per table, not per item, so every function that does not
 * call the vendor API gets an explicit Deny on the secret items; an explicit Deny wins over any Allow,
 * so a bug or an injected query in those functions still cannot read the code.
 * - Item actions: denied when any partition key they touch matches the secret's (LeadingKeys).
 * - Scan has no partition key, so the LeadingKeys condition would never match it: it is denied outright
 *   (no function scans; the backfill pages the provider-accounts registry with Query).
 */
export function denyProviderSecrets(fn: RefloopFunction, table: ITable): void {
  const resources = [table.tableArn, `${table.tableArn}/index/*`];
  fn.addToRolePolicy(
    new PolicyStatement({
      sid: 'DenyProviderSecretItems',
      effect: Effect.DENY,
      actions: SECRET_ITEM_ACTIONS,
      resources,
      conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [PROVIDER_SECRET_KEY_PATTERN] } },
    }),
  );
  fn.addToRolePolicy(new PolicyStatement({ sid: 'DenyTableScan', effect: Effect.DENY, actions: ['dynamodb:Scan'], resources }));
}

/**
 * Webhook signing secrets sign deliveries as the tenant: only the endpoint create / delete routes (which
 * write and delete them) and the delivery worker (which signs) may touch their items.
 */
export function denyWebhookSecrets(fn: RefloopFunction, table: ITable): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      sid: 'DenyWebhookSecretItems',
      effect: Effect.DENY,
      actions: SECRET_ITEM_ACTIONS,
      resources: [table.tableArn, `${table.tableArn}/index/*`],
      conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [WEBHOOK_SECRET_KEY_PATTERN] } },
    }),
  );
}

/** The provider webhook secret items, denied like the API secret to every function but the intakes that verify with them. */
export function denyProviderWebhookSecrets(fn: RefloopFunction, table: ITable): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      sid: 'DenyProviderWebhookSecretItems',
      effect: Effect.DENY,
      actions: SECRET_ITEM_ACTIONS,
      resources: [table.tableArn, `${table.tableArn}/index/*`],
      conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [PROVIDER_WEBHOOK_SECRET_KEY_PATTERN] } },
    }),
  );
}

/** The payout-rail secrets (they move the tenant's money), denied like the provider secrets to every function but their routes. */
export function denyRailSecrets(fn: RefloopFunction, table: ITable): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      sid: 'DenyRailSecretItems',
      effect: Effect.DENY,
      actions: SECRET_ITEM_ACTIONS,
      resources: [table.tableArn, `${table.tableArn}/index/*`],
      conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [RAIL_SECRET_KEY_PATTERN] } },
    }),
  );
}

/** Members' tax details (legal name, address, TIN), denied like the secrets to every function but their routes. */
export function denyTaxDetails(fn: RefloopFunction, table: ITable): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      sid: 'DenyTaxDetailItems',
      effect: Effect.DENY,
      actions: SECRET_ITEM_ACTIONS,
      resources: [table.tableArn, `${table.tableArn}/index/*`],
      conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [TAX_DETAILS_KEY_PATTERN] } },
    }),
  );
}

/** Who may decrypt or encrypt with the secrets key, by function name (./secrets-key.ts). */
const keyUses = secretsKeyUses();

/** `provider-events` -> `ProviderEvents`, for output ids. */
const pascal = (name: string) => name.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase());

export class RefloopApiStack extends Stack {
  readonly api: HttpApi;
  /** Every function by route, worker or job name (`Fallback` included), for grants and references added later. */
  readonly functions = new Map<string, RefloopFunction>();
  /** The nested stack of each route group, by group id (./route-groups.ts). */
  readonly routeGroups = new Map<string, RouteGroupStack>();
  /** The nested stack of the queue workers, the scheduled jobs and the SES events. */
  readonly workers: WorkersStack;
  /** The queue + DLQ + worker of each queue, by queue name (the worker's function is in the workers' stack). */
  readonly queueWorkers = new Map<QueueName, QueueWorker>();
  /** The EventBridge rule of each scheduled job, by job name (in the workers' stack). */
  readonly schedules: Map<string, Rule>;
  /** The dashboard's distribution and bucket (when built with `dashboardDir`). */
  site?: DashboardSite;
  /** Every alarm of the app notifies it (this stack's DLQ alarms, RefloopMonitoringStack's). */
  readonly alarmTopic: Topic;
  /** Schedule events EventBridge could not hand to their job (./alarms.ts alarms on it). */
  readonly scheduleDeadLetterQueue: Queue;
  /** The SES events rule and its DLQ. */
  readonly memberEmail: MemberEmail;
  /** Every DLQ alarm of this stack: one per queue worker, one per EventBridge DLQ. */
  readonly deadLetterAlarms: Alarm[] = [];
  /** The JSON access log of the API's $default stage. */
  readonly accessLogs: LogGroup;
  /** The secret origin header's value (with the dashboard site only), and the custom resource that reads it. */
  originSecret?: Secret;
  originSecretReader?: AwsCustomResource;

  constructor(scope: Construct, id: string, props: RefloopApiStackProps) {
    super(scope, id, props);
    // Import the table's name and ARN as CloudFormation exports: the stateful stack then cannot be
    // deleted, nor its table swapped out, while this stack (its nested stacks included) still uses it.
    // (Must precede any child.)
    CrossStackReferences.of(this).consume(ReferenceStrength.STRONG);
    const routes = props.routes ?? routeTable;

    // The stack still synthesizes without an SES identity (for a look at the templates), but says that
    // member emails will not go out: the placeholder is not an identity anyone has verified.
    if (props.emailIdentity === undefined) {
      Annotations.of(this).addWarningV2(
        MISSING_EMAIL_IDENTITY_WARNING,
        `No SES identity configured: member emails cannot be sent until one is (deploy with -c emailIdentity=<a verified domain or address>); the stack uses the placeholder ${DEFAULT_EMAIL_IDENTITY}.`,
      );
    }

    this.alarmTopic = createAlarmTopic(this, 'AlarmTopic', props.alarmEmail);

    // Unmatched method or path: no table access at all.
    const fallback = new RefloopFunction(this, fallbackRoute.name, {
      entry: fallbackRoute.entry,
      description: 'Fallback: 404 / 405 for unmatched requests',
    });
    this.functions.set(fallbackRoute.name, fallback);

    // The construct id is not `HttpApi` since the routes moved into the groups' nested stacks: a stack
    // deployed before then is upgraded with a new API (its routes are created in the nested stacks before the
    // old API and its routes are deleted, and one API cannot hold a route key twice). The distribution's
    // origin follows; the execute-api URL (output ApiUrl) changes once, PublicUrl does not. The monitoring
    // stack imports the old API's id, so it is destroyed before that upgrade (docs/operations.md).
    this.api = new HttpApi(this, 'GroupedHttpApi', {
      apiName: `${this.stackName}-http`,
      description: 'Refloop referral-programme API',
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
    });
    // HttpApi has no throttle option for the stage it creates; set the $default stage's route defaults on it.
    const throttle = props.apiThrottle ?? DEFAULT_API_THROTTLE;
    const stage = this.api.defaultStage?.node.defaultChild as CfnStage | undefined;
    if (!stage) throw new Error('the HTTP API has no $default stage');
    stage.defaultRouteSettings = { throttlingRateLimit: throttle.rateLimit, throttlingBurstLimit: throttle.burstLimit };
    // Nor an access log option: one JSON line per request (ACCESS_LOG_FORMAT) to a group kept 30 days. Unlike
    // REST APIs, HTTP APIs need no account-wide CloudWatch role: API Gateway sets up the delivery when the stage
    // deploys. (Nor X-Ray: HTTP APIs do not support tracing, REST APIs do; a request's trace starts at its
    // Lambda function, which traces actively.)
    this.accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    stage.accessLogSettings = { destinationArn: this.accessLogs.logGroupArn, format: JSON.stringify(ACCESS_LOG_FORMAT) };

    // One log group for every route's function, whatever its group (30 days, like the workers' own groups).
    const routeLogs = new LogGroup(this, 'RouteLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });

    // The member portal's page (shared/portal/page.ts) is the built web/dist/portal.html, inlined into its
    // function's bundle (base64: the bundler's command line sees only [A-Za-z0-9+/=]); without a built
    // dashboard the stack has no portal page either.
    const portalHtml = props.dashboardDir ? readFileSync(join(props.dashboardDir, 'portal.html'), 'utf8') : undefined;
    if (portalHtml !== undefined && !portalHtml.includes(ORIGINS_PLACEHOLDER))
      throw new Error(`${props.dashboardDir}/portal.html has no ${ORIGINS_PLACEHOLDER}: rebuild web/`);

    let originSecret: string | undefined;
    if (props.dashboardDir) {
      // The distribution adds this secret to every request it sends to the API, and the HTTP handlers refuse
      // any request without it (shared/http/client-ip.ts): the execute-api URL cannot bypass CloudFront, and
      // CloudFront-Viewer-Address is believed only on requests that came through it. Secrets Manager generates
      // it once per stack; a custom resource reads it at each deploy (the same value every time) for the
      // functions' environment and the distribution's origin header. (Not a {{resolve:secretsmanager}}
      // dynamic reference: a template may hold 60 of them, and 80-odd functions need the value.)
      this.originSecret = new Secret(this, 'OriginVerifySecret', {
        description: 'Refloop: the header value CloudFront adds to API requests (X-Refloop-Origin-Verify)',
        generateSecretString: { passwordLength: 48, excludePunctuation: true },
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const read = {
        service: 'SecretsManager',
        action: 'getSecretValue',
        parameters: { SecretId: this.originSecret.secretArn },
        physicalResourceId: PhysicalResourceId.of('origin-verify-secret'),
        outputPaths: ['SecretString'],
        // The value never reaches the handler's log.
        logging: Logging.withDataHidden(),
      };
      this.originSecretReader = new AwsCustomResource(this, 'OriginVerifyValue', {
        onCreate: read,
        onUpdate: read,
        policy: AwsCustomResourcePolicy.fromSdkCalls({ resources: [this.originSecret.secretArn] }),
        installLatestAwsSdk: false,
      });
      originSecret = this.originSecretReader.getResponseField('SecretString');
      fallback.addEnvironment(ORIGIN_VERIFY_ENV, originSecret);
    }

    // Schedule events that never reached their job go to one DLQ (nothing to replay there: it says a run was
    // missed, and why, in the message's attributes).
    this.scheduleDeadLetterQueue = new Queue(this, 'ScheduleDeadLetterQueue', {
      retentionPeriod: DLQ_RETENTION,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.deadLetterAlarms.push(
      deadLetterAlarm(
        this,
        'ScheduleDeadLetterAlarm',
        this.scheduleDeadLetterQueue,
        "A scheduled job was not invoked: its schedule event is in the schedules' DLQ",
        this.alarmTopic,
      ),
    );
    // The workers' and jobs' functions and the schedules, in a nested stack of their own.
    this.workers = new WorkersStack(this, WORKERS_GROUP, { table: props.table, scheduleDeadLetterQueue: this.scheduleDeadLetterQueue });
    this.schedules = this.workers.schedules;

    // Workers write their effects and idempotency markers in one transaction: read-write. Their queues, DLQs
    // and DLQ alarms stay here (they hold messages), their functions go to the workers' stack.
    for (const worker of workers) {
      if (this.queueWorkers.has(worker.queue)) throw new Error(`Queue ${worker.queue} has two consumers`);
      const queueWorker = new QueueWorker(this, worker.name, {
        worker,
        table: props.table,
        tableAccess: 'write',
        reservedConcurrency: props.workerReservedConcurrency ?? DEFAULT_WORKER_RESERVED_CONCURRENCY,
        alarmTopic: this.alarmTopic,
        functionScope: this.workers,
      });
      this.deadLetterAlarms.push(queueWorker.alarm);
      this.queueWorkers.set(worker.queue, queueWorker);
    }

    const emailSender = this.queueWorkers.get('member-emails');
    const emailEvents = this.queueWorkers.get('email-events');
    if (!emailSender || !emailEvents) throw new Error('functions/workers.ts must consume member-emails and email-events');
    this.memberEmail = new MemberEmail(this, 'MemberEmail', {
      identity: props.emailIdentity ?? DEFAULT_EMAIL_IDENTITY,
      sender: emailSender,
      events: emailEvents,
      alarmTopic: this.alarmTopic,
    });
    this.deadLetterAlarms.push(this.memberEmail.deadLetterAlarm);

    // One nested stack per route group, each attaching its routes to this API; a group without routes has none.
    for (const group of ROUTE_GROUPS) {
      const mine = routes.filter((r) => routeGroup(r) === group.id);
      if (mine.length === 0) continue;
      const groupStack = new RouteGroupStack(this, group.id, {
        routes: mine,
        description: group.description,
        api: this.api,
        table: props.table,
        logGroup: routeLogs,
        ...(portalHtml !== undefined ? { portalHtml } : {}),
        ...(originSecret !== undefined ? { originSecret } : {}),
      });
      this.routeGroups.set(group.id, groupStack);
      for (const [name, fn] of groupStack.functions) this.register(name, fn);
    }
    for (const worker of workers) this.register(worker.name, (this.queueWorkers.get(worker.queue) as QueueWorker).fn);
    for (const [name, fn] of this.workers.functions) this.register(name, fn);

    for (const worker of workers) {
      const queueWorker = this.queueWorkers.get(worker.queue);
      if (!queueWorker) throw new Error(`no queue worker for ${worker.queue}`);
      new CfnOutput(this, `${pascal(worker.queue)}QueueUrl`, { value: queueWorker.queue.queueUrl, description: `Queue ${worker.queue}` });
      new CfnOutput(this, `${worker.name}DlqAlarmName`, {
        value: queueWorker.alarm.alarmName,
        description: `Alarm on the DLQ of ${worker.queue}`,
      });
    }
    new CfnOutput(this, 'ScheduleDeadLetterQueueUrl', {
      value: this.scheduleDeadLetterQueue.queueUrl,
      description: "DLQ of the scheduled jobs' EventBridge targets",
    });

    // Queue URLs and send permission for the functions that send; the provider secret for those that need it.
    const users = [
      ...routes.map((r) => ({
        name: r.name,
        sends: r.queues ?? [],
        providerSecrets: r.providerSecrets === true,
        webhookSecrets: r.webhookSecrets === true,
        providerWebhookSecrets: r.providerWebhookSecrets === true,
        taxDetails: r.taxDetails === true,
        railSecrets: r.railSecrets === true,
      })),
      ...workers.map((w) => ({
        name: w.name,
        sends: w.sends,
        providerSecrets: w.providerSecrets,
        webhookSecrets: w.webhookSecrets === true,
        providerWebhookSecrets: false,
        taxDetails: false,
        railSecrets: w.railSecrets === true,
      })),
      ...scheduledJobs.map((j) => ({
        name: j.name,
        sends: j.sends,
        providerSecrets: j.providerSecrets,
        webhookSecrets: false,
        providerWebhookSecrets: false,
        taxDetails: false,
        railSecrets: false,
      })),
    ];
    for (const user of users) {
      const fn = this.functions.get(user.name);
      if (!fn) throw new Error(`No function for ${user.name}`);
      for (const q of new Set(user.sends)) {
        const queue = this.queueWorkers.get(q)?.queue;
        if (!queue) throw new Error(`${user.name} sends to ${q}, which has no worker in functions/workers.ts`);
        fn.addEnvironment(QUEUES[q].envVar, queue.queueUrl);
        queue.grantSendMessages(fn);
      }
      if (!user.providerSecrets) denyProviderSecrets(fn, props.table);
      if (!user.webhookSecrets) denyWebhookSecrets(fn, props.table);
      if (!user.providerWebhookSecrets) denyProviderWebhookSecrets(fn, props.table);
      if (!user.taxDetails) denyTaxDetails(fn, props.table);
      if (!user.railSecrets) denyRailSecrets(fn, props.table);
      const keyUse = keyUses.get(user.name);
      if (keyUse) grantSecretsKey(fn, props.secretsKey, keyUse);
    }

    new CfnOutput(this, 'EmailEventsRuleDeadLetterQueueUrl', {
      value: this.memberEmail.deadLetterQueue.queueUrl,
      description: 'DLQ of the SES events rule (move its messages to the email-events queue)',
    });

    // Read-only routes still count requests: an UpdateItem of a rate window item `A#<acct>#RATE#<scope>#<start>`
    // (shared/store/rate-limits.ts), and nothing else.
    const countRateWindow = () =>
      new PolicyStatement({
        sid: 'CountRateWindow',
        actions: ['dynamodb:UpdateItem'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['A#*#RATE#*'] } },
      });

    // Dashboard sessions slide their expiry on use, also in the read-only routes: those may update session
    // items (`SESSION#<digest>`) and nothing else.
    // An affiliate's portal cookie session slides the same way (`PORTAL_SESSION#<digest>`), in the portal's read routes.
    for (const route of routes) {
      if (!slidesPortalSessions(route)) continue;
      this.functions.get(route.name)?.addToRolePolicy(
        new PolicyStatement({
          sid: 'SlidePortalSession',
          actions: ['dynamodb:UpdateItem'],
          resources: [props.table.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PORTAL_SESSION#*'] } },
        }),
      );
      // A portal session's own request window (shared/http/portal.ts).
      this.functions.get(route.name)?.addToRolePolicy(countRateWindow());
    }
    for (const route of routes) {
      if (!slidesSessions(route)) continue;
      this.functions.get(route.name)?.addToRolePolicy(
        new PolicyStatement({
          sid: 'SlideDashboardSession',
          actions: ['dynamodb:UpdateItem'],
          resources: [props.table.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['SESSION#*'] } },
        }),
      );
      // The same read routes count each request against the API key's rate window (and an IP's failed
      // logins against theirs).
      this.functions.get(route.name)?.addToRolePolicy(countRateWindow());
    }

    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.alarmTopic.topicArn,
      description: 'SNS topic every alarm notifies: subscribe a pager or chat to it',
    });
    new CfnOutput(this, 'ApiUrl', {
      value: this.api.apiEndpoint,
      description: props.dashboardDir
        ? "The distribution's origin: answers 403 to direct requests; use PublicUrl"
        : 'Base URL; paths start with /v1/',
    });

    if (props.dashboardDir && originSecret !== undefined) {
      this.site = new DashboardSite(this, 'Dashboard', { api: this.api, assetDir: props.dashboardDir, originSecret });
      // Absolute links (pagination, login links, the script tag) and the CSRF Origin check use the public
      // origin: the distribution's (or a custom domain's), never the Host a request claims.
      const publicUrl = props.publicBaseUrl ?? this.site.url;
      for (const fn of this.functions.values()) fn.addEnvironment('PUBLIC_BASE_URL', publicUrl);
      new CfnOutput(this, 'PublicUrl', { value: publicUrl, description: 'The API and the dashboard (/app/) on one origin: use this URL' });
      new CfnOutput(this, 'DashboardUrl', { value: `${publicUrl}/app/`, description: 'The operator dashboard' });
      new CfnOutput(this, 'AccessLogBucketName', {
        value: this.site.logBucket.bucketName,
        description: "The distribution's access logs (cloudfront/ prefix; the viewer's address is c-ip), kept 30 days",
      });
    }
  }

  private register(name: string, fn: RefloopFunction): void {
    if (this.functions.has(name)) throw new Error(`Two functions are named ${name}`);
    this.functions.set(name, fn);
  }
}
