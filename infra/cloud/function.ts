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
import { AFTER_BUNDLING_DEFINE, LAMBDA_BUNDLING, LAMBDA_NODE_OPTIONS } from './bundling';

/** The repository root: handler entries in `functions/routes.ts` are relative to it. */
export const repoRoot = path.resolve(__dirname, '..', '..');

export type TableBinding = 'read' | 'write';

/** The metric contract's namespace and `service` dimension (shared/metrics.ts); ./monitoring.ts reads the same. */
export const METRICS_NAMESPACE = 'Refloop';
export const SERVICE_NAME = 'refloop';
export const POWERTOOLS_ENVIRONMENT = { POWERTOOLS_SERVICE_NAME: SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE } as const;

/**
 * esbuild options shared by every function: ./bundling.ts describes them (and why each), for this stack
 * and for the bench and the bundle budget test, which bundle with esbuild's JS API.
 * NodejsFunction runs the esbuild CLI, which takes no plugins: its `afterBundling` step
 * (./after-bundling.ts) bundles the function again with esbuild's JS API and the plugins (the provider
 * adapters in files of their own, loaded on first use; the SDK clients' package.json reduced to their
 * version), so the deployed files are those the bench and test/unit/bundle-budget.test.ts measure.
 */
function bundlingOptions(entry: string, define: Record<string, string> | undefined): BundlingOptions {
  return {
    minify: LAMBDA_BUNDLING.minify,
    sourceMap: LAMBDA_BUNDLING.sourcemap,
    sourcesContent: LAMBDA_BUNDLING.sourcesContent,
    target: LAMBDA_BUNDLING.target,
    format: OutputFormat.CJS,
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    bundleAwsSDK: true,
    externalModules: [...LAMBDA_BUNDLING.externals],
    // Resolved from the bundling working directory, the project root.
    esbuildArgs: { '--alias': Object.entries(LAMBDA_BUNDLING.alias).map(([from, to]) => `${from}=${to}`) },
    ...(define ? { define, environment: { [AFTER_BUNDLING_DEFINE]: JSON.stringify(define) } } : {}),
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir, outputDir) => [
        `cd "${inputDir}" && node node_modules/tsx/dist/cli.mjs infra/cloud/after-bundling.ts "${outputDir}" "${entry}"`,
      ],
    },
  };
}

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
   * A role shared with the functions that need exactly the same permissions (a route group's routes: see
   * RouteRole in ./route-stack.ts). Without one, the function gets a role of its own.
   */
  role?: IRole;
  /**
   * A log group shared with other functions (every route shares RefloopApi's RouteLogs: a group per route
   * would cost a resource per route). Lambda then names each log stream
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
      environment: { NODE_OPTIONS: LAMBDA_NODE_OPTIONS, ...POWERTOOLS_ENVIRONMENT },
      bundling: bundlingOptions(props.entry, props.define),
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
