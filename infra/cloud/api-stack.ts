// The stateless half: one function per line of `functions/routes.ts`, one HTTP API route per line,
// and the `$default` route to the fallback (404 / 405 JSON). No authorizer at the gateway (handlers
// authenticate API keys themselves) and no CORS (server-to-server API).
import { CfnOutput, CrossStackReferences, ReferenceStrength, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { fallbackRoute, routes } from '../../functions/routes';
import { RefloopFunction } from './function';

export interface RefloopApiStackProps extends StackProps {
  table: ITable;
}

/**
 * The route key path for a route-table path. HTTP APIs reject a route path ending in `/` (CDK refuses it
 * at synth, the service at deploy), and route `/v1/referrals` serves both `/v1/referrals` and
 * `/v1/referrals/`, so each route is registered once, without the trailing slash. Path parameters
 * use the same `{name}` syntax in both places.
 */
export function gatewayPath(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

export class RefloopApiStack extends Stack {
  readonly api: HttpApi;
  /** Every function by route name (`Fallback` included), for grants and references added later. */
  readonly functions = new Map<string, RefloopFunction>();

  constructor(scope: Construct, id: string, props: RefloopApiStackProps) {
    super(scope, id, props);
    // Import the table's name and ARN as CloudFormation exports: the stateful stack then cannot be
    // deleted, nor its table swapped out, while this stack still uses it. (Must precede any child.)
    CrossStackReferences.of(this).consume(ReferenceStrength.STRONG);

    // Unmatched method or path: no table access at all.
    const fallback = new RefloopFunction(this, fallbackRoute.name, {
      entry: fallbackRoute.entry,
      description: 'Fallback: 404 / 405 for unmatched requests',
    });
    this.functions.set(fallbackRoute.name, fallback);

    this.api = new HttpApi(this, 'HttpApi', {
      apiName: `${this.stackName}-http`,
      description: 'Refloop referral-programme API',
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
    });

    for (const route of routes) {
      const fn = new RefloopFunction(this, route.name, {
        entry: route.entry,
        description: `${route.method} ${route.path}`,
      }).bindTable(props.table, route.table);
      this.functions.set(route.name, fn);
      this.api.addRoutes({
        path: gatewayPath(route.path),
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${route.name}Integration`, fn),
      });
    }

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Base URL; paths start with /v1/' });
  }
}
