// Named links (POST /v1/members/{id}/links/, POST /portal/v1/links/) and the `sub` field of clicks and referrals.
import * as v from 'valibot';
import { destinationPathProblem, MAX_DESTINATION_PATH, SUB, SUB_MESSAGE } from '../domain/links';
import { field, REQUIRED, text } from './fields';

/** A sub-id: a named link's slug (docs/attribution.md). */
export const subField = text(40, { pattern: SUB, patternMessage: SUB_MESSAGE });

/** Optional `sub` of a click or a referral: absent or null is none. */
export const optionalSub = v.optional(v.nullable(subField), null);

const destinationPath = field<string | null>(
  (value) => {
    if (value === null || value === undefined) return { ok: true, value: null };
    if (typeof value !== 'string') return { ok: false, message: 'Not a valid string.' };
    const path = value.trim();
    if (path === '') return { ok: true, value: null };
    const problem = destinationPathProblem(path);
    return problem ? { ok: false, message: problem } : { ok: true, value: path };
  },
  {
    type: ['string', 'null'],
    maxLength: MAX_DESTINATION_PATH,
    description: 'A path of the site `referral_url` is on (e.g. `/pricing`); absent or null: `referral_url` itself.',
    examples: ['/pricing'],
  },
);

export const createLinkBody = v.object(
  {
    slug: v.optional(v.nullable(subField), null),
    destination_path: v.optional(destinationPath, null),
  },
  REQUIRED,
);

export type CreateLinkInput = v.InferOutput<typeof createLinkBody>;
