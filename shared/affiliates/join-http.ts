// The join pages' HTTP side: HTML answers in the public page shell (./page.ts) and the form post's body.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DetailError } from '../domain/errors';
import { MAX_BODY_BYTES, parseJsonBody, utf8Error } from '../http/body';
import { header, requestId, type Result } from '../http/respond';
import { formObject } from '../schemas/applications';
import { config } from '../config';
import type { ConfirmPage } from '../flows/applications';
import { storedTheme } from '../domain/affiliates';
import { confirmBody } from './join-page';
import { publicPage } from './page';

/** An HTML answer: the shell around `body`, in the account's theme, with an optional script. */
export function htmlPage(
  event: APIGatewayProxyEventV2,
  status: number,
  page: { title: string; body: string; script?: string },
  account: Record<string, unknown> | null,
  extra: Record<string, string> = {},
): Result {
  const shell = publicPage({
    title: page.title,
    body: page.body,
    theme: storedTheme(account?.theme),
    ...(page.script ? { script: page.script } : {}),
  });
  return {
    statusCode: status,
    headers: { ...shell.headers, 'X-Request-Id': requestId(event), ...extra },
    body: shell.body,
  };
}

/** A redirect after a form post (303: the browser GETs the page). */
export function seeOther(event: APIGatewayProxyEventV2, location: string): Result {
  return { statusCode: 303, headers: { Location: location, 'Cache-Control': 'no-store', 'X-Request-Id': requestId(event) }, body: '' };
}

const mediaType = (event: APIGatewayProxyEventV2) => (header(event, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** Whether the request is the page's own form post (urlencoded) rather than the JSON API. */
export const isFormPost = (event: APIGatewayProxyEventV2): boolean => mediaType(event) === 'application/x-www-form-urlencoded';

/** The request's body as the JSON body's object: the JSON object, or the form's fields (same limits and 400s). */
export function applicationObject(event: APIGatewayProxyEventV2): Record<string, unknown> {
  if (!isFormPost(event)) return parseJsonBody(event);
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.length > MAX_BODY_BYTES) throw new DetailError(413, 'Request body is too large.');
  const invalid = utf8Error(bytes);
  if (invalid) throw new DetailError(400, `Form parse error - 'utf-8' codec can't decode ${invalid}`);
  return formObject(bytes.toString('utf8'));
}

/** The confirmation link's page in its state (404 for a link that does not work). */
export function confirmResult(event: APIGatewayProxyEventV2, page: ConfirmPage, token: string): Result {
  const slug = typeof page.account?.slug === 'string' && page.account.slug !== '' ? page.account.slug : null;
  const { title, body } = confirmBody(page.state.kind, {
    account: page.account,
    campaign: page.campaign,
    // The same URL: the token stays in the path (never in a Referer: the shell sends no-referrer).
    action: `/join/confirm/${encodeURIComponent(token)}/`,
    loginUrl: slug ? `${config().publicBaseUrl}/portal/${slug}/login/` : null,
  });
  return htmlPage(event, page.state.kind === 'unknown' ? 404 : 200, { title, body }, page.account, { 'Referrer-Policy': 'no-referrer' });
}
