// Jest setupFilesAfterEnv: no Scan and no COUNT query, anywhere in the suite (docs/design/architecture.md
// "Round-trip budgets": never a Scan, never a COUNT query on a request path). Every DynamoDB call made through the
// store's clients (shared/store/client.ts attaches the recorder) is watched from the moment a test file
// loads; a Scan, or a Query/Scan with Select COUNT, fails the test it ran in (afterEach) or, when it ran
// in a beforeAll/afterAll hook or a background poller, the file (afterAll).
//
// A test that needs a Scan for its own verification (comparing counters with a full read of the table,
// say) must do it "in the test only", on a client that is not instrumented:
//
//   import { verificationClient } from '../support/dynamo-calls';
//   await verificationClient().send(new ScanCommand({ TableName: process.env.TABLE_NAME, ... }));
//
// This file loads no AWS SDK module itself (unit tests stay light): it only registers a recording.
// Calls made in a test file's own top-level afterAll hooks run after this file's check (hooks run in
// the order they are declared, and this file's are declared first) and are not checked.
import { describeCalls, isScanOrCount, recordDynamoCalls, type DynamoCall } from '../../shared/store/instrumentation';

const forbidden = recordDynamoCalls({ filter: isScanOrCount });
let reported = 0;

function newViolations(): DynamoCall[] {
  const fresh = forbidden.calls.slice(reported);
  reported = forbidden.calls.length;
  return fresh;
}

const message = (calls: DynamoCall[], where: string) =>
  `${calls.length} forbidden DynamoDB call(s) ${where} (Scan and Select=COUNT never run through the store's clients; ` +
  `a test's own verification Scan uses verificationClient() from test/support/dynamo-calls.ts): ${describeCalls(calls)}`;

afterEach(() => {
  const calls = newViolations();
  if (calls.length > 0) throw new Error(message(calls, 'in this test or the hooks that ran before it'));
});

afterAll(() => {
  forbidden.stop();
  const calls = newViolations();
  if (calls.length > 0) throw new Error(message(calls, 'in this file after its last test (afterAll hooks, background work)'));
});
