// The dashboard (web/dist) on the API's own origin (docs/dashboard.md): one CloudFront distribution in front of
// both the HTTP API and a private S3 bucket (/app/*, through origin access control). Same origin means the
// session cookie is SameSite=Strict and the API needs no CORS. A CloudFront Function sends every /app/ path
// without a file extension to the single-page app's index.html, so deep links and reloads work.
//
// The API behind it (docs/operations.md "The client's address"):
// - Every origin request carries a secret header (X-Refloop-Origin-Verify, generated in Secrets Manager by
//   api-stack.ts); the handlers refuse requests without it, so the execute-api URL cannot be used to bypass
//   the distribution (shared/http/client-ip.ts).
// - CloudFront-Viewer-Address (the viewer's address and port) is added by the origin request policy: the
//   per-IP limits key on it, not on the edge's address.
// - Nothing private is cached: the API's cache policy keys on Authorization, every cookie and the whole query
//   string, caches only what the API itself marks cacheable (default TTL 0), for at most a second. (Host must
//   not reach API Gateway, and an origin request policy may not forward Authorization: it has to be in the
//   cache key, which needs a policy that allows caching.) /docs and /v1/openapi.json, public and large, use
//   the managed CachingOptimized policy: gzip and brotli, kept as long as the handlers say (five minutes).
// - The distribution's standard access log (an S3 bucket, 30 days) records each request with the viewer's
//   address (c-ip), which the HTTP API's own access log cannot: there it is the edge's.
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AllowedMethods,
  CacheCookieBehavior,
  CacheHeaderBehavior,
  CachePolicy,
  CacheQueryStringBehavior,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  OriginProtocolPolicy,
  OriginRequestCookieBehavior,
  OriginRequestHeaderBehavior,
  OriginRequestPolicy,
  OriginRequestQueryStringBehavior,
  PriceClass,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { APP_SECURITY_HEADERS } from '../local/static-app';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../../shared/http/client-ip';

export interface DashboardSiteProps {
  api: HttpApi;
  /** The built dashboard (web/dist). */
  assetDir: string;
  /** The value of the secret origin header (a Secrets Manager dynamic reference), sent with every API request. */
  originSecret: string;
}

/**
 * The viewer headers the API reads, forwarded by the origin request policy (at most 10 per policy), and the
 * viewer's address. Authorization is in the cache key instead (a policy may not forward it), cookies and the
 * query string too; the infra tests check that every header the handlers read is forwarded one way or another.
 */
export const API_FORWARDED_HEADERS = [
  'content-type',
  'idempotency-key',
  'origin',
  'user-agent',
  'if-none-match',
  'paddle-signature',
  'stripe-signature',
  VIEWER_ADDRESS_HEADER,
] as const;

/** The public documents CloudFront caches (briefly) and compresses. */
export const DOCS_PATHS = ['/docs', '/docs/', '/v1/openapi.json'] as const;
/** The distribution's access logs are kept this long, like the API's. */
export const ACCESS_LOG_DAYS = 30;

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
  /** The distribution's standard access logs (viewer address, path, status; 30 days). */
  readonly logBucket: Bucket;

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

    const rewrite = new CloudFrontFunction(this, 'SpaRewrite', {
      code: FunctionCode.fromInline(SPA_REWRITE),
      comment: 'Dashboard deep links to index.html',
    });
    const stack = Stack.of(this);
    const apiDomain = `${props.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    const appBehavior = {
      origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: headers,
      functionAssociations: [{ function: rewrite, eventType: FunctionEventType.VIEWER_REQUEST }],
    };
    const apiOrigin = new HttpOrigin(apiDomain, {
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
      customHeaders: { [ORIGIN_VERIFY_HEADER]: props.originSecret },
    });
    const apiCache = new CachePolicy(this, 'ApiCache', {
      comment: 'Refloop API: keyed on Authorization, cookies and query; caches only what the API marks cacheable, 1 s at most',
      minTtl: Duration.seconds(0),
      defaultTtl: Duration.seconds(0),
      maxTtl: Duration.seconds(1),
      headerBehavior: CacheHeaderBehavior.allowList('authorization'),
      cookieBehavior: CacheCookieBehavior.all(),
      queryStringBehavior: CacheQueryStringBehavior.all(),
      enableAcceptEncodingGzip: true,
      enableAcceptEncodingBrotli: true,
    });
    const apiRequest = new OriginRequestPolicy(this, 'ApiRequest', {
      comment: 'Refloop API: the headers the handlers read, and the viewer address',
      headerBehavior: OriginRequestHeaderBehavior.allowList(...API_FORWARDED_HEADERS),
      cookieBehavior: OriginRequestCookieBehavior.none(),
      queryStringBehavior: OriginRequestQueryStringBehavior.none(),
    });
    const docsBehavior = {
      origin: apiOrigin,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      // The managed CachingOptimized policy: gzip and brotli, no header, cookie or query in the key, and the
      // handlers' max-age=300 decides how long an edge keeps them.
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      compress: true,
    };
    this.logBucket = new Bucket(this, 'AccessLogs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // CloudFront's standard logging writes through the bucket's ACL (its log delivery account).
      objectOwnership: ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [{ expiration: Duration.days(ACCESS_LOG_DAYS) }],
      // Kept on teardown (a record of who called the API); the lifecycle rule empties it within 30 days.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Refloop: API and dashboard on one origin',
      priceClass: PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: this.logBucket,
      logFilePrefix: 'cloudfront/',
      defaultBehavior: {
        // API clients get https only (a redirect would turn a POST into a GET); nothing private is cached.
        origin: apiOrigin,
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: apiCache,
        originRequestPolicy: apiRequest,
        compress: true,
      },
      additionalBehaviors: { '/app': appBehavior, '/app/*': appBehavior, ...Object.fromEntries(DOCS_PATHS.map((p) => [p, docsBehavior])) },
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
