// The host-side embed script served at /js/refloop-embed.js: plain ES2017, no dependencies, under 3 KB
// gzipped (a unit test parses it as ES2017, measures it and runs it against a stub DOM). It puts a
// member's referral portal into the app's own page, in an iframe:
//
//   <script src="https://<refloop host>/js/refloop-embed.js"></script>
//   <div id="referrals"></div>
//   <script>
//     Refloop.mount('#referrals', {
//       url: portalUrl,                       // from POST /v1/members/{id}/portal-sessions/ on the app's backend
//       theme: { accent: '#4f46e5', radius: '8px' },
//       onTokenExpired: function () { return fetch('/my/portal-url').then(function (r) { return r.text(); }); },
//       onReady: function () {},
//       onError: function (err) { console.warn(err.code, err.message); }
//     });
//   </script>
//
// `window.Refloop` is `{ version: '1', mount(el, options) }`. `el` is an Element or a CSS selector.
// Options: `url` (required, `https://<refloop host>/portal/<account_id>/#token=rpl_...`), `theme`
// (`accent`, `background`, `text`, `radius`, `font`, each passed through), `onTokenExpired` (returns a
// new portal URL, a Promise of one, or nothing), `onReady`, `onError({code, message})`, `title`
// (default 'Referral programme'), `height` (initial px, default 480), `readyTimeout` (ms, default 15000;
// 0 = never). `mount` returns `{ iframe, setUrl(newUrl), unmount() }`; `setUrl` hands the portal a new URL
// by postMessage, without reloading the iframe, and throws for a URL on another origin.
//
// A frame that never speaks: the portal posts its height as soon as its script runs, so a frame silent for
// `readyTimeout` did not get the portal. When the frame did load something, the browser most likely
// refused to frame the portal (CSP frame-ancestors: this site is not in the account's embed origins) and
// shows its bare error page: the script hides the frame, shows a short notice in its place and calls
// `onError({code: 'portal_refused'})` with a message naming this site's origin; when nothing loaded at all,
// `{code: 'portal_unreachable'}`. Without onError the message goes to console.error. Should the portal
// speak later after all (a very slow network), the notice goes and the frame shows.
//
// Messages (both directions carry a `source` tag): the portal sends `{source: 'refloop-portal', type}`
// with type `height` (`height`: px), `ready`, `token-expired` or `error` (`code`, `message`); the embed
// sends `{source: 'refloop-embed', type: 'url', url}`. The script never touches cookies or storage.
//
// Written with String.raw so the source below is exactly what browsers get; no backticks or `${` in it.
export const REFLOOP_EMBED_SCRIPT = String.raw`/*! Refloop referral portal embed */
(function () {
  'use strict';
  var w = window, d = document;
  if (w.Refloop && w.Refloop.version) return;
  var THEME = ['accent', 'background', 'text', 'radius', 'font'];

  function clamp(px) {
    return Math.min(20000, Math.max(120, Math.round(px))) + 'px';
  }

  function originOf(url) {
    return new URL(url, w.location.href).origin;
  }

  function mount(el, options) {
    var target = typeof el === 'string' ? d.querySelector(el) : el;
    if (!target || target.nodeType !== 1) throw new Error('Refloop.mount: no element ' + (typeof el === 'string' ? 'matches ' + JSON.stringify(el) : 'was given'));
    options = options || {};
    var url = options.url;
    // The session token travels in the fragment: browsers never send a fragment to a server, so the
    // token stays out of Refloop's access logs and out of any Referer header.
    if (typeof url !== 'string' || url.indexOf('#token=') < 0) throw new Error('Refloop.mount: options.url must be the portal URL with its #token=');
    var portalOrigin = originOf(url);
    var theme = options.theme || {};
    var onError = typeof options.onError === 'function' ? options.onError : function (err) {
      if (w.console) w.console.error('Refloop: ' + err.message);
    };

    // The portal learns the host's origin from the fragment and posts to it alone.
    var src = url + '&origin=' + encodeURIComponent(w.location.origin);
    for (var i = 0; i < THEME.length; i++) {
      var value = theme[THEME[i]];
      if (value != null && value !== '') src += '&' + THEME[i] + '=' + encodeURIComponent(String(value));
    }

    var iframe = d.createElement('iframe');
    iframe.setAttribute('title', options.title || 'Referral programme');
    iframe.setAttribute('allow', 'clipboard-write');
    iframe.setAttribute('referrerpolicy', 'no-referrer');
    iframe.style.width = '100%';
    iframe.style.border = '0';
    iframe.style.display = 'block';
    iframe.style.colorScheme = 'normal';
    iframe.style.height = clamp(typeof options.height === 'number' && isFinite(options.height) ? options.height : 480);
    iframe.src = src;
    target.appendChild(iframe);

    // Until the portal's first message: did the frame load anything, and is a notice shown in its place?
    var heard = false, loaded = false, notice = null, timer = null;
    var wait = typeof options.readyTimeout === 'number' && options.readyTimeout >= 0 ? options.readyTimeout : 15000;
    iframe.addEventListener('load', function () { loaded = true; });
    if (wait > 0) timer = w.setTimeout(silent, wait);

    function silent() {
      timer = null;
      if (heard || !iframe.parentNode) return;
      var site = w.location.origin, secs = Math.round(wait / 1000) + ' s';
      notice = d.createElement('p');
      notice.setAttribute('role', 'alert');
      notice.style.margin = '0';
      notice.style.padding = '12px 0';
      notice.textContent = 'The referral programme cannot be shown here right now.';
      iframe.style.display = 'none';
      iframe.parentNode.insertBefore(notice, iframe);
      onError(loaded
        ? { code: 'portal_refused', message: 'The referral portal did not start within ' + secs + '. Most likely this site (' + site + ') is not in the account\'s embed origins, so the browser refused to frame ' + portalOrigin + '. Add ' + site + ' under Settings > Embed origins in the Refloop dashboard (or PATCH /v1/account/ {"embed_origins": [...]}).' }
        : { code: 'portal_unreachable', message: 'The referral portal at ' + portalOrigin + ' did not load within ' + secs + '. Check that this browser can reach it.' });
    }

    function alive() {
      heard = true;
      if (timer !== null) w.clearTimeout(timer);
      timer = null;
      if (notice) {
        if (notice.parentNode) notice.parentNode.removeChild(notice);
        notice = null;
        iframe.style.display = 'block';
      }
    }

    var refreshing = false;
    var handle = {
      iframe: iframe,
      setUrl: function (newUrl) {
        if (typeof newUrl !== 'string' || originOf(newUrl) !== portalOrigin) throw new Error('Refloop: setUrl needs a URL on the portal origin ' + portalOrigin);
        // An explicit target origin, never '*': if the frame were navigated elsewhere, the browser drops
        // the message instead of handing the token to whoever is there now. No src change, so no reload.
        if (iframe.contentWindow) iframe.contentWindow.postMessage({ source: 'refloop-embed', type: 'url', url: newUrl }, portalOrigin);
      },
      unmount: function () {
        w.removeEventListener('message', onMessage);
        if (timer !== null) w.clearTimeout(timer);
        timer = null;
        if (notice && notice.parentNode) notice.parentNode.removeChild(notice);
        if (iframe.parentNode) iframe.parentNode.removeChild(iframe);
      }
    };

    function refresh() {
      if (typeof options.onTokenExpired !== 'function') {
        onError({ code: 'token_expired', message: 'The portal session expired; pass onTokenExpired to hand over a new URL.' });
        return;
      }
      if (refreshing) return;
      refreshing = true;
      Promise.resolve().then(function () { return options.onTokenExpired(); }).then(function (next) {
        refreshing = false;
        if (typeof next === 'string' && next) handle.setUrl(next);
      }).catch(function (err) {
        refreshing = false;
        onError({ code: 'token_refresh_failed', message: err && err.message ? String(err.message) : String(err) });
      });
    }

    function onMessage(event) {
      // Only the portal's own frame counts: the sender's origin must be the portal's and the sender must
      // be this iframe's window (another frame of the same origin, or another mount, is not it).
      if (event.origin !== portalOrigin || event.source !== iframe.contentWindow || !iframe.contentWindow) return;
      var data = event.data;
      if (!data || typeof data !== 'object' || data.source !== 'refloop-portal') return;
      if (!heard) alive();
      if (data.type === 'height') {
        if (typeof data.height === 'number' && isFinite(data.height)) iframe.style.height = clamp(data.height);
      } else if (data.type === 'ready') {
        if (typeof options.onReady === 'function') options.onReady();
      } else if (data.type === 'token-expired') {
        refresh();
      } else if (data.type === 'error') {
        onError({ code: String(data.code || 'error'), message: String(data.message || '') });
      }
    }

    w.addEventListener('message', onMessage);
    return handle;
  }

  w.Refloop = { version: '1', mount: mount };
})();
`;
