// The portal's one page and its states: opening (the link's token traded for a session), ready (the
// member's page), expired (any 401: nothing of the member is kept or shown) and error (anything else, with
// a retry). A fresh URL from the host (host.ts) opens a new session in place: no reload.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { BusyButton, Spinner } from '../ui/busy-button';
import { formatCount } from '../ui/format';
import {
  clearSession,
  errorCode,
  getMe,
  hasSession,
  logOut,
  onCookieSession,
  onSessionEnded,
  openSession,
  toProblem,
  unauthenticated,
  openCookieSession,
  type Me,
  type Problem,
} from './api';
import { hasHost, isFramed, listenForUrls, post, reportHeight, tokenOfPortalUrl } from './host';
import { Links } from './links';
import { Payouts, Referrals, Rewards } from './lists';
import { Login, loginPath } from './login';
import { TaxDetailsSection } from './tax-details';
import { Settings } from './settings';
import { Share, StatsSection, Terms } from './sections';
import { timeOnly } from './util';

type State =
  | { kind: 'opening' }
  | { kind: 'ready'; me: Me }
  | { kind: 'expired' }
  | { kind: 'login' }
  | { kind: 'error'; problem: Problem };

/** How many times in a row the page asks the host for a fresh URL by itself (a host that keeps handing
 * over used links must not loop); the expired page's button asks again. */
const AUTO_REFRESHES = 3;

export function App({
  linkToken,
  params,
  portal,
  program,
}: {
  linkToken: string | null;
  params: string;
  /** The account's name in the path (slug or id), for the login view. */
  portal: string;
  program: string | null;
}) {
  const [state, setState] = useState<State>({ kind: 'opening' });
  const [generation, setGeneration] = useState(0);
  const current = useRef(0);
  // A link token not traded yet (the exchange failed for another reason than 401): a retry uses it.
  const pending = useRef<string | null>(linkToken);
  const asked = useRef(0);

  /** No session, or it ended: a standalone page asks for a login (an affiliate's, or any member's by email). */
  const toLogin = useCallback(() => {
    clearSession();
    current.current += 1;
    history.replaceState(null, '', loginPath(portal));
    setState({ kind: 'login' });
  }, [portal]);

  const expire = useCallback((viaCookie = false) => {
    if (viaCookie || onCookieSession()) {
      toLogin();
      return;
    }
    clearSession();
    pending.current = null;
    current.current += 1;
    setState({ kind: 'expired' });
    if (asked.current < AUTO_REFRESHES) {
      asked.current += 1;
      post({ type: 'token-expired' });
    }
  }, []);

  const start = useCallback(
    async (token: string | null) => {
      const run = ++current.current;
      setState({ kind: 'opening' });
      try {
        let me: Me;
        if (token) {
          pending.current = token;
          await openSession(token, params);
          pending.current = null;
          me = await getMe();
        } else if (hasSession()) {
          me = await getMe();
        } else if (!isFramed()) {
          // A top-level page without a link: the affiliate's cookie session, if the browser holds one.
          try {
            me = await openCookieSession();
          } catch (err) {
            if (run === current.current && toProblem(err).status === 401) {
              toLogin();
              return;
            }
            throw err;
          }
        } else {
          throw unauthenticated();
        }
        if (run !== current.current) return;
        asked.current = 0;
        setGeneration(run);
        setState({ kind: 'ready', me });
      } catch (err) {
        if (run !== current.current) return;
        const problem = toProblem(err);
        if (problem.status === 401) {
          expire();
          return;
        }
        setState({ kind: 'error', problem });
        post({ type: 'error', code: errorCode(problem), message: problem.message ?? '' });
      }
    },
    [params, expire, toLogin],
  );

  useEffect(() => {
    const stop = onSessionEnded(expire);
    listenForUrls((url) => {
      const token = tokenOfPortalUrl(url);
      if (token) void start(token);
    });
    reportHeight();
    void start(linkToken);
    return stop;
  }, []);

  // Once per session shown: the host's onReady.
  useEffect(() => {
    if (state.kind === 'ready') post({ type: 'ready' });
  }, [state.kind === 'ready' ? generation : -1]);

  useEffect(() => {
    document.title =
      state.kind === 'ready'
        ? `${state.me.program.name} referral programme`
        : state.kind === 'expired'
          ? 'This page has expired'
          : 'Referral programme';
  }, [state]);

  if (state.kind === 'ready') {
    return <Portal key={generation} me={state.me} onMe={(me) => setState({ kind: 'ready', me })} />;
  }
  if (state.kind === 'expired') return <Expired portal={portal} />;
  if (state.kind === 'login') return <Login portal={portal} program={program} token={null} ended />;
  if (state.kind === 'error') {
    return (
      <Frame title="Something went wrong">
        <div class="notice notice-error" role="alert">
          <p>{state.problem.message ?? 'The page could not be loaded.'}</p>
          <button type="button" class="btn btn-primary" onClick={() => void start(hasSession() ? null : pending.current)}>
            Try again
          </button>
        </div>
      </Frame>
    );
  }
  return (
    <Frame title="Your referral programme" hiddenTitle>
      <Spinner label="Loading your referral page…" />
    </Frame>
  );
}

