// The delivery worker's logic: one attempt of one delivery.
// 1. One BatchGet: the delivery, its endpoint, the signing secret, the event's body (in the worker, one BatchGet
//    of the whole batch's: ../store/prefetch.ts).
// 2. Nothing to do when the delivery is finished, not due yet, or being attempted by another worker
//    (its lease has not lapsed). A disabled or deleted endpoint cancels it.
// 3. Claim the attempt (conditional update: attempts n-1 -> n, state -> sending, lease): two copies of a
//    message never both send.
// 4. Resolve the URL's host and refuse it unless every address is public (SSRF, DNS rebinding: the
//    request connects only to the addresses checked), POST the signed body, never follow redirects.
// 5. Record the outcome (status code, duration, error) and the next attempt's due time (exponential
//    backoff) in one transaction with the endpoint's failure state; after 3 days of failures the delivery
//    is given up and an endpoint that has not succeeded since is disabled. The webhook sweep sends
//    deliveries that are due (retries, lapsed leases) back to the queue: no SQS delay chain is needed.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { config } from '../config';
import { clock } from '../domain/clock';
import type { DeliverMessage } from '../queue/queues';
import { deliveryContextKeys, loadDelivery, type AttemptRecord, type EndpointChange } from '../store/webhooks';
import type { Prefetched } from '../store/prefetch';
import type { Key } from '../store/table';
import { type DeliveryWrites, directWrites } from './delivery-writes';
import { afterFailure, shouldDisable } from './backoff';
import { parseEndpointUrl, resolveSafely, UnsafeUrlError, type ResolvedAddress } from './ssrf';
import { signatureHeader } from './verify';
import { log } from '../log';
import { countMetric } from '../metrics';

/** How long a claimed attempt is protected from other workers (an attempt takes at most the HTTP timeout). */
export const LEASE_MS = 60_000;
/** A delivery is attempted when it is due within this much (the sweep runs every minute). */
const EARLY_MS = 1_000;

export type AttemptResult = 'skipped' | 'succeeded' | 'retrying' | 'failed' | 'cancelled';

/** The keys an attempt reads first (the worker prefetches a batch's together: ../store/prefetch.ts). */
export function deliveryReadKeys(message: DeliverMessage): Key[] {
  const { account_id: accountId, endpoint_id: endpointId, delivery: sk } = message;
  return deliveryContextKeys(accountId, endpointId, sk, sk.slice(sk.indexOf('#') + 1));
}

/** `writes`: the batch's gathered writes (./delivery-writes.ts), or each on its own; `pre`: the batch's prefetch. */
export async function attemptDelivery(
  message: DeliverMessage,
  writes: DeliveryWrites = directWrites,
  pre?: Prefetched,
): Promise<AttemptResult> {
  const { account_id: accountId, endpoint_id: endpointId, delivery: sk } = message;
  const eventId = sk.slice(sk.indexOf('#') + 1);
  const ctx = await loadDelivery(accountId, endpointId, sk, eventId, pre);
  const d = ctx.delivery;
  if (!d || d.state === 'succeeded' || d.state === 'failed' || d.state === 'cancelled') return 'skipped';
  const now = clock.now();
  if (d.state === 'sending' && (d.lease_until ?? 0) > now) return 'skipped';
  if (d.state !== 'sending' && (d.next_attempt_ms ?? 0) > now + EARLY_MS) return 'skipped';

  const attempt = d.attempts + 1;
  if (!(await writes.claim(accountId, d, attempt, now + LEASE_MS))) return 'skipped';
  const claimed = { ...d, attempts: attempt, state: 'sending' as const };
  const cfg = config().webhooks;

  if (!ctx.endpoint?.enabled || !ctx.secret || !ctx.payload) {
    const reason = !ctx.endpoint ? 'endpoint deleted' : !ctx.endpoint.enabled ? 'endpoint disabled' : 'event expired';
    await writes.record(
      accountId,
      claimed,
      attempt,
      { attempt, at: now, status_code: null, duration_ms: 0, error: reason },
      { state: 'cancelled' },
      'none',
    );
    return 'cancelled';
  }

  const started = clock.now();
  const outcome = await post(ctx.endpoint.url, ctx.payload, ctx.secret, eventId, d.event_type, cfg);
  const finished = clock.now();
  const record: AttemptRecord = {
    attempt,
    at: started,
    status_code: outcome.status,
    duration_ms: Math.max(0, finished - started),
    error: outcome.error,
  };
  const base = { account_id: accountId, endpoint_id: endpointId, event_id: eventId, attempt, status_code: outcome.status };

  if (outcome.ok) {
    await writes.record(
      accountId,
      claimed,
      attempt,
      record,
      { state: 'succeeded' },
      ctx.endpoint.failing_since !== null ? 'recovered' : 'none',
    );
    log('info', 'webhook delivered', base);
    return 'succeeded';
  }
  // OutgoingWebhookFailures: once per failed attempt, after its outcome is recorded (the attempt's claim
  // keeps a second copy of the message from making, and counting, the same attempt).
  const failingSince = ctx.endpoint.failing_since;
  const change: EndpointChange =
    failingSince === null ? { failingSince: started } : shouldDisable(failingSince, finished, cfg) ? 'disable' : 'none';
  const next = afterFailure(attempt, d.created_ms, finished, cfg);
  if ('giveUp' in next) {
    // Retried for the whole give-up period without the endpoint succeeding once since its first attempt.
    const firstAttempt = d.history[0]?.at ?? started;
    const disable = failingSince !== null && failingSince <= firstAttempt;
    await writes.record(accountId, claimed, attempt, record, { state: 'failed' }, disable ? 'disable' : change);
    countMetric('OutgoingWebhookFailures');
    if (disable) log('warn', 'webhook endpoint disabled after failing for the give-up period', base);
    log('warn', 'webhook delivery given up', { ...base, error: outcome.error });
    return 'failed';
  }
  await writes.record(accountId, claimed, attempt, record, { state: 'retrying', retryAtMs: next.retryAtMs }, change);
  countMetric('OutgoingWebhookFailures');
  if (change === 'disable') log('warn', 'webhook endpoint disabled after failing for the give-up period', base);
  log('info', 'webhook delivery failed, will retry', { ...base, error: outcome.error, retry_at: next.retryAtMs });
  return 'retrying';
}

