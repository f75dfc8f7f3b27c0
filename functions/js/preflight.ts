// OPTIONS /js/v1/... - the CORS preflight of the public endpoints: 204 with the CORS headers, no auth.
import { corsHandler } from '../../shared/http/js';
import { jsonResult } from '../../shared/http/respond';

export const handler = corsHandler(async (event) => jsonResult(204, undefined, event));
