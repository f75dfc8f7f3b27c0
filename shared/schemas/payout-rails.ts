// The body of PUT /v1/account/payout-rails/{kind}/: every rail's form fields (shared/rails/registry.ts,
// each definition's `fields`) as optional properties, plus `api_url`; the path's kind picks which are
// required (shared/rails/connect.ts reports every missing one at once). Secrets are write-only.
import * as v from 'valibot';
import type { ConnectionField } from '../billing/definition';
import { RAIL_DEFINITIONS } from '../rails/registry';
import { REQUIRED, field, text } from './fields';

/** A positive integer id, given as a number or as digits; kept as its digits (the rails' credentials are text). */
const integerId = field<string>(
  (value) => {
    const n = typeof value === 'string' && /^\s*\d{1,15}\s*$/.test(value) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) return { ok: false, message: 'A valid integer is required.' };
    return { ok: true, value: String(n) };
  },
  { type: ['integer', 'string'], minimum: 1 },
);

const railApiUrl = field<string | null>(
  (value) => {
    if (value === null || value === undefined || value === '') return { ok: true, value: null };
    if (typeof value !== 'string' || value.length > 300 || !/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(value))
      return { ok: false, message: 'Enter a valid URL.' };
    return { ok: true, value: value.replace(/\/+$/, '') };
  },
  {
    type: ['string', 'null'],
    format: 'uri',
    description:
      "The rail API's base URL: its production API (the default) or its sandbox; any other URL (an emulator's) only where the service allows emulators (under `npm start`).",
  },
);

const FIELD_SCHEMA: Record<ConnectionField['type'], typeof integerId> = {
  text: text(500),
  password: text(500),
  textarea: text(8000),
  integer: integerId,
};

const railFields = new Map<string, ConnectionField['type']>();
for (const d of RAIL_DEFINITIONS) for (const f of d.fields) railFields.set(f.name, f.type);

export const payoutRailBody = v.object(
  {
    ...Object.fromEntries([...railFields].map(([name, type]) => [name, v.optional(FIELD_SCHEMA[type])] as const)),
    api_url: v.optional(railApiUrl),
  },
  REQUIRED,
);
export type PayoutRailBody = v.InferOutput<typeof payoutRailBody>;
