// Talking to the app that frames the portal (shared/js/embed.ts, its protocol is fixed). The host's origin
// comes from the fragment (`origin=`), and is trusted only when the page is framed and the origin is one
// of the account's embed origins, which the page's server wrote into <meta name="refloop-embed-origins">
// (the same list as the CSP's frame-ancestors). Without a trusted origin the portal posts nothing at all;
// with one, every message names it as the target (never '*') and only its messages are read.
//
// Portal -> host: {source: 'refloop-portal', type: 'height' | 'ready' | 'token-expired' | 'error', ...}
// Host -> portal: {source: 'refloop-embed', type: 'url', url}: a fresh portal URL with a new link token.

let hostOrigin: string | null = null;

function normalOrigin(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
  } catch {
    return null;
  }
}

export const isFramed = (): boolean => {
  try {
    return window.parent !== window;
  } catch {
    return true;
  }
};

/** Decides (once, at load) whether `origin` from the fragment is the host to talk to. */
export function trustHost(origin: string | null): string | null {
  hostOrigin = null;
  if (!origin || !isFramed()) return null;
  const wanted = normalOrigin(origin);
  const meta = document.querySelector<HTMLMetaElement>('meta[name="refloop-embed-origins"]');
  const allowed = (meta?.content ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map(normalOrigin)
    .filter((o): o is string => o !== null);
  // Compared as written by the host (the embed sends location.origin) and as listed.
  if (wanted !== null && wanted === origin && allowed.includes(wanted)) hostOrigin = wanted;
  return hostOrigin;
}

export const hasHost = () => hostOrigin !== null;

type Message =
  | { type: 'height'; height: number }
  | { type: 'ready' }
  | { type: 'token-expired' }
  | { type: 'error'; code: string; message: string };

export function post(message: Message): void {
  if (hostOrigin === null) return;
  try {
    window.parent.postMessage({ source: 'refloop-portal', ...message }, hostOrigin);
  } catch {
    // the parent went away
  }
}

/**
 * Calls `onUrl` with each portal URL the host hands over (`setUrl` / `onTokenExpired`): from the parent
 * window, from the trusted origin, tagged by the embed script. Nothing is listened to without a host.
 */
export function listenForUrls(onUrl: (url: string) => void): void {
  if (hostOrigin === null) return;
  const origin = hostOrigin;
  window.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== window.parent || event.origin !== origin) return;
    const data: unknown = event.data;
    if (data === null || typeof data !== 'object') return;
    const { source, type, url } = data as { source?: unknown; type?: unknown; url?: unknown };
    if (source === 'refloop-embed' && type === 'url' && typeof url === 'string') onUrl(url);
  });
}

/** The link token of a portal URL for this very page (same origin, same path), else null. */
export function tokenOfPortalUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value, location.href);
  } catch {
    return null;
  }
  if (url.origin !== location.origin || url.pathname !== location.pathname) return null;
  return new URLSearchParams(url.hash.slice(1)).get('token');
}

/** Tells the host the page's height whenever it changes (the embed sizes its iframe to it). */
export function reportHeight(): void {
  if (hostOrigin === null || typeof ResizeObserver === 'undefined') return;
  let last = -1;
  const root = document.documentElement;
  const measure = () => {
    // The content's height (html is auto-height, never the viewport's): a taller frame does not feed back.
    const height = Math.ceil(Math.max(root.getBoundingClientRect().height, document.body.scrollHeight));
    if (height !== last) {
      last = height;
      post({ type: 'height', height });
    }
  };
  new ResizeObserver(measure).observe(root);
  measure();
}
