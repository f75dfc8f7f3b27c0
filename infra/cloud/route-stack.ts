// One route group's nested stack (./route-groups.ts): a function per route of the group, its integration and
// its route on the one HTTP API of RefloopApi, the roles its routes share, and one role API Gateway invokes
// the group's functions with.
//
// - The integrations carry credentials (the group's invoke role, allowed lambda:InvokeFunction on exactly the
//   group's functions) instead of a Lambda permission per function: one role and its policy per group rather
//   than a resource per route. Only this account's API Gateway can use the role: configuring an integration
//   with it takes iam:PassRole on it, which no other account can be given.
// - What the group reads from RefloopApi (the API's id, the routes' log group, the dashboard's URL, queue
//   URLs and ARNs of the workers' stack) arrives as parameters of the nested stack, which CDK adds per value.
//   The origin header's secret is a NoEcho parameter of its own, so the nested stack's parameters do not show it.
import { CfnParameter, Duration, NestedStack } from 'aws-cdk-lib';
import {
  type HttpApi,
  HttpIntegrationType,
  HttpMethod,
  HttpRoute,
  HttpRouteIntegration,
  type HttpRouteIntegrationConfig,
  HttpRouteKey,
  IntegrationCredentials,
  PayloadFormatVersion,
} from 'aws-cdk-lib/aws-apigatewayv2';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IRole, ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { Route } from '../../functions/routes';
import { ORIGIN_VERIFY_ENV } from '../../shared/http/client-ip';
import { PORTAL_HTML_DEFINE } from '../../shared/portal/page';
import { RefloopFunction } from './function';
import { secretsKeyUses } from './secrets-key';

/**
 * The route key path for a route-table path. HTTP APIs reject a route path ending in `/` (CDK refuses it
 * at synth, the service at deploy), and route `/v1/referrals` serves both `/v1/referrals` and
 * `/v1/referrals/`, so each route is registered once, without the trailing slash. Path parameters
 * use the same `{name}` syntax in both places.
 */
