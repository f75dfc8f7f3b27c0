// The small set of errors that carry an HTTP meaning. Thrown by the domain and store layers, mapped to
// responses in exactly one place (shared/http/errors.ts). Anything else becomes a generic 500.

export type FieldErrors = Record<string, string[]>;

export abstract class ApiError extends Error {
  abstract readonly status: number;
  abstract body(): Record<string, unknown>;
  headers(): Record<string, string> {
    return {};
  }
}

/** 400 keyed by field, each value a list of messages (Django REST Framework style). */
export class ValidationError extends ApiError {
  readonly status = 400;
  constructor(readonly fields: FieldErrors) {
    super('Validation failed');
  }
  static field(name: string, message: string): ValidationError {
    return new ValidationError({ [name]: [message] });
  }
  body() {
    return this.fields;
  }
}

/** 4xx with a single `detail` message. */
export class DetailError extends ApiError {
  constructor(
    readonly status: number,
    readonly detail: string,
    private readonly extraHeaders: Record<string, string> = {},
  ) {
    super(detail);
  }
  body() {
    return { detail: this.detail };
  }
  override headers() {
    return this.extraHeaders;
  }
}

export class NotFoundError extends DetailError {
  constructor() {
    super(404, 'Not found.');
  }
}

export class NotAuthenticatedError extends DetailError {
  constructor() {
    super(401, 'Authentication credentials were not provided.', { 'WWW-Authenticate': 'Bearer' });
  }
}

export class InvalidTokenError extends DetailError {
  constructor() {
    super(401, 'Invalid token.', { 'WWW-Authenticate': 'Bearer' });
  }
}

export class PermissionDeniedError extends DetailError {
  constructor(detail: string) {
    super(403, detail);
  }
}

/** A dependency (DynamoDB, SQS, provider) is down or throttling: retryable, nothing was changed. */
export class ServiceUnavailableError extends DetailError {
  constructor(detail = 'Service temporarily unavailable, try again later.', retryAfterSeconds = 1) {
    super(503, detail, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** A rate limit was reached (DRF's throttled message). */
export class ThrottledError extends DetailError {
  constructor(retryAfterSeconds: number) {
    const wait = Math.max(1, Math.ceil(retryAfterSeconds));
    super(429, `Request was throttled. Expected available in ${wait} second${wait === 1 ? '' : 's'}.`, { 'Retry-After': String(wait) });
  }
}
