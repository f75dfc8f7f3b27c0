// POST /unsubscribe/{token}/ - one-click unsubscribe (RFC 8058): a mail client's POST with the body
// `List-Unsubscribe=One-Click`, or the page's button. Sets the member's email opt-out; the body is not
// needed and not read. No credential: the token names one member of one account (shared/email/unsubscribe.ts).
import { donePage, optOut, UNKNOWN_LINK_PAGE, UNSUBSCRIBE_PAGE_HEADERS } from '../../shared/email/unsubscribe';
import { publicHandler, requestId } from '../../shared/http/respond';
import { findUnsubscribeTarget } from '../../shared/store/unsubscribe';

export const handler = publicHandler(async (event) => {
  const target = await findUnsubscribeTarget(event.pathParameters?.token ?? '');
  const done = target !== null && (await optOut(target));
  return {
    statusCode: done ? 200 : 404,
    headers: { ...UNSUBSCRIBE_PAGE_HEADERS, 'X-Request-Id': requestId(event) },
    body: done && target ? donePage(target.programme, target.memberId === '') : UNKNOWN_LINK_PAGE,
  };
});
