// DynamoDB call recording for tests (shared/store/instrumentation.ts), and the one way around the
// suite's "no Scan, no COUNT" rule (test/support/no-scan.ts) for a test's own verification reads:
// verificationClient().
import './local-guard';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export {
  describeCalls,
  isScanOrCount,
  itemsRead,
  recordDynamoCalls,
  type DynamoCall,
  type DynamoRecording,
} from '../../shared/store/instrumentation';

let verification: { raw: DynamoDBClient; doc: DynamoDBDocumentClient } | undefined;

/**
 * A DocumentClient on DynamoDB Local that is NOT instrumented: its calls are neither recorded nor
 * checked by no-scan.ts. Only for a test's own verification reads that need what a request path must
 * never do (a Scan to compare counters with the items, say). Never hand it to application code.
 */
export function verificationClient(): DynamoDBDocumentClient {
  if (!verification) {
    const endpoint = process.env.DYNAMODB_ENDPOINT;
    if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set (the Jest global setup sets it)');
    // Built here, not with createDynamoClient (which attaches the recorder).
    const raw = new DynamoDBClient({
      endpoint,
      region: process.env.AWS_REGION || 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 3,
    });
    verification = { raw, doc: DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } }) };
  }
  return verification.doc;
}

/** Closes the verification client's connections (call it in afterAll if you used it). */
export function closeVerificationClient(): void {
  // A DocumentClient's destroy() is a no-op: the connections belong to the client underneath.
  verification?.raw.destroy();
  verification = undefined;
}
