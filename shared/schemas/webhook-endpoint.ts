// Webhook endpoint bodies. The URL's form is checked here; whether its host is safe to call (DNS, SSRF)
// is checked by the domain (shared/webhooks/endpoints.ts), which needs the network.
import * as v from 'valibot';
import { EVENT_TYPES, type EventType } from '../domain/events';
import { REQUIRED, boolean, field, nullableText, pythonType, text } from './fields';

export const MAX_URL_LENGTH = 2048;

const urlText = text(MAX_URL_LENGTH);

/** The URL's form (http(s), no credentials); https-only and the host's addresses are the domain's checks. */
const url = field<string>(
  (value) => {
    const t = v.safeParse(urlText, value, { abortPipeEarly: true });
    if (!t.success) return { ok: false, message: t.issues[0]?.message ?? 'Not a valid string.' };
    let parsed: URL;
    try {
      parsed = new URL(t.output);
    } catch {
      return { ok: false, message: 'Enter a valid URL.' };
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return { ok: false, message: 'Enter a valid URL.' };
    if (parsed.username || parsed.password) return { ok: false, message: 'The URL must not contain credentials.' };
    return { ok: true, value: t.output };
  },
  {
    type: 'string',
    format: 'uri',
    maxLength: MAX_URL_LENGTH,
    description:
      'https only; its host must resolve to public addresses only (private, loopback, link-local and reserved ranges are refused).',
  },
);

/** A non-empty list of distinct event types. */
export const eventTypes = field<EventType[]>(
  (value) => {
    if (value === null) return { ok: false, message: 'This field may not be null.' };
    if (!Array.isArray(value)) return { ok: false, message: `Expected a list of items but got type "${pythonType(value)}".` };
    if (value.length === 0) return { ok: false, message: 'This list may not be empty.' };
    const out: EventType[] = [];
    for (const item of value) {
      if (typeof item !== 'string' || !(EVENT_TYPES as readonly string[]).includes(item)) {
        return { ok: false, message: `"${typeof item === 'string' ? item : pythonType(item)}" is not a valid choice.` };
      }
      if (!out.includes(item as EventType)) out.push(item as EventType);
    }
    return { ok: true, value: out };
  },
  {
    type: 'array',
    items: { type: 'string', enum: [...EVENT_TYPES] },
    minItems: 1,
    description: 'Event types to receive; duplicates are ignored.',
  },
);

const fields = {
  url,
  events: eventTypes,
  enabled: boolean,
  description: nullableText(255),
};

export const createWebhookEndpointBody = v.object(
  {
    url: fields.url,
    events: v.optional(fields.events, () => [...EVENT_TYPES]),
    enabled: v.optional(fields.enabled, true),
    description: v.optional(fields.description, null),
  },
  REQUIRED,
);

export const updateWebhookEndpointBody = v.partial(v.object(fields, REQUIRED));

export type CreateWebhookEndpointInput = v.InferOutput<typeof createWebhookEndpointBody>;
export type UpdateWebhookEndpointInput = v.InferOutput<typeof updateWebhookEndpointBody>;
