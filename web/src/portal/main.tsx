// The member portal: GET /portal/<account>/#token=rpl_…[&origin=…&accent=…&background=…&text=…&radius=…&font=…],
// served by functions/portal/page.ts (shared/portal/page.ts) with a CSP that forbids inline scripts and
// styles and lets only the account's embed origins frame it. Standalone (a member opens the link), in
// an app's page through Refloop.mount (shared/js/embed.ts), or an affiliate's own portal on the
// `refloop_portal` cookie, after the login view at /portal/<account>/login/ (login.tsx).
//
// At load, before anything renders: the fragment is read and removed from the address bar and history
// (the token is single use, but it should not linger either), the theme is applied (the fragment's, else
// the account's own from <meta name="refloop-theme">, checked the same way), and the host's origin is
// trusted or not (host.ts). The app (app.tsx) then trades the token for a session and shows the page.
import { render } from 'preact';
import { restoreSession } from './api';
import { App } from './app';
import { isFramed, trustHost } from './host';
import { Login } from './login';
import { applyTheme, themeFrom } from './theme';
import './portal.css';

const meta = (name: string): string | null => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? null;

const fragment = new URLSearchParams(location.hash.slice(1));
if (location.hash) history.replaceState(null, '', location.pathname + location.search);

const pathMatch = /^\/portal\/([^/]+)\/(login\/?)?$/.exec(location.pathname);
const portal = meta('refloop-portal') ?? decodeURIComponent(pathMatch?.[1] ?? '');
const program = meta('refloop-program');
const onLoginPath = Boolean(pathMatch?.[2]);

const linkToken = fragment.get('token');
fragment.delete('token');
// Without a token in the fragment (a reload), the session this tab opened and its fragment's parameters.
const restored = linkToken || onLoginPath ? null : restoreSession();
const params = linkToken ? fragment : new URLSearchParams(restored?.params ?? '');

const fragmentTheme = themeFrom(params);
applyTheme(Object.keys(fragmentTheme).length > 0 ? fragmentTheme : themeFrom(new URLSearchParams(meta('refloop-theme') ?? '')));
document.documentElement.classList.add(isFramed() ? 'is-framed' : 'is-top');
trustHost(params.get('origin'));

const root = document.getElementById('portal');
if (root) {
  if (onLoginPath) render(<Login portal={portal} program={program} token={linkToken} ended={false} />, root);
  else render(<App linkToken={linkToken} params={params.toString()} portal={portal} program={program} />, root);
}
