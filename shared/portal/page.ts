// The member portal's page, GET /portal/<account slug or id>/ and its login view /portal/<account>/login/
// (docs/portal.md).
//
// The page is the `portal.html` Vite builds from web/ (its scripts and styles are the hashed files under
// /app/assets/, served like the dashboard's). It is served by a function rather than from the static
// bucket because its `Content-Security-Policy: frame-ancestors` is the account's own `embed_origins`: only
// those sites may frame it (none when the list is empty). The same list goes into the page as
// `<meta name="refloop-embed-origins">`, so the portal talks by postMessage only to an allowed host.
// The link token is in the URL's fragment, which browsers never send: this request carries no secret.
//
// Where the HTML comes from: in AWS the bundler inlines web/dist/portal.html, base64-encoded, as
// `process.env.REFLOOP_PORTAL_HTML_B64` (infra/cloud/api-stack.ts, esbuild `define`, after app.ts built
// web/); under npm start and in tests it is read from web/dist once per process.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The expression the bundler replaces with the page (base64). */
export const PORTAL_HTML_DEFINE = 'process.env.REFLOOP_PORTAL_HTML_B64';

export const ORIGINS_PLACEHOLDER = '<meta name="refloop-embed-origins" content="">';

/** The portal's headers; `frame-ancestors` from the account's embed origins. */
export function portalHeaders(embedOrigins: readonly string[]): Record<string, string> {
  const ancestors = embedOrigins.length > 0 ? embedOrigins.join(' ') : "'none'";
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; object-src 'none'; frame-ancestors ${ancestors}`,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    // One account's page: never shared by a cache, revalidated each time (it is small).
    'Cache-Control': 'no-store',
  };
}

let template: { html: string; mtimeMs: number } | undefined;
const BUILT = join(__dirname, '..', '..', 'web', 'dist', 'portal.html');

function portalTemplate(): string {
  const inlined = process.env.REFLOOP_PORTAL_HTML_B64;
  if (inlined && inlined.length > 0) {
    template ??= { html: Buffer.from(inlined, 'base64').toString('utf8'), mtimeMs: 0 };
  } else {
    // Read again when web/ was rebuilt under a running npm start (its hashed asset names changed).
    const mtimeMs = statSync(BUILT).mtimeMs;
    if (template?.mtimeMs !== mtimeMs) template = { html: readFileSync(BUILT, 'utf8'), mtimeMs };
  }
  if (!template.html.includes(ORIGINS_PLACEHOLDER)) throw new Error(`portal.html has no ${ORIGINS_PLACEHOLDER}`);
  return template.html;
}

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The page for an account with these embed origins. `theme` is the account's stored theme (already
 * checked: storedTheme), as `accent=%23…&radius=…` in `<meta name="refloop-theme">`: the app applies it
 * when the fragment brings none, with the same checks as a fragment's theme. `portal` is the account's
 * name in the path (its slug, else its id), for the app's links between the login view and the portal;
 * `program` the account's name, for the login view's title (the page is public: no member data).
 */
export function portalPage(
  embedOrigins: readonly string[],
  extra: { theme?: Record<string, string>; portal?: string; program?: string } = {},
): string {
  const theme = new URLSearchParams(extra.theme ?? {}).toString();
  const metas = [
    `<meta name="refloop-embed-origins" content="${attr(embedOrigins.join(' '))}">`,
    ...(theme ? [`<meta name="refloop-theme" content="${attr(theme)}">`] : []),
    ...(extra.portal ? [`<meta name="refloop-portal" content="${attr(extra.portal)}">`] : []),
    ...(extra.program ? [`<meta name="refloop-program" content="${attr(extra.program)}">`] : []),
  ];
  return portalTemplate().replace(ORIGINS_PLACEHOLDER, metas.join(''));
}

/** What an unknown account's portal address answers (no app, no data). */
export const NOT_FOUND_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><main><h1>This referral page does not exist</h1><p>Open it again from the app you use.</p></main></body></html>';
