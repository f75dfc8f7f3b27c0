// Room to grow (issue 24): every template of the app, RefloopApi's nested stacks included, keeps its distance
// from CloudFormation's quotas (500 resources, 200 parameters, 200 outputs a template), and a new route costs
// resources only in its own group's nested stack (infra/cloud/route-groups.ts). Bundling is skipped.
import { deployedStacks } from './app-fixture';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { fallbackRoute, type Route, routes } from '../../functions/routes';
import { RefloopApiStack } from '../../infra/cloud/api-stack';
import type { RefloopFunction } from '../../infra/cloud/function';
import { ROUTE_GROUPS, routeGroup, WORKERS_GROUP } from '../../infra/cloud/route-groups';
import type { RefloopStacks } from '../../infra/cloud/stacks';
import { RefloopStatefulStack } from '../../infra/cloud/stateful-stack';
import { CFN_RESOURCE_LIMIT, flatLogicalId, flatTemplate, stackAndNested } from './templates';

type Json = Record<string, any>;

/** Fails above this share of the quota... */
const FAIL_ABOVE = 0.8 * CFN_RESOURCE_LIMIT;
/** ...and today's routes stay at or below this one. */
const TODAY_AT_MOST = 0.6 * CFN_RESOURCE_LIMIT;

const templateOf = (stack: Stack) => Template.fromStack(stack).toJSON() as Json;
const countOf = (t: Json, section: string) => Object.keys(t[section] ?? {}).length;

let stacks: RefloopStacks;

beforeAll(() => {
  // As `cdk deploy` builds it (./app-fixture.ts).
  stacks = deployedStacks();
});

describe('every template has headroom', () => {
  it(`no stack or nested stack above ${FAIL_ABOVE} resources (80% of ${CFN_RESOURCE_LIMIT}); today none above ${TODAY_AT_MOST}`, () => {
    const all = [stacks.stateful, stacks.api, stacks.monitoring].flatMap(stackAndNested);
    // RefloopApi's nested stacks: one per route group with routes, and the workers'.
    const groups = ROUTE_GROUPS.filter((g) => routes.some((r) => routeGroup(r) === g.id)).map((g) => `RefloopApi/${g.id}`);
    expect(all.map((s) => s.node.path).sort()).toEqual(
      ['RefloopStateful', 'RefloopApi', 'RefloopMonitoring', `RefloopApi/${WORKERS_GROUP}`, ...groups].sort(),
    );
    const counts = all.map((s) => ({ stack: s.node.path, resources: countOf(templateOf(s), 'Resources') }));
    if (process.env.TEST_REPORTS === '1') console.log(counts.map((c) => `${c.stack} ${c.resources}`).join(', '));
    for (const c of counts) expect({ ...c, failsAbove: c.resources > FAIL_ABOVE }).toEqual({ ...c, failsAbove: false });
    for (const c of counts) expect({ ...c, today: c.resources <= TODAY_AT_MOST }).toEqual({ ...c, today: true });
    // Every resource of the app is in one of these templates.
    const total = counts.reduce((n, c) => n + c.resources, 0);
    expect(total).toBeGreaterThan(routes.length * 3);
  });

  it('no template near the 200 parameters or outputs a template may have (cross-stack values are both)', () => {
    for (const stack of [stacks.stateful, stacks.api, stacks.monitoring].flatMap(stackAndNested)) {
      const t = templateOf(stack);
      expect({ stack: stack.node.path, parameters: countOf(t, 'Parameters') < 150, outputs: countOf(t, 'Outputs') < 150 }).toEqual({
        stack: stack.node.path,
        parameters: true,
        outputs: true,
      });
    }
  });
});