export function gatewayPath(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

/** A read-only route that a dashboard session may call: it slides the session's expiry (an UpdateItem). */
export const slidesSessions = (route: Route) => route.table === 'read' && ['api-key', 'session', 'login'].includes(route.auth ?? 'api-key');

/** A read-only portal route: an affiliate's cookie session slides its expiry there too (an UpdateItem). */
export const slidesPortalSessions = (route: Route) => route.table === 'read' && route.auth === 'portal';

/** Who may decrypt or encrypt with the secrets key, by function name (./secrets-key.ts). */
const keyUses = secretsKeyUses();

/** What a route's role must allow: routes of a group with the same profile share a role (see RouteGroupStack). */
export function routeProfile(route: Route): string {
  return [
    `table=${route.table}`,
    `queues=${[...new Set(route.queues ?? [])].sort().join('+') || 'none'}`,
    route.providerSecrets ? 'provider-secrets' : '',
    route.webhookSecrets ? 'webhook-secrets' : '',
    route.providerWebhookSecrets ? 'provider-webhook-secrets' : '',
    route.taxDetails ? 'tax-details' : '',
    route.railSecrets ? 'rail-secrets' : '',
    slidesSessions(route) ? 'session-slide' : '',
    slidesPortalSessions(route) ? 'portal-session-slide' : '',
    keyUses.get(route.name)?.decrypt ? 'secrets-decrypt' : '',
    keyUses.get(route.name)?.encrypt ? 'secrets-encrypt' : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** A Lambda proxy integration (payload 2.0) that API Gateway invokes with a role instead of a Lambda permission. */
export class RoleLambdaIntegration extends HttpRouteIntegration {
  constructor(
    id: string,
    private readonly handler: IFunction,
    private readonly role: IRole,
  ) {
    super(id);
  }

  bind(): HttpRouteIntegrationConfig {
    return {
      type: HttpIntegrationType.AWS_PROXY,
      uri: this.handler.functionArn,
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      credentials: IntegrationCredentials.fromRole(this.role),
    };
  }
}

export interface RouteGroupStackProps {
  /** The group's routes (a part of functions/routes.ts). */
  routes: readonly Route[];
  description: string;
  /** The one HTTP API of RefloopApi. */
  api: HttpApi;
  table: ITable;
  /** The log group every route's function writes to (RefloopApi's RouteLogs). */
  logGroup: ILogGroup;
  /** The built member portal page, inlined into the PortalPage function (with the dashboard only). */
  portalHtml?: string;
  /** The value of the secret origin header (with the dashboard only): every function of the group gets it. */
  originSecret?: string;
}

export class RouteGroupStack extends NestedStack {
  /** The group's functions by route name. */
  readonly functions = new Map<string, RefloopFunction>();
  /** The group's API routes by route name. */
  readonly routes = new Map<string, HttpRoute>();
  /** The role API Gateway assumes to invoke the group's functions. */
  readonly invokeRole: Role;

  constructor(scope: Construct, id: string, props: RouteGroupStackProps) {
    super(scope, id, { description: `Refloop routes: ${props.description}` });

    // Routes with exactly the same permissions share one role (table access, queues, secret items, the
    // session slide): a role and its policy per route would cost two resources per route. Least privilege is
    // unchanged: a role's grants are exactly what each of its routes needs.
    const roles = new Map<string, Role>();
    const roleFor = (route: Route): Role => {
      const profile = routeProfile(route);
      let role = roles.get(profile);
      if (!role) {
        role = new Role(this, `RouteRole${roles.size + 1}`, {
          assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
          description: `Routes with: ${profile}`,
          managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
        });
        roles.set(profile, role);
      }
      return role;
    };

    this.invokeRole = new Role(this, 'InvokeRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      description: `API Gateway invokes the functions of the ${id} routes with it`,
    });

    let originSecret: string | undefined;
    if (props.originSecret !== undefined) {
      const parameter = new CfnParameter(this, 'OriginVerifySecret', {
        type: 'String',
        noEcho: true,
        description: 'The secret origin header value (X-Refloop-Origin-Verify)',
      });
      parameter.overrideLogicalId('OriginVerifySecret');
      this.setParameter('OriginVerifySecret', props.originSecret);
      originSecret = parameter.valueAsString;
    }

    for (const route of props.routes) {
      const fn = new RefloopFunction(this, route.name, {
        ...(route.name === 'PortalPage' && props.portalHtml !== undefined
          ? { define: { [PORTAL_HTML_DEFINE]: JSON.stringify(Buffer.from(props.portalHtml, 'utf8').toString('base64')) } }
          : {}),
        logGroup: props.logGroup,
        entry: route.entry,
        description: `${route.method} ${route.path}`,
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : {}),
        role: roleFor(route),
      });
      // Routes without table access (the script, CORS preflights, public documentation) get no grant.
      if (route.table !== 'none') fn.bindTable(props.table, route.table);
      if (originSecret !== undefined) fn.addEnvironment(ORIGIN_VERIFY_ENV, originSecret);
      this.functions.set(route.name, fn);
      this.routes.set(
        route.name,
        new HttpRoute(this, `${route.name}Route`, {
          httpApi: props.api,
          routeKey: HttpRouteKey.with(gatewayPath(route.path), HttpMethod[route.method]),
          integration: new RoleLambdaIntegration(`${route.name}Integration`, fn, this.invokeRole),
        }),
      );
    }

    // Exactly the group's functions (unqualified: the integrations invoke $LATEST).
    if (this.functions.size > 0) {
      this.invokeRole.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'InvokeGroupFunctions',
          actions: ['lambda:InvokeFunction'],
          resources: [...this.functions.values()].map((fn) => fn.functionArn),
        }),
      );
    }
  }
}
