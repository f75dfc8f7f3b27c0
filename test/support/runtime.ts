// npm start's runtime for the browser suites (docs/testing.md): every port free, the run's DynamoDB Local
// (a table of the suite's own, no second Java) and short polls that a send wakes.
import { startLocal, type LocalOptions, type LocalRuntime } from '../../infra/local/start';

export function startTestRuntime(dataDir: string, tableName: string, extra: LocalOptions = {}): Promise<LocalRuntime> {
  return startLocal({
    port: 0,
    dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT,
    shortPolls: true,
    sqsPort: 0,
    paddlePort: 0,
    paddleBillingPort: 0,
    stripePort: 0,
    paypalPort: 0,
    wisePort: 0,
    dataDir,
    tableName,
    ...extra,
  });
}
