// Registering and changing webhook endpoints: the URL must be safe to call (./ssrf.ts) when it is set;
// a new endpoint gets a signing secret (`whsec_` + 256 random bits), returned once by the create call.
import { randomBytes } from 'node:crypto';
import { config } from '../config';
import { ValidationError } from '../domain/errors';
import type { CreateWebhookEndpointInput, UpdateWebhookEndpointInput } from '../schemas/webhook-endpoint';
import { createEndpoint, updateEndpoint, type WebhookEndpoint } from '../store/webhooks';
import { parseEndpointUrl, resolveSafely, UnsafeUrlError } from './ssrf';

export const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** The URL, normalised, once its form and every address of its host are acceptable; else a 400 on `url`. */
export async function checkedUrl(raw: string): Promise<string> {
  const { allowLoopback } = config().webhooks;
  try {
    const url = parseEndpointUrl(raw, allowLoopback);
    await resolveSafely(url, allowLoopback);
    return url.toString();
  } catch (err) {
    if (err instanceof UnsafeUrlError) throw ValidationError.field('url', err.message);
    throw err;
  }
}

export async function registerEndpoint(
  accountId: string,
  input: CreateWebhookEndpointInput,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const url = await checkedUrl(input.url);
  const secret = newSigningSecret();
  const endpoint = await createEndpoint(accountId, { ...input, url }, secret);
  return { endpoint, secret };
}

export async function changeEndpoint(accountId: string, id: string, patch: UpdateWebhookEndpointInput): Promise<WebhookEndpoint> {
  const url = patch.url !== undefined ? await checkedUrl(patch.url) : undefined;
  return updateEndpoint(accountId, id, { ...patch, ...(url !== undefined ? { url } : {}) });
}
