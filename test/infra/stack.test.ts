// CDK assertions on the synthesized stacks: one function and one API route per line of the route
// table, least privilege per route, the table's safety settings. Bundling is skipped here (fast); the
// last test really bundles one handler with esbuild and checks its size.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { fallbackRoute, routes } from '../../functions/routes';
import { gatewayPath, RefloopApiStack } from '../../infra/cloud/api-stack';
import { RefloopFunction } from '../../infra/cloud/function';
import { RefloopStatefulStack } from '../../infra/cloud/stateful-stack';

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

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };

let stateful: Template;
let api: Template;
let apiStack: RefloopApiStack;

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const data = new RefloopStatefulStack(app, 'TestStateful');
  apiStack = new RefloopApiStack(app, 'TestApi', { table: data.table });
  stateful = Template.fromStack(data);
  api = Template.fromStack(apiStack);
});

function logicalId(routeName: string): string {
  const fn = apiStack.functions.get(routeName);
  if (!fn) throw new Error(`no function for ${routeName}`);
  return apiStack.getLogicalId(fn.node.defaultChild as CfnElement);
}

function resource(template: Template, id: string): Resource {
  const r = template.toJSON().Resources[id] as Resource | undefined;
  if (!r) throw new Error(`no resource ${id}`);
  return r;
}

/** Every IAM action granted to a function's role, through any policy attached to it. */
function actionsOf(routeName: string): string[] {
  const roleId = resource(api, logicalId(routeName)).Properties.Role['Fn::GetAtt'][0] as string;
  const policies = Object.values(api.findResources('AWS::IAM::Policy')) as Resource[];
  return policies
    .filter((p) => (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId })))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[] }[])
    .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
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
    const keys = (Object.values(api.findResources('AWS::ApiGatewayV2::Route')) as Resource[]).map(
      (r) => r.Properties.RouteKey as string,
    );
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
      Timeout: 10,
      Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps', TABLE_NAME: expect.anything() } },
    });
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
    for (const r of routes) expect(gatewayPath(r.path)).not.toMatch(/\/$/);
    expect(gatewayPath('/v1/referrals/{id}/')).toBe('/v1/referrals/{id}');
  });

  it('gives read routes read-only table access and write routes write access', () => {
    expect(routes.some((r) => r.table === 'read')).toBe(true);
    expect(routes.some((r) => r.table === 'write')).toBe(true);
    for (const route of routes) {
      const actions = actionsOf(route.name);
      const dynamo = actions.filter((a) => a.startsWith('dynamodb:'));
      expect({ route: route.name, unexpected: actions.filter((a) => !a.startsWith('dynamodb:')) }).toEqual({
        route: route.name,
        unexpected: [],
      });
      if (route.table === 'read') {
        expect({ route: route.name, writes: dynamo.filter((a) => !READ_ACTIONS.includes(a)) }).toEqual({
          route: route.name,
          writes: [],
        });
        expect(dynamo).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem']));
      } else {
        expect(dynamo).toEqual(expect.arrayContaining([...WRITE_ACTIONS.filter((a) => a !== 'dynamodb:TransactWriteItems'), 'dynamodb:GetItem']));
      }
    }
  });

  it('gives the fallback no table access', () => {
    expect(actionsOf(fallbackRoute.name).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
  });

  it('keeps each function log for 30 days', () => {
    const groups = Object.values(api.findResources('AWS::Logs::LogGroup')) as Resource[];
    expect(groups).toHaveLength(routes.length + 1);
    for (const g of groups) expect(g.Properties.RetentionInDays).toBe(30);
  });

  it('outputs the API URL', () => {
    api.hasOutput('ApiUrl', {});
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
    // Printed so the figure can be tracked (and copied into the README).
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
});
