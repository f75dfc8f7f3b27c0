// GET /js/refloop.js - the browser tracking script (no auth; cacheable; gzipped when the client accepts it).
import { scriptResponse } from '../../shared/js/serve';
import { corsHandler } from '../../shared/http/js';

export const handler = corsHandler(async (event) => scriptResponse(event));
