// STUB (issue 26 wiring in progress): answers 501 until its flow lands.
import { jsonResult, publicHandler } from '../../shared/http/respond';

export const handler = publicHandler(async (event) => jsonResult(501, { detail: 'Not implemented yet.' }, event));
