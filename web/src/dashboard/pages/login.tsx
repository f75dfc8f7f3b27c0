// /app/login: ask for a login link by email, or (opened from the emailed link, `#token=`) exchange the
// token for a session at once and go on to `?next=` or the overview.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, safeNext } from '../api';
import { toProblem, unwrap, type Problem } from '../../api/client';
import { Spinner } from '../../ui/busy-button';
import { Field, Form, SubmitButton, text, useFormState } from '../../ui/form';
import { handOverSession } from '../lib/boot';

function tokenFromFragment(): string | null {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!match?.[1]) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

export function Login() {
  const { query, route } = useLocation();
  const [token, setToken] = useState(tokenFromFragment);
  const [exchanging, setExchanging] = useState(token !== null);
  const [linkProblem, setLinkProblem] = useState<Problem | null>(null);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const form = useFormState();
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    document.title = 'Log in · Refloop';
    // A link pasted into this very tab changes only the fragment: no page load, so listen for it.
    const onHash = () => {
      const pasted = tokenFromFragment();
      if (pasted !== null) {
        setLinkProblem(null);
        setSentTo(null);
        setExchanging(true);
        setToken(pasted);
      }
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    if (token === null) return;
    // The token is single-use: it leaves the address bar (and the history) before anything else.
    history.replaceState(history.state, '', location.pathname + location.search);
    unwrap(api.POST('/auth/sessions/', { body: { token } }))
      .then((session) => {
        handOverSession(session);
        route(safeNext(query.next), true);
      })
      .catch((err: unknown) => {
        setLinkProblem(toProblem(err));
        setExchanging(false);
      });
  }, [token]);

  useEffect(() => {
    if (sentTo) heading.current?.focus();
  }, [sentTo]);

  if (exchanging) {
    return (
      <main id="main" class="login">
        <div class="login-card">
          <Brand />
          <h1>Logging you in</h1>
          <Spinner label="Checking your login link…" />
        </div>
      </main>
    );
  }

  if (sentTo) {
    return (
      <main id="main" class="login">
        <div class="login-card">
          <Brand />
          <h1 ref={heading} tabIndex={-1}>
            Check your inbox
          </h1>
          <p>
            If <strong>{sentTo}</strong> belongs to a Refloop team, a login link is on its way. It works once and expires in 15 minutes.
          </p>
          <p class="muted">No email after a few minutes? Check your spam folder, or ask an owner of your account to invite you.</p>
          <button type="button" class="btn btn-secondary" onClick={() => setSentTo(null)}>
            Use a different email
          </button>
        </div>
      </main>
    );
  }

  return (
    <main id="main" class="login">
      <div class="login-card">
        <Brand />
        <h1>Log in to Refloop</h1>
        {linkProblem && (
          <div class="alert alert-error" role="alert">
            <p>
              {linkProblem.status === 401
                ? 'This login link is invalid, expired or already used. Enter your email to get a new one.'
                : (linkProblem.message ?? 'The login link could not be checked.')}
            </p>
          </div>
        )}
        <p class="muted">We email you a link that logs you in: no password to remember.</p>
        <Form
          form={form}
          onSubmit={async (data) => {
            const email = text(data, 'email');
            await unwrap(api.POST('/auth/login-links/', { body: { email } }));
            setLinkProblem(null);
            setSentTo(email);
          }}
        >
          <Field name="email" label="Work email" type="email" autoComplete="email" required spellcheck={false} />
          <SubmitButton form={form} busyLabel="Sending…">
            Send me a login link
          </SubmitButton>
        </Form>
      </div>
    </main>
  );
}

function Brand() {
  return (
    <p class="login-brand">
      <span class="brand-mark" aria-hidden="true">
        R
      </span>
      Refloop
    </p>
  );
}
