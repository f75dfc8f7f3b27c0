// Errors of shared/secrets/. Neither ever carries a secret or a stored value in its message.

/** The secrets are not set up for where this runs (e.g. a Lambda function without SECRETS_KMS_KEY_ID). */
export class SecretsConfigError extends Error {
  override readonly name = 'SecretsConfigError';
}

/** A stored secret does not decrypt: another account's, altered, malformed, or under another key. */
export class SecretDecryptionError extends Error {
  override readonly name = 'SecretDecryptionError';
}
