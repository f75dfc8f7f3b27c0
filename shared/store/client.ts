// One DynamoDB client per container, created on first use at module scope and reused by every
// invocation. The endpoint override points it at DynamoDB Local on a laptop and in tests.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { instrument } from './instrumentation';
import { traceClient } from '../tracing';

let raw: DynamoDBClient | undefined;
let doc: DynamoDBDocumentClient | undefined;

export interface ClientOptions {
  endpoint?: string | undefined;
  region: string;
  /** For a local endpoint only: at most this many calls in flight (config's dynamodbLocalConnections; 0: the SDK's 50). */
  localConnections?: number;
}

/**
 * Builds a client; local endpoints get dummy credentials so no AWS profile is needed. Every client
 * carries the call recorder (./instrumentation.ts), which does nothing unless a recording is active, and
 * the X-Ray subsegments of its calls (../tracing.ts), sent only in a sampled Lambda invocation.
 */
export function createDynamoClient({ endpoint, region, localConnections = 0 }: ClientOptions): DynamoDBClient {
  const local = endpoint !== undefined && isLocalEndpoint(endpoint);
  const client = new DynamoDBClient({
    region,
    ...(endpoint ? { endpoint } : {}),
    ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    maxAttempts: 3,
    // Not AWS_RETRY_MODE's: the bundles leave the adaptive strategy out (infra/cloud/bundling.ts).
    retryMode: 'standard',
    // DynamoDB Local runs its SQLite work on one thread behind one write lock: dozens of calls queued inside
    // it cost it more than the same calls queued here (docs/capacity.md "DynamoDB Local's connections").
    ...(local && localConnections > 0 ? { requestHandler: { httpAgent: { keepAlive: true, maxSockets: localConnections } } } : {}),
  });
  // The call recorder records for tests and the bench only, never in a Lambda bundle (its define, in
  // infra/cloud/bundling.ts LAMBDA_DEFINE, makes this branch dead code there, so the bundle leaves it out).
  if (!process.env.REFLOOP_LAMBDA_BUNDLE) instrument(client);
  return traceClient(client);
}

export function isLocalEndpoint(endpoint: string): boolean {
  try {
    const host = new URL(endpoint).hostname;
    return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
  } catch {
    return false;
  }
}

export function rawClient(): DynamoDBClient {
  raw ??= createDynamoClient({
    endpoint: config().dynamodbEndpoint,
    region: config().region,
    localConnections: config().dynamodbLocalConnections,
  });
  return raw;
}

export function db(): DynamoDBDocumentClient {
  doc ??= DynamoDBDocumentClient.from(rawClient(), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return doc;
}

export function tableName(): string {
  return config().tableName;
}

/** Forget the clients (tests and the local runtime after changing the environment). */
export function resetClients(): void {
  raw?.destroy();
  raw = undefined;
  doc = undefined;
}
