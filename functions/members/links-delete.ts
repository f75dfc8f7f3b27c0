// DELETE /v1/members/{id}/links/{slug}/ - delete one of the member's named links (its clicks and referrals keep their sub).
import { deleteMemberLink } from '../../shared/flows/links';
import { apiHandler, noContent } from '../../shared/http/handler';

export const handler = apiHandler({}, async ({ principal, params }) => {
  await deleteMemberLink(principal.accountId, params.id ?? '', params.slug ?? '');
  return noContent();
});
