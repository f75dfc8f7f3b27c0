// GET /portal/{account_id}/ - the member portal's page (shared/portal/page.ts), framed only by the account's
// embed origins. One GetItem (the account's settings); no credential: the page holds no member data
// until its script opens a session with the token in the fragment.
import { isAccountId } from '../../shared/domain/ids';
import { NOT_FOUND_PAGE, portalHeaders, portalPage } from '../../shared/portal/page';
import { publicHandler, requestId } from '../../shared/http/respond';
import { getItem } from '../../shared/store/ops';
import { keys } from '../../shared/store/table';

export const handler = publicHandler(async (event) => {
  const accountId = event.pathParameters?.account_id ?? '';
  const account = isAccountId(accountId) ? await getItem(keys.account(accountId), false) : undefined;
  if (!account) return { statusCode: 404, headers: { ...portalHeaders([]), 'X-Request-Id': requestId(event) }, body: NOT_FOUND_PAGE };
  const origins = Array.isArray(account.embed_origins) ? account.embed_origins.map(String) : [];
  return { statusCode: 200, headers: { ...portalHeaders(origins), 'X-Request-Id': requestId(event) }, body: portalPage(origins) };
});
