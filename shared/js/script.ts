// The browser script served at /js/refloop.js: plain ES2017, no dependencies, under 4 KB gzipped (a
// unit test parses it as ES2017 and measures it). Installation is one tag:
//
//   <script src="https://<api host>/js/refloop.js" data-key="rfl_pub_..." async></script>
//
// On a page reached through `?via=CODE` (and optionally `&sub=SLUG`, a named link's sub-id) it records one
// click and keeps the code in the first-party cookie `refloop-ref` (SameSite=Lax, Secure on https) under the
// account's attribution model (docs/attribution.md): the click's answer names the model and the window in
// days (`first_click`, 60 by default). With `first_click` a code already in an unexpired cookie stays when
// another link is clicked; with `last_click` the new code replaces it. The code expires `days` after the
// click that set it. It exposes `window.refloop` with `code`, `sub`, `referralId`, `signup(userIdentifier)`,
// `passthrough([extra])` (Paddle Classic) and `customData([extra])` (Paddle.js v2 for Paddle Billing, Stripe
// metadata), and fires `refloop:ready`. The cookie holds a URL-encoded JSON object: `c` the member code,
// `s` its sub-id, `t` when the code was set (unix seconds), `m` and `d` the account's model and days (from
// the last click's answer), `v` a random visitor id (counts a visitor's clicks once a day), `r` the referral
// id after signup (kept `d` days from the signup). Visitors who never arrived through a referral link get
// no cookie. Optional attributes: `data-api` (the API's origin, default the script's own),
// `data-cookie-domain` (e.g. `example.com`, to share the cookie between www. and app.).
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
  var DAY = 24 * 60 * 60;
  var CODE = /^[A-Za-z0-9_-]{1,30}$/;
  var SUB = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
  var now = Math.floor(Date.now() / 1000);

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

  // The account's window (60 days until a click's answer says otherwise).
  function days() {
    return state && state.d > 0 ? state.d : 60;
  }

  function save() {
    // The code's window runs from the click that set it; a referral id is kept for a window from its signup.
    var maxAge = state.r ? days() * DAY : state.t + days() * DAY - now;
    var cookie = COOKIE + '=' + encodeURIComponent(JSON.stringify(state)) + '; Path=/; Max-Age=' + Math.max(0, maxAge) + '; SameSite=Lax';
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
  if (state && state.c) {
    if (!(state.t > 0)) state.t = now; // a cookie from before the window was kept: its code counts from now
    if (now >= state.t + days() * DAY) state.c = state.s = state.t = undefined; // the window has passed
  }
  var via = null;
  var sub = null;
  try {
    var params = new URLSearchParams(location.search);
    via = params.get('via');
    sub = params.get('sub');
  } catch (e) { /* no URLSearchParams */ }
  if (!sub || !SUB.test(sub)) sub = null;
  var clicked = Promise.resolve(false);
  if (via && CODE.test(via)) {
    state = state || {};
    if (typeof state.v !== 'string') state.v = randomId();
    // The new code is taken when there is none, or when the account attributes to the last click (a
    // first-click account keeps the code it has; the click still counts for the link clicked).
    var attribute = function () {
      if (!state.c || state.m === 'last_click') {
        state.c = via;
        state.s = sub || undefined;
        state.t = now;
      }
    };
    attribute();
    save();
    clicked = post('/js/v1/clicks/', { code: via, visitor_id: state.v, sub: sub }).then(function (data) {
      var a = data && data.attribution;
      if (a && a.days > 0) {
        state.m = a.model;
        state.d = a.days;
      }
      return true;
    }, function () { return false; }).then(function (ok) {
      attribute();
      save();
      return ok;
    });
  }

  var refloop = {
    version: 1,
    get code() { return state && state.c ? state.c : null; },
    get sub() { return state && state.c && state.s ? state.s : null; },
    get referralId() { return state && state.r ? state.r : null; },
    /** Resolves when this page's click was recorded (true) or could not be (false). */
    clicked: clicked,
    /** Records the signup of a referred user: resolves to the referral id, or null without a referral code. */
    signup: function (userIdentifier) {
      var user = String(userIdentifier);
      // After this page's click (its answer may change which code the cookie keeps).
      return clicked.then(function () {
        if (!state || !state.c) return null;
        return post('/js/v1/referrals/', { member_code: state.c, user_identifier: user, sub: state.s || null });
      }).then(function (data) {
        if (!data) return null;
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
