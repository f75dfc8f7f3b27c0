// GET /js/refloop.js - the browser tracking script (no auth; cacheable; gzipped when the client accepts it).
import { scriptResponder } from '../../shared/js/serve';
import { REFLOOP_SCRIPT } from '../../shared/js/script';
import { corsHandler } from '../../shared/http/js';

const respond = scriptResponder(REFLOOP_SCRIPT);
export const handler = corsHandler(async (event) => respond(event));
