// Bundled in place of `@aws-sdk/credential-provider-node` (esbuild alias in function.ts), in Lambda
// bundles only: tests and the local runtime keep the SDK's full default chain.
// In Lambda the default chain always stops at its first link, the environment variables Lambda sets
// from the function's role. The other links (SSO, web identity through STS, INI files, process,
// container and instance metadata) never run there, yet bring the STS / SSO clients and the XML and
// query protocols into every bundle: about 135 KB of the ~370 KB a handler would weigh with them.
export { fromEnv as defaultProvider } from '@aws-sdk/credential-provider-env';
