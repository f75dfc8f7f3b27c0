// PUT /portal/v1/tax-details/ - the member gives (or replaces) their tax details: legal name, country,
// address and either the US TIN with the W-9 certification or the W-8BEN fields. Stored encrypted (the
// secrets mechanism, bound to the account); the answer is masked like GET.
import { putPortalTaxDetails } from '../../shared/flows/tax-details';
import { parseJsonBody } from '../../shared/http/body';
import { portalHandler } from '../../shared/http/portal';
import { validateTaxDetails } from '../../shared/schemas/tax-details';

export const handler = portalHandler({}, async ({ session, event }) => ({
  status: 200,
  body: await putPortalTaxDetails(session, validateTaxDetails(parseJsonBody(event))),
}));