describe('route groups', () => {
  it("puts each route's function, integration and route in its group's nested stack, on the one HTTP API", () => {
    const flat = flatTemplate(stacks.api);
    const apiId = { Ref: flatLogicalId(stacks.api.api) };
    for (const route of routes) {
      const fn = stacks.api.functions.get(route.name);
      if (!fn) throw new Error(`no function for ${route.name}`);
      expect({ route: route.name, stack: Stack.of(fn).node.path }).toEqual({ route: route.name, stack: `RefloopApi/${routeGroup(route)}` });
    }
    const apiRoutes = Object.values(flat.findResources('AWS::ApiGatewayV2::Route')) as Json[];
    const integrations = Object.values(flat.findResources('AWS::ApiGatewayV2::Integration')) as Json[];
    expect(apiRoutes).toHaveLength(routes.length + 1);
    for (const r of [...apiRoutes, ...integrations]) expect(r.Properties.ApiId).toEqual(apiId);
    expect(Object.keys(flat.findResources('AWS::ApiGatewayV2::Api'))).toHaveLength(1);
  });

  it('API Gateway invokes each group with one role, allowed exactly the functions of its group (no Lambda permission per route)', () => {
    const flat = flatTemplate(stacks.api);
    for (const group of stacks.api.routeGroups.values()) {
      const roleId = flatLogicalId(group.invokeRole);
      const role = flat.toJSON().Resources[roleId] as Json;
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' }, Action: 'sts:AssumeRole' },
      ]);
      const policies = (Object.values(flat.findResources('AWS::IAM::Policy')) as Json[]).filter(
        (p) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
      );
      const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Json[]);
      const fnArns = [...group.functions.values()].map((fn) => ({ 'Fn::GetAtt': [flatLogicalId(fn), 'Arn'] }));
      expect(statements).toEqual([
        {
          Sid: 'InvokeGroupFunctions',
          Effect: 'Allow',
          Action: 'lambda:InvokeFunction',
          Resource: fnArns.length === 1 ? fnArns[0] : fnArns,
        },
      ]);
      // Every integration of the group uses it.
      const integrations = (Object.entries(flat.findResources('AWS::ApiGatewayV2::Integration')) as [string, Json][]).filter(([id]) =>
        id.startsWith(group.node.id),
      );
      expect(integrations).toHaveLength(group.functions.size);
      for (const [, i] of integrations)
        expect(i.Properties).toMatchObject({
          IntegrationType: 'AWS_PROXY',
          PayloadFormatVersion: '2.0',
          CredentialsArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
        });
    }
    // The only Lambda permissions: the fallback's ($default route) and the schedules'.
    const permissions = Object.values(flat.findResources('AWS::Lambda::Permission')) as Json[];
    const fallbackId = flatLogicalId(stacks.api.functions.get(fallbackRoute.name) as RefloopFunction);
    expect(permissions.filter((p) => p.Properties.Principal === 'apigateway.amazonaws.com').map((p) => p.Properties.FunctionName)).toEqual([
      { 'Fn::GetAtt': [fallbackId, 'Arn'] },
    ]);
  });

  it("a new route adds resources to its own group's nested stack only", () => {
    const countsWith = (table: readonly Route[]) => {
      const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
      const data = new RefloopStatefulStack(app, 'HeadroomStateful');
      const api = new RefloopApiStack(app, 'HeadroomApi', { table: data.table, secretsKey: data.secretsKey, routes: table });
      return Object.fromEntries(
        stackAndNested(api).map((s) => [
          s.node.path,
          { resources: countOf(templateOf(s), 'Resources'), parameters: countOf(templateOf(s), 'Parameters') },
        ]),
      );
    };
    const model = routes.find(
      (r) =>
        routeGroup(r) !== ROUTE_GROUPS[0]?.id &&
        r.table === 'read' &&
        !r.queues &&
        !r.providerSecrets &&
        !r.providerWebhookSecrets &&
        !r.webhookSecrets,
    );
    if (!model) throw new Error('no read-only route outside the first group');
    const extra: Route = { ...model, name: `${model.name}Twin`, path: `${model.path}twin/` };
    const before = countsWith(routes);
    const after = countsWith([...routes, extra]);
    const group = `HeadroomApi/${routeGroup(extra)}`;
    // Its function, integration and route; its role is one its group has already.
    expect(after[group]?.resources).toBe((before[group]?.resources ?? 0) + 3);
    expect({ ...after, [group]: undefined }).toEqual({ ...before, [group]: undefined });
  });
});
