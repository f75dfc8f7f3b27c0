// API representations of webhook endpoints and deliveries.
import type { WebhookDelivery, WebhookEndpoint } from '../store/webhooks';

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

export function webhookEndpointView(e: WebhookEndpoint) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    failing_since: seconds(e.failing_since),
    created_at: e.created_at,
  };
}

/** The create answer: the only time the signing secret is shown (null in an Idempotency-Key replay). */
export function createdWebhookEndpointView(e: WebhookEndpoint, secret: string | null) {
  return { ...webhookEndpointView(e), secret };
}

/** `status`: pending (not attempted yet), retrying, succeeded, failed (gave up), cancelled (endpoint disabled or deleted). */
export function webhookDeliveryView(d: WebhookDelivery) {
  return {
    id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    // 'sending' is internal (an attempt is in flight): shown as the state it leaves.
    status: d.state === 'sending' ? (d.attempts > 1 ? 'retrying' : 'pending') : d.state,
    created_at: Math.floor(d.created_ms / 1000),
    attempt_count: d.history.length,
    next_retry_at: d.state === 'retrying' ? seconds(d.next_attempt_ms) : null,
    attempts: [...d.history].reverse().map((a) => ({
      attempt: a.attempt,
      attempted_at: Math.floor(a.at / 1000),
      status_code: a.status_code,
      duration_ms: a.duration_ms,
      error: a.error,
    })),
  };
}
