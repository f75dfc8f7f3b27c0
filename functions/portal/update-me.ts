// PATCH /portal/v1/me/ - the member's only writes: where payouts go (`payout_email`) and `email_opt_out`.
import { updatePortalMe } from '../../shared/flows/portal';
import { portalHandler } from '../../shared/http/portal';
import { updatePortalMeBody } from '../../shared/schemas/portal';

export const handler = portalHandler({ body: updatePortalMeBody }, async ({ session, body }) => ({
  status: 200,
  body: await updatePortalMe(session, body),
}));
