// Jest global setup of the unit project (and the first step of the integration project's): the
// environment every suite shares, with no DynamoDB Local and no emulator.
export default function unitEnvironment(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // The service's logger (shared/log.ts) is silent: expected failure paths (503s, failed records, DLQ moves)
  // would otherwise fill the run. Tests that assert on log lines call setLogLevel; LOG_LEVEL=DEBUG npm test
  // shows everything.
  process.env.LOG_LEVEL ??= 'SILENT';
  process.env.AWS_REGION ??= 'us-east-1';
  // The site's origin (links, the CSRF check): the host test/support/api.ts sends requests to. A local
  // gateway a suite starts replaces it with its own URL while it runs.
  process.env.PUBLIC_BASE_URL ??= 'https://api.test';
}
