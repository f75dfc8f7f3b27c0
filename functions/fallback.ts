// Any request no route matches: 404 for an unknown path, 405 with `Allow` for a known path.
import { findRoute } from './routes';
import { jsonResult, publicHandler } from '../shared/http/respond';

export const handler = publicHandler(async (event) => {
  const method = event.requestContext?.http?.method ?? 'GET';
  const match = findRoute(method, event.rawPath ?? '/');
  if (match && 'allowed' in match) {
    return jsonResult(405, { detail: `Method "${method}" not allowed.` }, event, { Allow: match.allowed.join(', ') });
  }
  return jsonResult(404, { detail: 'Not found.' }, event);
});
