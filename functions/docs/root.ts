// GET / - points to the API reference: 302 to /docs/ (browsers land on it), with a JSON body of links for API clients
import { baseUrl, jsonResult, publicHandler } from '../../shared/http/respond';

export const handler = publicHandler(async (event) => {
  const base = baseUrl(event);
  // 302, not 301: a permanent redirect is cached by browsers for good, and `/` may serve more one day.
  return jsonResult(302, { docs: `${base}/docs/`, openapi: `${base}/v1/openapi.json`, health: `${base}/health` }, event, {
    Location: '/docs/',
    'Cache-Control': 'no-cache',
  });
});
