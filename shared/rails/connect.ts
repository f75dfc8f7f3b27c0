// Connecting a payout rail (PUT /v1/account/payout-rails/{kind}/ and the admin CLI's `account set-paypal`,
// `set-stripe-connect`, `set-wise`): the connection a body describes (every missing field at once, the
// API URL rules) and the check of its credentials at the rail (the adapter's verifyConnection) before
// anything is stored. docs/payouts.md "Connecting a rail".
import { config } from '../config';
import { DetailError, ValidationError, type FieldErrors } from '../domain/errors';
import type { PayoutRailDefinition, RailKind } from './definition';
import { RailBatchError, type RailConnection } from './port';
import { railDefinition } from './registry';

/**
 * Each rail's own API hosts (production first, then its sandbox), accepted as `api_url` anywhere; any other
 * URL (an emulator's) only where emulators are allowed (`WEBHOOK_ALLOW_LOOPBACK`, as under npm start), since
 * the URL decides where the rail's secrets are sent.
 */
export const RAIL_API_HOSTS: Record<RailKind, readonly string[]> = {
  paypal: ['https://api-m.paypal.com', 'https://api-m.sandbox.paypal.com'],
  stripe: ['https://api.stripe.com'],
  wise: ['https://api.wise.com', 'https://api.wise-sandbox.com'],
};

/** The admin CLI's connect command of each rail (`account set-paypal`, ...; `set-stripe` is the provider's). */
export const RAIL_CLI_COMMANDS: Record<RailKind, string> = { paypal: 'set-paypal', stripe: 'set-stripe-connect', wise: 'set-wise' };

/** The rail of a path's `{kind}`, or undefined for a kind no rail has (the route answers 404). */
export function railOfPath(kind: string | undefined): PayoutRailDefinition | undefined {
  return kind && Object.hasOwn(RAIL_API_HOSTS, kind) ? railDefinition(kind as RailKind) : undefined;
}

/** The connection a body describes, or every field error at once (a 400). */
export function railConnectionOf(
  definition: PayoutRailDefinition,
  body: Record<string, unknown>,
  emulatorsAllowed = config().webhooks.allowLoopback,
): RailConnection {
  const errors: FieldErrors = {};
  const credentials: Record<string, string> = {};
  for (const field of definition.fields) {
    const value = body[field.name];
    if (value === undefined || value === null) {
      if (field.required) errors[field.name] = ['This field is required.'];
      continue;
    }
    credentials[field.name] = String(value);
  }
  const apiUrl = typeof body.api_url === 'string' && body.api_url !== '' ? body.api_url : definition.defaultApiUrl;
  const own = RAIL_API_HOSTS[definition.kind];
  if (!emulatorsAllowed && !own.includes(apiUrl))
    errors.api_url = [`Use ${definition.name}'s own API URL (${own.join(' or ')}); other URLs are for local emulators.`];
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return { apiUrl, credentials };
}

/** The field a refused credential is reported on: the rail's first secret (PayPal's secret, Stripe's key, Wise's token). */
const credentialField = (definition: PayoutRailDefinition): string =>
  definition.fields.find((f) => f.type === 'password')?.name ?? definition.fields[0]?.name ?? 'detail';

/**
 * Checks the credentials at the rail (one cheap authenticated call). Refused credentials are a 400 on the
 * rail's secret field; a profile or account the credentials do not reach, a 400 on that field when the
 * rail names it, else `detail`; an unreachable rail, a 400 on `api_url` (nothing is stored either way).
 */
export async function verifyRailConnection(definition: PayoutRailDefinition, connection: RailConnection): Promise<void> {
  try {
    const adapter = await definition.adapter(connection);
    await adapter.verifyConnection();
  } catch (err) {
    if (err instanceof RailBatchError) {
      if (err.code === 'unauthorized')
        throw ValidationError.field(credentialField(definition), `${definition.name} refused these credentials: ${err.message}`);
      if (err.code === 'unavailable')
        throw ValidationError.field('api_url', `${definition.name} could not be reached at ${connection.apiUrl}: ${err.message}`);
      const named = definition.fields.find(
        (f) => f.type !== 'password' && new RegExp(`\\b${f.name.replace('_id', '')}\\b`, 'i').test(err.message),
      );
      if (named) throw ValidationError.field(named.name, err.message);
      throw new DetailError(400, `${definition.name} did not accept the connection: ${err.message}`);
    }
    throw ValidationError.field(
      'api_url',
      `${definition.name} could not be reached at ${connection.apiUrl}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
