// POST /join/confirm/{token}/ - the confirmation page's button: creates the application of the link's join
// request, once (a replay shows the same page and creates nothing). With automatic approval and no fraud
// flag it is approved at once, its member created in the same transaction and the approval email (with a
// login link) queued. Emits application.created (and application.approved, member.created).
import { confirmResult } from '../../shared/affiliates/join-http';
import { confirmApplication } from '../../shared/flows/applications';
import { publicHandler } from '../../shared/http/respond';

export const handler = publicHandler(async (event) => {
  const token = event.pathParameters?.token ?? '';
  return confirmResult(event, await confirmApplication(token), token);
});
