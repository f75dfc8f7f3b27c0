// The affiliate's login view, /portal/<account>/login/ (docs/portal.md "Affiliate login"). Two states:
// - no token: the email form (POST /portal/v1/login-links/), which always answers the same "check your
//   email", whoever the address is;
// - the emailed link (`#token=` in the fragment, removed from the address bar by main.tsx): one button,
//   "Continue to your portal". Loading the page does nothing, so a mail scanner that opens the link logs
//   nobody in; the click trades the token for the `refloop_portal` cookie (POST /portal/v1/login-sessions/)
//   and opens the portal.
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { BusyButton } from '../ui/busy-button';
import { Field, Form, SubmitButton, text, useFormState } from '../ui/form';
import { openLoginSession, requestLoginLink, toProblem } from './api';

export const loginPath = (portal: string) => `/portal/${encodeURIComponent(portal)}/login/`;
export const portalPath = (portal: string) => `/portal/${encodeURIComponent(portal)}/`;

export function Login({
  portal,
  program,
  token,
  ended,
}: {
  /** The account's name in the path (slug or id). */
  portal: string;
  program: string | null;
  /** The emailed link's token, when the page was opened from it. */
  token: string | null;
  /** The visitor came from the portal without a session (never logged in here, or it ended). */
  ended: boolean;
}) {
  const [pending, setPending] = useState(token);
  const [refused, setRefused] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const form = useFormState();
  const name = program ? `${program} partner portal` : 'Partner portal';

  useEffect(() => {
    document.title = `Log in · ${name}`;
  }, [name]);

  const continueIn = async () => {
    if (!pending) return;
    setBusy(true);
    setRefused(null);
    try {
      const to = await openLoginSession(pending);
      location.assign(portalPath(to || portal));
    } catch (err) {
      const problem = toProblem(err);
      setBusy(false);
      if (problem.status === 401) {
        setPending(null);
        setRefused(problem.message ?? 'This login link has expired or was already used.');
      } else setRefused(problem.message ?? 'Something went wrong. Try again.');
    }
  };

  return (
    <main class="portal portal-message portal-login" data-testid="portal-login">
      <div class="message-icon" aria-hidden="true">
        {/* biome-ignore lint/a11y/noSvgWithoutTitle: decorative, inside an aria-hidden box. */}
        <svg viewBox="0 0 24 24" width="28" height="28">
          <path
            d="M12 2a5 5 0 0 1 5 5v3h1a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2v-8a2 2 0 0 1 2-2h1V7a5 5 0 0 1 5-5zm0 2a3 3 0 0 0-3 3v3h6V7a3 3 0 0 0-3-3zm0 9a2 2 0 0 0-1 3.7V18h2v-1.3a2 2 0 0 0-1-3.7z"
            fill="currentColor"
          />
        </svg>
      </div>
      <h1 class="message-title">{pending ? `Welcome to the ${name}` : `Log in to the ${name}`}</h1>
      {pending ? (
        <>
          <p class="message-text">Your login link is ready. Continue to see your links, referrals and earnings.</p>
          <BusyButton type="button" busy={busy} busyLabel="Logging in…" onClick={() => void continueIn()} data-testid="login-continue">
            Continue to your portal
          </BusyButton>
          {refused && (
            <p class="hint is-warning" role="alert">
              {refused}
            </p>
          )}
        </>
      ) : sent ? (
        <div class="login-sent" role="status" data-testid="login-sent">
          <p class="message-text">{sent}</p>
          <p class="message-text">The link works once, for 15 minutes. No email? Check your spam folder, or ask again in a minute.</p>
          <button type="button" class="btn btn-secondary" onClick={() => setSent(null)}>
            Use another address
          </button>
        </div>
      ) : (
        <>
          {ended && !refused && (
            <p class="message-text" data-testid="portal-expired">
              Your session has ended or this page has expired. Log in with the email address of your membership to continue.
            </p>
          )}
          {!ended && !refused && <p class="message-text">We will email you a link that logs you in. No password needed.</p>}
          {refused && (
            <p class="notice notice-error" role="alert">
              {refused} Ask for a new one below.
            </p>
          )}
          <div class="card login-card">
            <Form
              form={form}
              labelledBy="login-email-title"
              onSubmit={async (data) => {
                const email = text(data, 'email');
                if (!email) throw new ApiError({ status: 400, fields: { email: ['Enter your email address.'] }, message: null });
                setSent(await requestLoginLink(portal, email));
              }}
            >
              <h2 id="login-email-title" class="sr-only">
                Email me a login link
              </h2>
              <Field name="email" type="email" label="Email" autoComplete="email" inputMode="email" spellcheck={false} maxLength={254} />
              <div class="form-actions">
                <SubmitButton form={form} busyLabel="Sending…">
                  Email me a login link
                </SubmitButton>
              </div>
            </Form>
          </div>
        </>
      )}
    </main>
  );
}
