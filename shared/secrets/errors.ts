// Errors of shared/secrets/. None ever carries a secret or a stored value in its message.
import { DetailError } from '../domain/errors';

/** The secrets are not set up for where this runs (e.g. a Lambda function without SECRETS_KMS_KEY_ID). */
export class SecretsConfigError extends Error {
  override readonly name = 'SecretsConfigError';
}

/**
 * A stored secret does not decrypt: another account's, altered, malformed, or under another key. To an API
 * client it is a 503 naming the account (the service cannot act for it until an operator sets the secret
 * again), never a bare 500; `reason` (the message) says why, for the log line.
 */
export class SecretDecryptionError extends DetailError {
  override readonly name = 'SecretDecryptionError';
  constructor(
    readonly reason: string,
    readonly accountId?: string,
  ) {
    super(
      503,
      accountId
        ? `The stored provider or webhook secrets of account ${accountId} cannot be decrypted with this service's key: an operator must set them again (docs/operations.md, "Secrets at rest").`
        : 'A stored secret cannot be decrypted with this service\'s key: an operator must set it again (docs/operations.md, "Secrets at rest").',
    );
    this.message = reason;
  }
  override body() {
    return { detail: this.detail };
  }
}

/**
 * The key this process would encrypt with is not the one the table's secrets are under (its fingerprint
 * item, ./fingerprint.ts): refused before anything is written.
 */
export class SecretsKeyMismatchError extends Error {
  override readonly name = 'SecretsKeyMismatchError';
}