/** A page without member data: the expired link, the loading state, an error. */
function Frame({ title, hiddenTitle, children }: { title: string; hiddenTitle?: boolean; children: ComponentChildren }) {
  return (
    <main class="portal portal-message">
      <h1 class={hiddenTitle ? 'sr-only' : 'message-title'}>{title}</h1>
      {children}
    </main>
  );
}

function Expired({ portal }: { portal: string }) {
  const [asked, setAsked] = useState(false);
  return (
    <main class="portal portal-message" data-testid="portal-expired">
      <div class="message-icon" aria-hidden="true">
        {/* biome-ignore lint/a11y/noSvgWithoutTitle: decorative, inside an aria-hidden box. */}
        <svg viewBox="0 0 24 24" width="28" height="28">
          <path
            d="M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 2a8 8 0 1 1 0 16 8 8 0 0 1 0-16zm-1 3v6l5 3 1-1.6-4-2.4V7z"
            fill="currentColor"
          />
        </svg>
      </div>
      <h1 class="message-title">This page has expired</h1>
      <p class="message-text">For your security, this referral page only works for a short while.</p>
      {hasHost() ? (
        <>
          <p class="message-text">Reload the page you opened it from to see it again.</p>
          <button
            type="button"
            class="btn btn-primary"
            onClick={() => {
              setAsked(true);
              post({ type: 'token-expired' });
            }}
          >
            Try again
          </button>
          <p class="message-text" role="status">
            {asked ? 'Asking for a fresh link…' : ''}
          </p>
        </>
      ) : (
        <>
          <p class="message-text">Open it again from the app where you found it.</p>
          {!isFramed() && (
            <p class="message-text">
              Or <a href={loginPath(portal)}>log in with your email address</a>.
            </p>
          )}
        </>
      )}
    </main>
  );
}

function greetingName(me: Me): string {
  const first = me.member.first_name?.trim();
  return first ? `Hi ${first},` : 'Hi,';
}

/** The return URL as a link target: http(s) only (the API checks it too). */
function safeReturnUrl(value: string | null): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

function Portal({ me, onMe }: { me: Me; onMe: (me: Me) => void }) {
  const back = isFramed() ? null : safeReturnUrl(me.session.return_url);
  const { stats } = me;
  const affiliate = me.session.mode === 'cookie';
  const [leaving, setLeaving] = useState(false);
  const [sub, setSub] = useState<string | null>(null);
  return (
    <div class="portal">
      <header class="portal-header">
        {back && (
          <a class="back-link" href={back}>
            <span aria-hidden="true">←</span> Back
          </a>
        )}
        {affiliate && (
          <div class="header-actions">
            <BusyButton
              variant="secondary"
              class="btn-small"
              busy={leaving}
              busyLabel="Logging out…"
              onClick={async () => {
                setLeaving(true);
                await logOut();
                location.assign(loginPath(me.program.portal));
              }}
            >
              Log out
            </BusyButton>
          </div>
        )}
        <h1 class="portal-title">{me.program.name ? `${me.program.name} referral programme` : 'Referral programme'}</h1>
        <p class="portal-greeting" data-testid="portal-greeting">
          {greetingName(me)}{' '}
          {stats.referrals > 0
            ? `you have referred ${formatCount(stats.referrals)} ${stats.referrals === 1 ? 'person' : 'people'} so far. Thank you!`
            : 'share your link and earn rewards when friends join.'}
        </p>
      </header>
      <main class="portal-main">
        <div class="hero">
          <Share me={me} />
          <Terms me={me} />
        </div>
        <Links me={me} onSub={setSub} />
        <StatsSection me={me} sub={sub} onSub={setSub} />
        <Referrals />
        <Rewards />
        <Payouts me={me} />
        <Settings me={me} onMe={onMe} />
        {me.tax_details.required && <TaxDetailsSection />}
      </main>
      <footer class="portal-footer">
        <p>
          {affiliate ? 'Logged in until ' : 'Session ends at '}
          <time dateTime={new Date(me.session.expires_at * 1000).toISOString()}>{timeOnly(me.session.expires_at)}</time>
          {affiliate ? ' (each visit extends it)' : ''}
        </p>
      </footer>
    </div>
  );
}
