// The Idempotency-Key rules the HTTP layer enforces and the OpenAPI document describes.

/** Methods whose requests take an Idempotency-Key (on API-key routes). */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['POST', 'PATCH', 'DELETE']);
export const MAX_KEY_LENGTH = 255;
