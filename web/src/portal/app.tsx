// The portal's one page and its states: opening (the link's token traded for a session), ready (the
// member's page), expired (any 401: nothing of the member is kept or shown) and error (anything else, with
// a retry). A fresh URL from the host (host.ts) opens a new session in place: no reload.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { Spinner } from '../ui/busy-button';
import { formatCount } from '../ui/format';
import {
  clearSession,
  errorCode,
  getMe,
  hasSession,
  onSessionEnded,
  openSession,
  toProblem,
  unauthenticated,
  type Me,
  type Problem,
} from './api';
import { hasHost, isFramed, listenForUrls, post, reportHeight, tokenOfPortalUrl } from './host';
import { Payouts, Referrals, Rewards } from './lists';
import { Settings } from './settings';
import { Share, StatsSection, Terms } from './sections';
import { timeOnly } from './util';

type State = { kind: 'opening' } | { kind: 'ready'; me: Me } | { kind: 'expired' } | { kind: 'error'; problem: Problem };

/** How many times in a row the page asks the host for a fresh URL by itself (a host that keeps handing
 * over used links must not loop); the expired page's button asks again. */
const AUTO_REFRESHES = 3;

export function App({ linkToken, params }: { linkToken: string | null; params: string }) {
  const [state, setState] = useState<State>({ kind: 'opening' });
  const [generation, setGeneration] = useState(0);
  const current = useRef(0);
  // A link token not traded yet (the exchange failed for another reason than 401): a retry uses it.
  const pending = useRef<string | null>(linkToken);
  const asked = useRef(0);

  const expire = useCallback(() => {
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
        if (token) {
          pending.current = token;
          await openSession(token, params);
          pending.current = null;
        } else if (!hasSession()) {
          throw unauthenticated();
        }
        const me = await getMe();
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
    [params, expire],
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
  if (state.kind === 'expired') return <Expired />;
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

function Expired() {
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
        <p class="message-text">Open it again from the app where you found it.</p>
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
  return (
    <div class="portal">
      <header class="portal-header">
        {back && (
          <a class="back-link" href={back}>
            <span aria-hidden="true">←</span> Back
          </a>
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
        <StatsSection me={me} />
        <Referrals />
        <Rewards />
        <Payouts me={me} />
        <Settings me={me} onMe={onMe} />
      </main>
      <footer class="portal-footer">
        <p>
          Session ends at <time dateTime={new Date(me.session.expires_at * 1000).toISOString()}>{timeOnly(me.session.expires_at)}</time>
        </p>
      </footer>
    </div>
  );
}
