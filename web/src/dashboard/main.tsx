// The operator dashboard: a static single-page app under /app/ on the API's own origin. It loads the
// session first (GET /auth/sessions/current/; a 401 sends the browser to /app/login), then routes.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { api, LOGIN_PATH } from './api';
import { unwrap, toProblem, type Problem } from '../api/client';
import type { Session } from '../api/types';
import { Spinner } from '../ui/busy-button';
import { ConfirmProvider } from '../ui/confirm';
import { Layout } from './components/layout';
import { ToastProvider } from '../ui/toast';
import { SessionContext } from './lib/session';
import { takeSessionFromLogin } from './lib/boot';
import { Login } from './pages/login';
import { NotFound } from './pages/not-found';
import { ROUTES } from './routes';
import './styles.css';

/** After a navigation, the new page's heading takes the focus (screen readers hear where they are). */
function focusHeading() {
  requestAnimationFrame(() => {
    const heading = document.querySelector<HTMLElement>('#main h1');
    if (heading) heading.focus({ preventScroll: true });
  });
}

function SignedIn() {
  const [session, setSession] = useState<Session | null>(takeSessionFromLogin);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (session) return;
    setProblem(null);
    unwrap(api.GET('/auth/sessions/current/'))
      .then(setSession)
      // A 401 is already on its way to the login page (api.ts); anything else can be retried.
      .catch((err: unknown) => {
        const p = toProblem(err);
        if (p.status !== 401) setProblem(p);
      });
  }, [attempt]);

  if (!session) {
    return (
      <main id="main" class="boot">
        <h1 class="sr-only">Refloop</h1>
        {problem ? (
          <div class="alert alert-error" role="alert">
            <p>Could not load your session: {problem.message}</p>
            <button type="button" class="btn btn-secondary" onClick={() => setAttempt((n) => n + 1)}>
              Try again
            </button>
          </div>
        ) : (
          <Spinner label="Loading your dashboard…" />
        )}
      </main>
    );
  }

  return (
    <SessionContext.Provider value={{ session, setSession }}>
      <Layout>
        <ErrorBoundary>
          <Router onRouteChange={focusHeading}>
            {ROUTES.map((route) => (
              <Route key={route.path} path={route.path} component={route.component} />
            ))}
            <Route default component={NotFound} />
          </Router>
        </ErrorBoundary>
      </Layout>
    </SessionContext.Provider>
  );
}

function Root() {
  const { path } = useLocation();
  return path === LOGIN_PATH ? <Login /> : <SignedIn />;
}

function App() {
  return (
    <LocationProvider scope="/app">
      <ToastProvider>
        <ConfirmProvider>
          <Root />
        </ConfirmProvider>
      </ToastProvider>
    </LocationProvider>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