interface PostOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/** One signed POST, connected only to checked addresses; 2xx is success, anything else (3xx too) a failure. */
export async function post(
  rawUrl: string,
  body: string,
  secret: string,
  eventId: string,
  eventType: string,
  cfg: { allowLoopback: boolean; timeoutMs: number },
): Promise<PostOutcome> {
  let url: URL;
  let addresses: ResolvedAddress[];
  try {
    url = parseEndpointUrl(rawUrl, cfg.allowLoopback);
    addresses = await resolveSafely(url, cfg.allowLoopback);
  } catch (err) {
    if (err instanceof UnsafeUrlError) return { ok: false, status: null, error: `refused: ${err.message}` };
    throw err;
  }
  // The connection goes to the addresses just checked, whatever DNS would answer now.
  const pinned: LookupFunction = (_hostname, options, callback) => {
    const all = (options as { all?: boolean }).all === true;
    const first = addresses[0] as ResolvedAddress;
    if (all) (callback as unknown as (err: null, a: ResolvedAddress[]) => void)(null, addresses);
    else callback(null, first.address, first.family);
  };
  const bytes = Buffer.from(body, 'utf8');
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    // The whole exchange, not only socket idleness: a receiver trickling bytes cannot hold a worker.
    const deadline = setTimeout(() => req.destroy(new Error('timeout')), cfg.timeoutMs);
    const done = (o: PostOutcome) => {
      clearTimeout(deadline);
      if (!settled) {
        settled = true;
        resolve(o);
      }
    };
    const req = send(
      url,
      {
        method: 'POST',
        lookup: pinned,
        timeout: cfg.timeoutMs,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(bytes.length),
          'User-Agent': 'Refloop-Webhooks/1.0',
          'Refloop-Event-Id': eventId,
          'Refloop-Event-Type': eventType,
          'Refloop-Signature': signatureHeader(bytes, secret),
        },
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        res.resume(); // the body is not needed; drain it so the socket is released
        res.on('end', () =>
          done({ ok: status >= 200 && status < 300, status, error: status >= 200 && status < 300 ? null : `HTTP ${status}` }),
        );
        res.on('error', () => done({ ok: false, status, error: 'response interrupted' }));
      },
    );
    req.on('timeout', () => {
      req.destroy(new Error('timeout'));
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({
        ok: false,
        status: null,
        error: err.message === 'timeout' ? `timeout after ${cfg.timeoutMs} ms` : `connection failed: ${err.code ?? err.message}`,
      }),
    );
    req.end(bytes);
  });
}
