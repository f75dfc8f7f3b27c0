// GET /portal/{account}/ and GET /portal/{account}/login/ - the member portal's page (shared/portal/page.ts),
// {account} being the account's slug or its id; the app shows the login view on the /login/ path. Framed
// only by the account's embed origins. One or two GetItems (the account, by id or through its slug); no
// credential: the page holds no member data until its script opens a session (the token in the fragment,
// or the affiliate's portal cookie).
import { storedTheme } from '../../shared/domain/affiliates';
import { portalAccount } from '../../shared/flows/affiliate-login';
import { publicHandler, requestId } from '../../shared/http/respond';
import { NOT_FOUND_PAGE, portalHeaders, portalPage } from '../../shared/portal/page';

export const handler = publicHandler(async (event) => {
  const found = await portalAccount(event.pathParameters?.account_id ?? '');
  if (!found) return { statusCode: 404, headers: { ...portalHeaders([]), 'X-Request-Id': requestId(event) }, body: NOT_FOUND_PAGE };
  const { accountId, account } = found;
  const origins = Array.isArray(account.embed_origins) ? account.embed_origins.map(String) : [];
  const theme = Object.fromEntries(
    Object.entries(storedTheme(account.theme)).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  const portal = typeof account.slug === 'string' && account.slug !== '' ? account.slug : accountId;
  return {
    statusCode: 200,
    headers: { ...portalHeaders(origins), 'X-Request-Id': requestId(event) },
    body: portalPage(origins, { theme, portal, ...(typeof account.name === 'string' ? { program: account.name } : {}) }),
  };
});
