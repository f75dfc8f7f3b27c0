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

// And member emails must land in an outbox folder: without it the email worker would call SES.
if (!process.env.EMAIL_OUTBOX_DIR) throw new Error('Refusing to run: EMAIL_OUTBOX_DIR is unset (the email worker would use SES)');
