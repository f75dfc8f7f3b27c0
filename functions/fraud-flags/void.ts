// STUB (issue 27 seam): replaced by its implementation.
import { DetailError } from '../../shared/domain/errors';
import { apiHandler } from '../../shared/http/handler';

export const handler = apiHandler({}, async () => {
  throw new DetailError(501, 'Not implemented yet.');
});
