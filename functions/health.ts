// GET /health - liveness: answers 200 {"status": "ok"} when the API is up; no credential, no table read
import { jsonResult, publicHandler } from '../shared/http/respond';

// Deliberately no DynamoDB read: in AWS every route is its own function, so a table read here would only
// prove that this function can read the table, and an unauthenticated read is what a flood would target.
// DynamoDB's and SQS's health are AWS's; the DLQ alarms and the worker errors report the rest.
export const handler = publicHandler(async (event) => jsonResult(200, { status: 'ok' }, event, { 'Cache-Control': 'no-store' }));
