// The OpenAPI description of GET /v1/referrals/{id}/diagnosis/ (shared/flows/diagnosis.ts): its response
// schema and example, kept beside each other. The reasons are store/unattributed.ts's.
import { REFERRAL_ID, USER_IDENTIFIER } from './examples';

const providerId = {
  oneOf: [{ type: 'integer' }, { type: 'string' }],
  description: "The provider's id: an integer for Paddle Classic, a string (`sub_…`) for Paddle Billing and Stripe.",
};
const nullableString = { type: ['string', 'null'] };

export const UNATTRIBUTED_REASONS = [
  'no_referral_hint',
  'unknown_coupon',
  'malformed_referral_id',
  'referral_not_found',
  'referral_converted_elsewhere',
  'subscription_assigned',
  'self_referral',
  'conversion_refused',
] as const;

export const DIAGNOSIS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['referral_id', 'user_identifier', 'is_converted', 'subscription_id', 'email', 'email_source', 'unattributed'],
  properties: {
    referral_id: { type: 'string' },
    user_identifier: { type: 'string' },
    is_converted: { type: 'boolean' },
    subscription_id: {
      oneOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }],
      description: 'The subscription the referral converted with, if any.',
    },
    email: {
      type: ['string', 'null'],
      description:
        'The email the sightings were looked up by; null when none is known (then only checkouts naming this referral are found).',
    },
    email_source: {
      enum: ['query', 'user_identifier', null],
      description: "Where the email came from: the `email` parameter, or the referral's `user_identifier`.",
    },
    unattributed: {
      type: 'array',
      description: 'Subscriptions (and their checkouts) seen in the last 90 days that did not convert this referral, newest first.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: [
          'subscription_id',
          'checkout_id',
          'email',
          'status',
          'plan_name',
          'reason',
          'detail',
          'referral_named',
          'coupon_code',
          'assigned_referral_id',
          'event_id',
          'first_seen_at',
          'last_seen_at',
        ],
        properties: {
          subscription_id: providerId,
          checkout_id: { ...nullableString, description: 'The checkout (Billing `txn_…`, Stripe `cs_…`) when an event named it.' },
          email: { type: 'string' },
          status: nullableString,
          plan_name: nullableString,
          reason: { enum: [...UNATTRIBUTED_REASONS], description: 'Why it did not attribute (docs/referrals-diagnosis.md).' },
          detail: { type: 'string', description: 'The reason in a sentence.' },
          referral_named: {
            ...nullableString,
            description: "The referral id the checkout named (passthrough, custom data, metadata, or a coupon's referral).",
          },
          coupon_code: nullableString,
          assigned_referral_id: { ...nullableString, description: 'The referral this subscription is assigned to now, if another.' },
          event_id: { type: 'string', description: 'The provider event of the sighting (the latest that changed its reason).' },
          first_seen_at: { type: 'integer', description: 'Unix seconds.' },
          last_seen_at: { type: 'integer', description: 'Unix seconds.' },
        },
      },
    },
  },
} as const;

export const DIAGNOSIS_EXAMPLE = {
  referral_id: REFERRAL_ID,
  user_identifier: USER_IDENTIFIER,
  is_converted: false,
  subscription_id: null,
  email: 'jane@example.com',
  email_source: 'query',
  unattributed: [
    {
      subscription_id: 'sub_01hv8x2k9q3w4e5r6t7y8u9i0p',
      checkout_id: 'txn_01hv8x2e1n4m5b6v7c8x9z0a1s',
      email: 'Jane@example.com',
      status: 'active',
      plan_name: 'Pro',
      reason: 'no_referral_hint',
      detail:
        'The checkout carried no referral: no refloop_referral_id (Paddle passthrough or custom_data, Stripe client_reference_id or metadata) and no referral coupon.',
      referral_named: null,
      coupon_code: null,
      assigned_referral_id: null,
      event_id: 'evt_01hv8x2m3n4b5v6c7x8z9a0s1d',
      first_seen_at: 1767225600,
      last_seen_at: 1767225600,
    },
  ],
};
