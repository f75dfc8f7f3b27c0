// The provider connection a dashboard body describes (POST /v1/account/provider/): the fields its kind
// requires (shared/billing/definition.ts `fields`), every missing one at once, the API URL rules, and the
// same per-provider checks as the operator CLI's `account set-*` commands (worded for a form).
import { config } from '../config';
import { ValidationError } from '../domain/errors';
import type { ProviderBody } from '../schemas/team';
import { missingFields } from './definition';
import { definitionOf, type ProviderConnection } from './registry';

/** The connection a body describes, or every field error at once. */
export function connectionOf(body: ProviderBody): ProviderConnection {
  const definition = definitionOf(body.kind);
  const values = body as Record<string, unknown>;
  const errors = missingFields(definition, values);
  // The provider's API URL could point the service (and the secret) at any host: only the provider's own
  // hosts are accepted, and any other (an emulator) only where emulators are allowed (npm start).
  const own = definition.apiHosts;
  if (body.api_url && !config().webhooks.allowLoopback && !own.includes(body.api_url)) {
    errors.api_url = [
      own.length > 0
        ? `Use the provider's own API URL (${own.join(' or ')}); other URLs are for local emulators.`
        : `${definition.name} takes no API URL; other URLs are for local emulators.`,
    ];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  const checked = definition.connectionFromBody(values, body.api_url ?? undefined);
  if (!checked.ok) throw ValidationError.field(checked.field, checked.message);
  return checked.value;
}
