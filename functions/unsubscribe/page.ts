// GET /unsubscribe/{token}/ - the page of a member email's unsubscribe link: a button that POSTs to the
// same URL. It changes nothing itself, so a link scanner unsubscribes nobody (shared/email/unsubscribe.ts).
// No credential: the token names the member; one GetItem.
import { confirmPage, UNKNOWN_LINK_PAGE, UNSUBSCRIBE_PAGE_HEADERS } from '../../shared/email/unsubscribe';
import { publicHandler, requestId } from '../../shared/http/respond';
import { findUnsubscribeTarget } from '../../shared/store/unsubscribe';

export const handler = publicHandler(async (event) => {
  const target = await findUnsubscribeTarget(event.pathParameters?.token ?? '');
  return {
    statusCode: target ? 200 : 404,
    headers: { ...UNSUBSCRIBE_PAGE_HEADERS, 'X-Request-Id': requestId(event) },
    body: target ? confirmPage(target.programme, target.memberId === '') : UNKNOWN_LINK_PAGE,
  };
});
