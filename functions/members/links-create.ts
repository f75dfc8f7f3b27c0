// POST /v1/members/{id}/links/ - a named link of the member: `{"slug"?, "destination_path"?}` -> 201
// `{slug, destination_path, url, created_at}`; at most 20 per member (docs/attribution.md).
import { createMemberLink } from '../../shared/flows/links';
import { apiHandler, created } from '../../shared/http/handler';
import { createLinkBody } from '../../shared/schemas/links';

export const handler = apiHandler({ body: createLinkBody }, async ({ principal, params, body }) =>
  created(await createMemberLink(principal.accountId, params.id ?? '', body)),
);
