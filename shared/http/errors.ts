// The one place where errors become HTTP responses. Only ApiError messages reach a client; a
// dependency that is down or throttling becomes 503 with Retry-After; anything else is a generic 500
// that carries the request id (and is logged with its stack), never the error's own message.
import { ApiError, ServiceUnavailableError } from '../domain/errors';
import { errorFields, log } from '../log';

const TRANSIENT_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TransactionConflictException',
  'TransactionInProgressException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'RaceLostError',
]);
const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'UND_ERR_SOCKET']);

/** True for failures of a dependency that a later retry may not see (throttling, outage, network). */
export function isTransient(err: unknown): boolean {
  // Duck-typed, not `instanceof Error`: a socket error raised by Node itself comes from another realm
  // than the SDK when the code runs in a VM context (Jest), and must still count as a network failure.
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: string; code?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number; attempts?: number } };
  if (e.name !== undefined && TRANSIENT_NAMES.has(e.name)) return true;
  if (e.code && TRANSIENT_CODES.has(e.code)) return true;
  if (e.$retryable) return true;
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return true;
  // The SDK gave up after its attempts without any HTTP answer (connection reset, refused, timed out).
  // Across realms its retry middleware wraps the network error into a plain Error that keeps only the
  // text ("AWS SDK error wrapper for TimeoutError: socket hang up"): no name, no code, no status.
  if (e.$metadata?.attempts !== undefined && status === undefined) return true;
  if (e.name === 'TransactionCanceledException') {
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    return reasons.some((r) => r.Code === 'TransactionConflict' || r.Code === 'ThrottlingError');
  }
  return false;
}

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export function errorResponse(err: unknown, requestId: string): ErrorResponse {
  if (err instanceof ApiError) return { status: err.status, headers: err.headers(), body: err.body() };
  if (isTransient(err)) {
    const unavailable = new ServiceUnavailableError();
    logError('dependency unavailable', err, requestId);
    return { status: 503, headers: unavailable.headers(), body: unavailable.body() };
  }
  logError('unhandled error', err, requestId);
  return { status: 500, headers: {}, body: { detail: 'Internal server error.', request_id: requestId } };
}

function logError(message: string, err: unknown, requestId: string): void {
  // A 503 is a dependency's failure (name and reason say enough); a 500 is a bug: its stack too.
  log('error', message, { request_id: requestId, ...errorFields(err, message === 'unhandled error') });
}
