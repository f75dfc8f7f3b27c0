// The one Lambda construct: every HTTP handler (and later every worker) is built with these defaults,
// and gets table access only through `bindTable`, so least privilege is decided in one place.
import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

/** The repository root: handler entries in `functions/routes.ts` are relative to it. */
export const repoRoot = path.resolve(__dirname, '..', '..');

export type TableBinding = 'read' | 'write';

/** The metric contract's namespace and `service` dimension (shared/metrics.ts); ./monitoring.ts reads the same. */
export const METRICS_NAMESPACE = 'Refloop';
export const SERVICE_NAME = 'refloop';
export const POWERTOOLS_ENVIRONMENT = { POWERTOOLS_SERVICE_NAME: SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE } as const;

/**
 * esbuild options shared by every function.
 * - The AWS SDK v3 is bundled rather than taken from the runtime: the version is the one we test
 *   against, and a tree-shaken bundle loads faster at cold start than the runtime's full SDK.
 * - CommonJS output: middy 6 is ESM-only, but esbuild converts ESM dependencies into a CJS bundle
 *   without the `createRequire` banner an ESM bundle needs for the SDK's CJS internals.
 * - `module` before `main` picks the SDK's ES builds, which tree-shake far better than its dist-cjs
 *   (a handler: about 540 KB with `main` first, 340 KB with `module`, before the next point).
 * - The SDK's default credential chain is replaced by its environment-variable link, the only one that
 *   runs in Lambda (see lambda-credentials.ts): a third of the bundle, and of its parse time, goes.
 * - Separate source maps without sources keep the deployed code small; NODE_OPTIONS turns them on.
 */
const bundling: BundlingOptions = {
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  target: 'node22',
  format: OutputFormat.CJS,
  mainFields: ['module', 'main'],
  bundleAwsSDK: true,
  // The one exception: the KMS client comes from the Lambda runtime's SDK, loaded lazily on a function's
  // first cold secret read (shared/secrets/kms.ts says why).
  externalModules: ['@aws-sdk/client-kms'],
  // Resolved from the bundling working directory, the project root.
  esbuildArgs: { '--alias': ['@aws-sdk/credential-provider-node=./infra/cloud/lambda-credentials.ts'] },
};

export interface RefloopFunctionProps {
  /** Handler module relative to the repository root; it exports `handler`. */
  entry: string;
  /** Shown in the console, e.g. `GET /v1/referrals/`. */
  description: string;
  /** Only when a function needs more than the default (workers with long provider calls). */
  timeout?: Duration;
  /** Concurrency reserved for (and capping) this function: queue workers (./queue-worker.ts). */
  reservedConcurrentExecutions?: number;
  /**
   * A role shared with the functions that need exactly the same permissions (the API stack's routes: see
   * RouteRoles in ./api-stack.ts). Without one, the function gets a role of its own.
   */
  role?: IRole;
  /**
   * A log group shared with other functions (the API stack's routes share one: a group per route would
   * take the stack past CloudFormation's 500 resources). Lambda then names each log stream
   * `<date>/<function name>[<version>]<instance>`, so a function's lines stay findable; every line also
   * carries the route (shared/log.ts). Without one, the function gets a group of its own.
   */
  logGroup?: ILogGroup;
  /**
   * Constants the bundler inlines (esbuild `define`): expressions replaced by literals at build time, e.g.
   * the member portal's page (`process.env.REFLOOP_PORTAL_HTML`, shared/portal/page.ts), which is not an
   * environment variable at run time (Lambda's 4 KB of those stay free).
   */
  define?: Record<string, string>;
}

export class RefloopFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: RefloopFunctionProps) {
    // Logs of the stateless stack go with it: they are diagnostics, not business data.
    const logGroup =
      props.logGroup ??
      new LogGroup(scope, `${id}Logs`, {
        retention: RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
    super(scope, id, {
      entry: path.join(repoRoot, props.entry),
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: path.join(repoRoot, 'package-lock.json'),
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      // Graviton: about 20% cheaper per GB-second than x86 for the same work.
      architecture: Architecture.ARM_64,
      // Handlers are I/O bound (one to three DynamoDB round trips), but CPU scales with memory and the
      // cold start (parsing the bundle, the first TLS handshake) is CPU bound: 512 MB keeps cold starts
      // short while costing a quarter of a full vCPU (1,769 MB). Tune with measurements, per function
      // if needed, not by guessing.
      memorySize: 512,
      // API Gateway gives up after 30 s; a handler does at most one provider call, so 10 s is ample
      // and a stuck call fails well before the gateway's own timeout.
      timeout: props.timeout ?? Duration.seconds(10),
      logGroup,
      ...(props.reservedConcurrentExecutions ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions } : {}),
      ...(props.role ? { role: props.role } : {}),
      // X-Ray active tracing: Lambda samples the invocations and runs the daemon that shared/tracing.ts sends
      // the handler's subsegments to (SDK and provider calls); the role gets xray:PutTraceSegments for it.
      tracing: Tracing.ACTIVE,
      // Powertools (shared/log.ts, shared/metrics.ts) reads its service name and metric namespace from here:
      // every metric lands in `Refloop` with the dimension service=refloop, which the alarms and the
      // CloudWatch dashboard (./monitoring.ts) are built on.
      environment: { NODE_OPTIONS: '--enable-source-maps', ...POWERTOOLS_ENVIRONMENT },
      bundling: props.define ? { ...bundling, define: props.define } : bundling,
    });
  }

  /** The table access `bindTable` granted (none: undefined); ./nag.ts reads it. */
  tableAccess?: TableBinding;

  /** Names the table in TABLE_NAME and grants read-only or read-write data access, nothing else. */
  bindTable(table: ITable, access: TableBinding): this {
    this.tableAccess = access;
    this.addEnvironment('TABLE_NAME', table.tableName);
    if (access === 'read') table.grantReadData(this);
    else table.grantReadWriteData(this);
    return this;
  }
}
