// GET /v1/openapi.json - the OpenAPI 3.1 document, generated from the route table and the schemas; no
// authentication. Compressed when the client accepts it (shared/http/compressed.ts).
import { compressedText } from '../../shared/http/compressed';
import { baseUrl, publicHandler } from '../../shared/http/respond';
import { openApiDocument } from '../../shared/openapi/document';
import { routes } from '../routes';

/** The document's text (and its compressed copies) by server URL; bounded, as the URL can come from a request's Host. */
const byServer = new Map<string, ReturnType<typeof compressedText>>();
const MAX_SERVERS = 8;
let doc: ReturnType<typeof openApiDocument> | undefined;

export const handler = publicHandler(async (event) => {
  // The server is the one this request reached (or the configured public base URL).
  const server = baseUrl(event);
  let respond = byServer.get(server);
  if (!respond) {
    doc ??= openApiDocument(routes);
    respond = compressedText(JSON.stringify({ ...doc, servers: [{ url: server }] }), {
      'Content-Type': 'application/json',
      'Cache-Control': 'public, max-age=300',
      'X-Content-Type-Options': 'nosniff',
    });
    if (byServer.size >= MAX_SERVERS) byServer.delete(byServer.keys().next().value as string);
    byServer.set(server, respond);
  }
  return respond(event);
});
