// Referral bodies.
import * as v from 'valibot';
import { REQUIRED, text } from './fields';
import { optionalSub } from './links';

export const createReferralBody = v.object(
  {
    // Not bounded by the specification; 255 keeps every key built from it far below DynamoDB's limits.
    user_identifier: text(255),
    member_code: text(100),
    // The sub-id the referred user came through (a named link's slug, docs/attribution.md); null without one.
    sub: optionalSub,
  },
  REQUIRED,
);

export type CreateReferralInput = v.InferOutput<typeof createReferralBody>;
