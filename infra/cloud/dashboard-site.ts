// The dashboard (web/dist) on the API's own origin (DASHBOARD.md): one CloudFront distribution in front of
// both the HTTP API (every path, uncached, all viewer headers and cookies but Host) and a private S3
// bucket (/app/*, through origin access control). Same origin means the session cookie is SameSite=Strict
// and the API needs no CORS. A CloudFront Function sends every /app/ path without a file extension to the
// single-page app's index.html, so deep links and reloads work.
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  PriceClass,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { APP_SECURITY_HEADERS } from '../local/static-app';

export interface DashboardSiteProps {
  api: HttpApi;
  /** The built dashboard (web/dist). */
  assetDir: string;
}

/** `/app/members/42` -> `/app/index.html`; `/app` -> 301 `/app/`; files (with an extension) as they are. */
export const SPA_REWRITE = `function handler(event) {
  var uri = event.request.uri;
  if (uri === '/app') return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: '/app/' } } };
  var last = uri.substring(uri.lastIndexOf('/') + 1);
  if (last.indexOf('.') === -1) event.request.uri = '/app/index.html';
  return event.request;
}`;

export class DashboardSite extends Construct {
  readonly distribution: Distribution;
  readonly bucket: Bucket;
  /** https://<distribution domain>: the dashboard and the API, one origin. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: DashboardSiteProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Assets', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // Built output, rebuilt on every deploy: nothing in it is kept.
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: true,
    });

    const csp = APP_SECURITY_HEADERS['content-security-policy'] as string;
    const headers = new ResponseHeadersPolicy(this, 'Headers', {
      comment: 'Refloop dashboard: CSP, no framing, no sniffing',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: csp, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.SAME_ORIGIN, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: false, override: true },
      },
    });

    const rewrite = new CloudFrontFunction(this, 'SpaRewrite', { code: FunctionCode.fromInline(SPA_REWRITE), comment: 'Dashboard deep links to index.html' });
    const stack = Stack.of(this);
    const apiDomain = `${props.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    const appBehavior = {
      origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: headers,
      functionAssociations: [{ function: rewrite, eventType: FunctionEventType.VIEWER_REQUEST }],
    };
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Refloop: API and dashboard on one origin',
      priceClass: PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        // API clients get https only (a redirect would turn a POST into a GET); nothing is cached.
        origin: new HttpOrigin(apiDomain, { protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY }),
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
      additionalBehaviors: { '/app': appBehavior, '/app/*': appBehavior },
    });
    this.url = `https://${this.distribution.distributionDomainName}`;

    new BucketDeployment(this, 'Deploy', {
      sources: [Source.asset(props.assetDir)],
      destinationBucket: this.bucket,
      destinationKeyPrefix: 'app/',
      // index.html must never be cached (it names the current hashed assets); the assets can be forever.
      cacheControl: [CacheControl.fromString('public, max-age=300')],
      distribution: this.distribution,
      distributionPaths: ['/app/*'],
      memoryLimit: 256,
    });
  }
}
