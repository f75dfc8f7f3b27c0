// The dashboard's login endpoints (/auth/): no credential, rate limited per client IP and per address,
// JSON in and out like the rest of the API. Sessions are read from the cookie (shared/http/auth.ts).
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type * as v from 'valibot';
import { ThrottledError } from '../domain/errors';
import type { RateLimit } from '../domain/rate-limits';
import { ipHash } from '../domain/visitors';
import { validate } from '../schemas/fields';
import { consumeRateLimit } from '../store/rate-limits';
import type { Session } from '../store/team';
import { AUTH_FAILURE_ACCOUNT } from './auth';
import { parseJsonBody } from './body';
import { clientIp } from './client-ip';

/** Login links and session openings from one IP: 30 per 15 minutes. */
export const LOGINS_PER_IP: RateLimit = { limit: 30, windowSeconds: 900 };

/** Counts one attempt in a window of the `auth` pseudo-account; 429 past the limit. */
export async function limitLogin(scope: string, rule: RateLimit): Promise<void> {
  const decision = await consumeRateLimit(AUTH_FAILURE_ACCOUNT, scope, rule);
  if (!decision.allowed) throw new ThrottledError(decision.retryAfterSeconds);
}

export const ipScope = (kind: string, event: APIGatewayProxyEventV2) => `${kind}-ip#${ipHash(clientIp(event))}`;

export function loginBody<S extends v.GenericSchema>(schema: S, event: APIGatewayProxyEventV2): v.InferOutput<S> {
  return validate(schema, parseJsonBody(event));
}

/** What the dashboard learns about its session. */
export const sessionView = (s: Session) => ({
  account_id: s.accountId,
  account_name: s.accountName,
  email: s.email,
  role: s.role,
  expires_at: s.expiresAt,
});
