// cdk-nag's AWS Solutions findings that the stacks keep on purpose, each acknowledged on the narrowest
// construct it concerns, with the reason. The infra tests run the pack over the real stacks
// (test/infra/nag.cases.ts) and allow no unacknowledged error or warning; `cdk synth` runs it too (app.ts).
//
// cdk-nag 3 has no NagSuppressions: an acknowledgment is CDK's own `Validations.of(construct).acknowledge`,
// which holds for the construct and everything below it, and names one finding exactly (IAM5's findings
// carry the wildcard they are about: `AwsSolutions-IAM5[Resource::*]`).
import { type CfnElement, DefaultStackSynthesizer, Token, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { RefloopApiStack } from './api-stack';
import type { RefloopFunction } from './function';
import type { RefloopMonitoringStack } from './monitoring';
import type { RefloopStatefulStack } from './stateful-stack';

export interface NagStacks {
  stateful: RefloopStatefulStack;
  api: RefloopApiStack;
  monitoring: RefloopMonitoringStack;
}

/** Every acknowledgment made, as `<construct path> <rule id>: <reason>` (the tests list them). */
export interface Acknowledged {
  path: string;
  id: string;
  reason: string;
}

export const REASONS = {
  basicExecutionRole:
    'AWSLambdaBasicExecutionRole is the AWS-managed policy that lets a function write its own CloudWatch logs (logs:CreateLogGroup, CreateLogStream, PutLogEvents) and nothing else; an inline copy would grant the same.',
  xray: 'X-Ray active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions, so CDK grants them on "*" (the only wildcard resource of these roles; the infra tests check that).',
  tableIndexes:
    "The table grant (grantReadData / grantReadWriteData) covers the table's own global secondary indexes (gsi1, gsi2) as <table ARN>/index/*; no other table is reachable, and the secret items stay denied by LeadingKeys.",
  nodeRuntime:
    'Node.js 22 is the runtime the bundles target (esbuild target node22) and the local runtime and the tests run on; a newer one is adopted for the whole project at once (function.ts), not by this check.',
  bucketDeploymentRuntime: "CDK's own BucketDeployment handler (aws-cdk-lib): its runtime is chosen by aws-cdk-lib and moves with it.",
  bucketDeploymentRole:
    "CDK's own BucketDeployment handler (aws-cdk-lib): its policy copies the dashboard's asset from the CDK assets bucket into the dashboard bucket (object wildcards of those two buckets) and invalidates the distribution (CloudFront invalidations have no resource-level permission). It runs only during deployments.",
  apiAuthorizer:
    'Authentication is done in each handler (shared/http): secret API keys, dashboard session cookies, member portal tokens, provider webhook signatures, publishable keys; the public routes (scripts, documentation, CORS preflights, health, the portal page) take none. A gateway authorizer would add a Lambda invocation or a JWT issuer the API does not use.',
  eventBridgeDlq:
    "This queue is a DLQ itself (an EventBridge target's dead-letter queue, kept 14 days, alarmed on its first message); a DLQ has no DLQ of its own.",
  assetsBucketLogs:
    'The bucket holds only the built dashboard (public files, no customer data), is written only by the deployment and read only by CloudFront through origin access control. Server access logs would need a second bucket for nothing to investigate: a deliberate cost choice. To enable: serverAccessLogsBucket in dashboard-site.ts.',
  cloudFrontGeo:
    'Customers and their members are anywhere: no country is excluded. To restrict: geoRestriction on the distribution (dashboard-site.ts).',
  cloudFrontWaf:
    'No WAF, a deliberate cost choice (a web ACL costs a monthly fee per ACL and rule plus a per-request fee): the API stage throttles every route (500 rps, burst 1,000 by default) and the handlers rate limit logins, portal links and the public endpoints. To enable: a CLOUDFRONT-scope WebACL (us-east-1) and webAclId on the distribution (dashboard-site.ts).',
  accessLogBucketLogs:
    "The bucket is itself an access log (the distribution's standard logs, kept 30 days, written by CloudFront's log delivery); logging the reads of a log bucket would need a third bucket for nothing to investigate.",
  originSecretRotation:
    'The origin header secret only proves that a request came through the distribution (it is sent by CloudFront, never to viewers); rotating it means redeploying the distribution and every function together, so it changes when the stack is recreated, not on a schedule. See docs/operations.md, the section on the client address.',
  originSecretReader:
    "CDK's own AwsCustomResource handler (aws-cdk-lib), which reads the origin header secret at deploy time (secretsmanager:GetSecretValue on that secret only); the basic execution role only lets it write its logs.",
  cloudFrontTls:
    "The distribution uses CloudFront's default *.cloudfront.net certificate, whose security policy CloudFront fixes (TLSv1), so a minimum protocol version cannot be set; clients negotiate TLS 1.2 or 1.3 anyway. With a custom domain, attach its ACM certificate and set minimumProtocolVersion TLSv1.2_2021 (dashboard-site.ts).",
} as const;

/** Acknowledges the stacks' deliberate findings; returns what it acknowledged. */
export function applyNagSuppressions(stacks: NagStacks): Acknowledged[] {
  const done: Acknowledged[] = [];
  const seen = new Set<string>();
  const ack = (scope: IConstruct, id: string, reason: string) => {
    const key = `${scope.node.path} ${id}`;
    if (seen.has(key)) return; // routes share roles
    seen.add(key);
    Validations.of(scope).acknowledge({ id, reason });
    done.push({ path: scope.node.path, id, reason });
  };
  const { api, stateful } = stacks;

  // Functions and their roles. The table's ARN reaches the API stack as an import of the stateful stack's
  // export, and cdk-nag names the finding after that import, which exportValue gives (it is the same export
  // the reference uses, so it adds nothing to the template).
  const tableArn = (stateful.resolve(stateful.exportValue(stateful.table.tableArn)) as { 'Fn::ImportValue': string })['Fn::ImportValue'];
  for (const fn of api.functions.values() as IterableIterator<RefloopFunction>) {
    ack(fn, 'AwsSolutions-L1', REASONS.nodeRuntime);
    const role = fn.role;
    if (!role) throw new Error(`${fn.node.path} has no role`);
    ack(
      role,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      REASONS.basicExecutionRole,
    );
    ack(role, 'AwsSolutions-IAM5[Resource::*]', REASONS.xray);
    if (fn.tableAccess) ack(role, `AwsSolutions-IAM5[Resource::${tableArn}/index/*]`, REASONS.tableIndexes);
  }

  // The HTTP API's routes: the `$default` route under the API, the others in the route groups' nested stacks.
  ack(api.api, 'AwsSolutions-APIG4', REASONS.apiAuthorizer);
  for (const group of api.routeGroups.values()) {
    for (const route of group.routes.values()) ack(route, 'AwsSolutions-APIG4', REASONS.apiAuthorizer);
  }

  // The EventBridge targets' DLQs.
  ack(api.scheduleDeadLetterQueue, 'AwsSolutions-SQS3', REASONS.eventBridgeDlq);
  ack(api.memberEmail.deadLetterQueue, 'AwsSolutions-SQS3', REASONS.eventBridgeDlq);

  // The dashboard site: CloudFront and the assets bucket, and CDK's deployment handler.
  if (api.site) {
    ack(api.site.bucket, 'AwsSolutions-S1', REASONS.assetsBucketLogs);
    ack(api.site.distribution, 'AwsSolutions-CFR1', REASONS.cloudFrontGeo);
    ack(api.site.distribution, 'AwsSolutions-CFR2', REASONS.cloudFrontWaf);
    ack(api.site.logBucket, 'AwsSolutions-S1', REASONS.accessLogBucketLogs);
    ack(api.site.distribution, 'AwsSolutions-CFR4', REASONS.cloudFrontTls);
    if (api.originSecret) ack(api.originSecret, 'AwsSolutions-SMG4', REASONS.originSecretRotation);
    // The AwsCustomResource singleton that reads it (its id is AWS + the provider's UUID without dashes).
    const secretReader = api.node.children.find((c) => c.node.id.startsWith('AWS679f53fac002430cb0da5b7982bd2287'));
    if (api.originSecretReader) {
      if (!secretReader) throw new Error('the origin secret has no AwsCustomResource handler');
      ack(
        secretReader,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        REASONS.originSecretReader,
      );
    }
    const deployment = api.node.children.find((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
    if (!deployment) throw new Error('the dashboard site has no BucketDeployment handler');
    // The CDK assets bucket, as cdk-nag writes it: account and region literal when the stack has them.
    const qualifier =
      (api.node.tryGetContext('@aws-cdk/core:bootstrapQualifier') as string | undefined) ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER;
    const account = Token.isUnresolved(api.account) ? '<AWS::AccountId>' : api.account;
    const region = Token.isUnresolved(api.region) ? '<AWS::Region>' : api.region;
    const bucketId = api.getLogicalId(api.site.bucket.node.defaultChild as CfnElement);
    ack(deployment, 'AwsSolutions-L1', REASONS.bucketDeploymentRuntime);
    ack(
      deployment,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      REASONS.basicExecutionRole,
    );
    for (const finding of [
      'Action::s3:GetObject*',
      'Action::s3:GetBucket*',
      'Action::s3:List*',
      'Action::s3:DeleteObject*',
      'Action::s3:Abort*',
      `Resource::arn:<AWS::Partition>:s3:::cdk-${qualifier}-assets-${account}-${region}/*`,
      `Resource::<${bucketId}.Arn>/*`,
      'Resource::*',
    ]) {
      ack(deployment, `AwsSolutions-IAM5[${finding}]`, REASONS.bucketDeploymentRole);
    }
  }
  return done;
}
