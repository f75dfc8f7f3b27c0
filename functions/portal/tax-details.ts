// GET /portal/v1/tax-details/ - the member's tax details, masked, and whether the account requires them.
// The only portal routes allowed the account's tax partition (functions/routes.ts `taxDetails`).
import { portalTaxDetails } from '../../shared/flows/tax-details';
import { portalHandler } from '../../shared/http/portal';

export const handler = portalHandler({}, async ({ session }) => ({ status: 200, body: await portalTaxDetails(session) }));
