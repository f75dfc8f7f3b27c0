// GET /js/refloop-embed.js - the widget's host-side script: Refloop.mount(el, {url, theme, onTokenExpired})
// frames the member portal (shared/js/embed.ts). No auth; cacheable; gzipped when the client accepts it.
import { scriptResponder } from '../../shared/js/serve';
import { REFLOOP_EMBED_SCRIPT } from '../../shared/js/embed';
import { corsHandler } from '../../shared/http/js';

const respond = scriptResponder(REFLOOP_EMBED_SCRIPT);
export const handler = corsHandler(async (event) => respond(event));
