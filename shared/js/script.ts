// The browser script served at /js/refloop.js: plain ES2017, no dependencies, under 4 KB gzipped (a
// unit test parses it as ES2017 and measures it). Installation is one tag:
//
//   <script src="https://<api host>/js/refloop.js" data-key="rfl_pub_..." async></script>
//
// On a page reached through `?via=CODE` it stores the code in the first-party cookie `refloop-ref`
// (30 days, SameSite=Lax, Secure on https) and records one click; it exposes `window.refloop` with
// `code`, `referralId`, `signup(userIdentifier)`, `passthrough([extra])` (Paddle Classic) and
// `customData([extra])` (Paddle.js v2 for Paddle Billing, Stripe metadata), and fires `refloop:ready`.
// The cookie holds a URL-encoded JSON object: `c` the member code, `v` a random visitor id (counts a
// visitor's clicks once a day), `r` the referral id after signup. Visitors who never arrived through a
// referral link get no cookie. Optional attributes: `data-api` (the API's origin, default the script's
// own), `data-cookie-domain` (e.g. `example.com`, to share the cookie between www. and app.).
//
// Written with String.raw so the source below is exactly what browsers get; no backticks or `${` in it.
export const REFLOOP_SCRIPT = String.raw`/*! Refloop referral tracking */
(function () {
  'use strict';
  var w = window, d = document;
  if (w.refloop && w.refloop.version) return;
  var el = d.currentScript || d.querySelector('script[data-key]');
  var key = el ? el.getAttribute('data-key') : null;
  var api = el ? el.getAttribute('data-api') || new URL(el.src, location.href).origin : '';
  var cookieDomain = el ? el.getAttribute('data-cookie-domain') : null;
  var COOKIE = 'refloop-ref';
  var MAX_AGE = 30 * 24 * 60 * 60;
  var CODE = /^[A-Za-z0-9_-]{1,30}$/;

  function readState() {
    var parts = d.cookie ? d.cookie.split(/;\s*/) : [];
    for (var i = 0; i < parts.length; i++) {
      var eq = parts[i].indexOf('=');
      if (eq > 0 && parts[i].slice(0, eq) === COOKIE) {
        try {
          var value = JSON.parse(decodeURIComponent(parts[i].slice(eq + 1)));
          if (value && typeof value === 'object') return value;
        } catch (e) { /* a damaged cookie is replaced */ }
      }
    }
    return null;
  }

  function save() {
    var cookie = COOKIE + '=' + encodeURIComponent(JSON.stringify(state)) + '; Path=/; Max-Age=' + MAX_AGE + '; SameSite=Lax';
    if (cookieDomain) cookie += '; Domain=' + cookieDomain;
    if (location.protocol === 'https:') cookie += '; Secure';
    d.cookie = cookie;
  }

  function digest(text) {
    var h = 5381;
    for (var i = 0; i < text.length; i++) h = ((h * 33) ^ text.charCodeAt(i)) >>> 0;
    return h.toString(36);
  }

  function randomId() {
    var bytes = new Uint8Array(16);
    w.crypto.getRandomValues(bytes);
    var out = '';
    for (var i = 0; i < bytes.length; i++) out += (bytes[i] + 256).toString(16).slice(1);
    return out;
  }

  function post(path, body) {
    if (!key) return Promise.reject(new Error('Refloop: the script tag has no data-key'));
    return fetch(api + path, {
      method: 'POST',
      mode: 'cors',
      credentials: 'omit',
      keepalive: true,
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + key },
      body: JSON.stringify(body)
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (data) {
        if (res.ok) return data;
        var err = new Error('Refloop: ' + res.status + ' ' + JSON.stringify(data));
        err.status = res.status;
        err.body = data;
        throw err;
      });
    });
  }

  var state = readState();
  var via = null;
  try { via = new URLSearchParams(location.search).get('via'); } catch (e) { /* no URLSearchParams */ }
  var clicked = Promise.resolve(false);
  if (via && CODE.test(via)) {
    state = state || {};
    if (typeof state.v !== 'string') state.v = randomId();
    state.c = via;
    save();
    clicked = post('/js/v1/clicks/', { code: via, visitor_id: state.v }).then(function () { return true; }, function () { return false; });
  }

  var refloop = {
    version: 1,
    get code() { return state && state.c ? state.c : null; },
    get referralId() { return state && state.r ? state.r : null; },
    /** Resolves when this page's click was recorded (true) or could not be (false). */
    clicked: clicked,
    /** Records the signup of a referred user: resolves to the referral id, or null without a referral code. */
    signup: function (userIdentifier) {
      if (!state || !state.c) return Promise.resolve(null);
      var user = String(userIdentifier);
      return post('/js/v1/referrals/', { member_code: state.c, user_identifier: user }).then(function (data) {
        // The service answers every signup alike (a repeat gets a decoy id): the first id for a user stays.
        // The cookie keeps a short digest of the user, never the identifier itself.
        if (!(state.r && state.u === digest(user))) {
          state.r = data.id;
          state.u = digest(user);
          save();
        }
        return state.r;
      });
    },
    /** The string for Paddle Classic Checkout's passthrough: the referral id, merged into the app's own keys if given. */
    passthrough: function (extra) {
      return JSON.stringify(refloop.customData(extra));
    },
    /** The object for Paddle.js v2's customData (Paddle Billing) or Stripe metadata: the same keys, not a string. */
    customData: function (extra) {
      var out = {};
      if (extra && typeof extra === 'object') for (var k in extra) if (Object.prototype.hasOwnProperty.call(extra, k)) out[k] = extra[k];
      if (state && state.r) out.refloop_referral_id = state.r;
      return out;
    }
  };
  w.refloop = refloop;
  try { w.dispatchEvent(new CustomEvent('refloop:ready', { detail: refloop })); } catch (e) { /* old browsers */ }
})();
`;
