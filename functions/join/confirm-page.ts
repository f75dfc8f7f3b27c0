// GET /join/confirm/{token}/ - the page of an application's confirmation link: one button that POSTs to the
// same URL. It changes nothing itself, so a mail scanner that follows the link confirms nothing. No
// credential: the token (stored only as SHA-256) names the join request. An unknown or expired link
// answers a 404 page; a used one shows what it created.
import { confirmResult } from '../../shared/affiliates/join-http';
import { confirmationPage } from '../../shared/flows/applications';
import { publicHandler } from '../../shared/http/respond';

export const handler = publicHandler(async (event) => {
  const token = event.pathParameters?.token ?? '';
  return confirmResult(event, await confirmationPage(token), token);
});
