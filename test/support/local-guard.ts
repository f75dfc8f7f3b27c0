// Integration tests write and delete freely, so they refuse to run against anything but DynamoDB Local.
import { isLocalEndpoint } from '../../shared/store/client';

export function assertLocalDynamo(endpoint: string | undefined = process.env.DYNAMODB_ENDPOINT): void {
  if (endpoint === undefined || endpoint === '' || !isLocalEndpoint(endpoint)) {
    throw new Error(
      `Refusing to run: DYNAMODB_ENDPOINT is ${endpoint ? `"${endpoint}"` : 'unset (real AWS)'}; tests need DynamoDB Local on a loopback address`,
    );
  }
}

assertLocalDynamo();
