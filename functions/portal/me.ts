// GET /portal/v1/me/ - the member's own page: their link and code, their campaign's terms, totals, settings.
import { portalMe } from '../../shared/flows/portal';
import { portalHandler } from '../../shared/http/portal';

export const handler = portalHandler({}, async ({ session }) => ({ status: 200, body: await portalMe(session) }));
