// GET /docs/ - the API reference: a static HTML rendering of the OpenAPI document; no authentication
import { requestId, publicHandler } from '../../shared/http/respond';
import { openApiDocument } from '../../shared/openapi/document';
import { renderReference } from '../../shared/openapi/html';
import { routes } from '../routes';

let page: string | undefined;

export const handler = publicHandler(async (event) => {
  page ??= renderReference(openApiDocument(routes));
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'X-Request-Id': requestId(event), 'Cache-Control': 'public, max-age=300' },
    body: page,
  };
});
