// The member portal: GET /portal/<account_id>/#token=rpl_…[&origin=…&accent=…&background=…&text=…&radius=…&font=…],
// served by functions/portal/page.ts (shared/portal/page.ts) with a CSP that forbids inline scripts and
// styles and lets only the account's embed origins frame it. Standalone (a member opens the link) or in
// an app's page through Refloop.mount (shared/js/embed.ts).
//
// At load, before anything renders: the fragment is read and removed from the address bar and history
// (the token is single use, but it should not linger either), the theme is applied, and the host's origin
// is trusted or not (host.ts). The app (app.tsx) then trades the token for a session and shows the page.
import { render } from 'preact';
import { restoreSession } from './api';
import { App } from './app';
import { isFramed, trustHost } from './host';
import { applyTheme, themeFrom } from './theme';
import './portal.css';

const fragment = new URLSearchParams(location.hash.slice(1));
if (location.hash) history.replaceState(null, '', location.pathname);

const linkToken = fragment.get('token');
fragment.delete('token');
// Without a token in the fragment (a reload), the session this tab opened and its fragment's parameters.
const restored = linkToken ? null : restoreSession();
const params = linkToken ? fragment : new URLSearchParams(restored?.params ?? '');

applyTheme(themeFrom(params));
document.documentElement.classList.add(isFramed() ? 'is-framed' : 'is-top');
trustHost(params.get('origin'));

const root = document.getElementById('portal');
if (root) render(<App linkToken={linkToken} params={params.toString()} />, root);
