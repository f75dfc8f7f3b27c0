// GET /v1/openapi.json - the OpenAPI 3.1 document, generated from the route table and the schemas; no authentication
import { baseUrl, jsonResult, publicHandler } from '../../shared/http/respond';
import { openApiDocument } from '../../shared/openapi/document';
import { routes } from '../routes';

export const handler = publicHandler(async (event) => {
  // The server is the one this request reached (or the configured public base URL).
  return jsonResult(200, { ...openApiDocument(routes), servers: [{ url: baseUrl(event) }] }, event, { 'Cache-Control': 'public, max-age=300' });
});
