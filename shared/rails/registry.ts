// The one list of payout rails (shared/rails/<kind>/index.ts each export a PayoutRailDefinition). A rail
// joins by one line here. The payout flows, the connection routes and the webhook intake read rails from
// this list only.
import type { PayoutRailDefinition, RailKind } from './definition';
import { paypal } from './paypal';
import { stripeRailDefinition } from './stripe';
import { wise } from './wise';

export const RAIL_DEFINITIONS: readonly PayoutRailDefinition[] = [paypal, stripeRailDefinition, wise];

export function railDefinition(kind: RailKind): PayoutRailDefinition | undefined {
  return RAIL_DEFINITIONS.find((d) => d.kind === kind);
}
