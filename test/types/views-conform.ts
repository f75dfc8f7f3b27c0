// Compile-time assertions, checked by `npm run typecheck` and by test/unit/view-types.test.ts (which runs
// the TypeScript compiler over this file, and over deliberately wrong views to prove a drift is caught):
// every view (shared/domain/views.ts, shared/webhooks/views.ts) returns what its response schema
// (shared/schemas/responses.ts, the source of the OpenAPI components) declares, and no field more.
import type * as v from 'valibot';
import type { campaignView, memberView, referralView, subscriptionView } from '../../shared/domain/views';
import type * as r from '../../shared/schemas/responses';
import type { createdWebhookEndpointView, webhookDeliveryView, webhookEndpointView } from '../../shared/webhooks/views';

/**
 * true when every value the view can return is one the schema's output type accepts, and the view has no
 * top-level field the schema lacks (the schemas are strict objects: such a field fails live validation).
 */
export type Conforms<View extends (...args: any[]) => unknown, Schema extends v.GenericSchema> = [ReturnType<View>] extends [
  v.InferOutput<Schema>,
]
  ? [Exclude<keyof ReturnType<View>, keyof v.InferOutput<Schema>>] extends [never]
    ? true
    : false
  : false;

/** A compile error (TS2344) unless T is true. */
export type Assert<T extends true> = T;

export type ViewsConform = [
  Assert<Conforms<typeof campaignView, typeof r.campaignResponse>>,
  Assert<Conforms<typeof memberView, typeof r.memberResponse>>,
  Assert<Conforms<typeof referralView, typeof r.referralResponse>>,
  Assert<Conforms<typeof subscriptionView, typeof r.subscriptionResponse>>,
  Assert<Conforms<typeof webhookEndpointView, typeof r.webhookEndpointResponse>>,
  Assert<Conforms<typeof createdWebhookEndpointView, typeof r.createdWebhookEndpointResponse>>,
  Assert<Conforms<typeof webhookDeliveryView, typeof r.webhookDeliveryResponse>>,
];
