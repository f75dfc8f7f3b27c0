// The member's only writes: how and where commission is sent, and whether Refloop emails them. PATCH
// /portal/v1/me/; the API's field errors (`{"payout_email": ["..."]}`) show under the field (ui/form.tsx). A
// credit-only member is not asked for a payout email (api.ts collectsCommission).
//
// Payout method (docs/portal.md "Payouts"): a choice among the rails the programme connected
// (`program.payout_methods`). PayPal and Wise pay the payout email; Stripe pays the member's own Stripe
// account, made through "Set up payouts" (Stripe's onboarding, which comes back to this page with
// `?stripe=return` or `?stripe=refresh`). Back from Stripe, the page says whether the method is ready, and
// asks again for a little while, since Stripe's word arrives by webhook.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { BusyButton } from '../ui/busy-button';
import { CheckField, Field, Form, SubmitButton, checked, textOrNull, useFieldErrors, useFormState } from '../ui/form';
import { collectsCommission, errorCode, getMe, stripeAccountLink, toProblem, updateMe, type Me, type PayoutMethod } from './api';
import { isFramed, post } from './host';
import { ACCOUNT_METHOD, METHOD_HINTS, METHOD_NAMES, RETURN_PARAM } from './rails';

/** How long the page keeps asking after coming back from Stripe, and how often. */
const RETURN_POLL_MS = 30_000;
const RETURN_POLL_EVERY_MS = 2_000;

type Returned = 'return' | 'refresh' | null;

/** `?stripe=return|refresh` of the page's address, removed from it at once (a reload should not say it again). */
function takeStripeReturn(): Returned {
  const query = new URLSearchParams(location.search);
  const value = query.get(RETURN_PARAM);
  if (value !== 'return' && value !== 'refresh') return null;
  query.delete(RETURN_PARAM);
  const rest = query.toString();
  history.replaceState(null, '', location.pathname + (rest ? `?${rest}` : '') + location.hash);
  return value;
}

export function Settings({ me, onMe }: { me: Me; onMe: (me: Me) => void }) {
  const form = useFormState();
  const [saved, setSaved] = useState(false);
  const edited = () => setSaved(false);
  const rails = me.program.payout_methods;
  const current = me.member.payout_method;
  // The choices: the connected rails, and the member's own method even when the programme disconnected it.
  const choices: PayoutMethod[] = current && !rails.includes(current) ? [...rails, current] : [...rails];
  const [method, setMethod] = useState<PayoutMethod | null>(current);
  const [returned] = useState<Returned>(takeStripeReturn);
  const payouts = collectsCommission(me) || current !== null || returned !== null;
  const section = useRef<HTMLFieldSetElement>(null);

  useEffect(() => {
    if (!returned) return;
    section.current?.scrollIntoView({ block: 'center' });
    section.current?.focus({ preventScroll: true });
  }, [returned]);

  return (
    <section id="settings" class="section" aria-labelledby="settings-title">
      <h2 id="settings-title" class="section-title">
        Settings
      </h2>
      <div class="card">
        <Form
          form={form}
          labelledBy="settings-title"
          onSubmit={async (data) => {
            setSaved(false);
            try {
              const updated = await updateMe({
                ...(payouts && method !== ACCOUNT_METHOD ? { payout_email: textOrNull(data, 'payout_email') } : {}),
                ...(payouts && method !== current ? { payout_method: method } : {}),
                email_opt_out: checked(data, 'email_opt_out'),
              });
              onMe(updated);
              setSaved(true);
            } catch (err) {
              const p = toProblem(err);
              // A field's message is the member's to fix; a 401 ends the page. Anything else, the host hears of.
              if (!(err instanceof ApiError) || (p.status !== 400 && p.status !== 401))
                post({ type: 'error', code: errorCode(p), message: p.message ?? '' });
              throw err;
            }
          }}
        >
          {payouts && (
            <fieldset class="fieldset" id="payout-settings" ref={section} tabIndex={-1}>
              <legend>Payout settings</legend>
              {choices.length > 0 && (
                <MethodChoice
                  choices={choices}
                  value={method}
                  onChange={(m) => {
                    setMethod(m);
                    edited();
                  }}
                />
              )}
              {method === ACCOUNT_METHOD ? (
                <StripeSetup me={me} onMe={onMe} returned={returned} />
              ) : (
                <Field
                  name="payout_email"
                  type="email"
                  label="Payout email"
                  hint={
                    method === 'paypal'
                      ? 'The email of your PayPal account'
                      : method === 'wise'
                        ? 'The email of your Wise account'
                        : 'Where we send your commission (PayPal or Wise)'
                  }
                  defaultValue={me.member.payout_email ?? ''}
                  autoComplete="email"
                  inputMode="email"
                  spellcheck={false}
                  maxLength={254}
                  onInput={edited}
                />
              )}
              {me.tax_details.required && (
                <p class="hint">
                  {me.tax_details.provided ? (
                    'Your tax details are on file.'
                  ) : (
                    <>
                      Payouts wait until you give your <a href="#tax-details">tax details</a>.
                    </>
                  )}
                </p>
              )}
            </fieldset>
          )}
          <fieldset class="fieldset">
            <legend>Emails</legend>
            <CheckField
              name="email_opt_out"
              label="Don't email me about my referrals and rewards"
              defaultChecked={me.member.email_opt_out}
              onChange={edited}
            />
          </fieldset>
          <div class="form-actions">
            <SubmitButton form={form} busyLabel="Saving…">
              Save
            </SubmitButton>
            <p class="form-saved" role="status">
              {saved ? 'Your settings are saved.' : ''}
            </p>
          </div>
        </Form>
      </div>
    </section>
  );
}

/** The payout method: one radio per connected rail, and "no preference" (the programme pays the payout email). */
function MethodChoice({
  choices,
  value,
  onChange,
}: {
  choices: PayoutMethod[];
  value: PayoutMethod | null;
  onChange: (m: PayoutMethod | null) => void;
}) {
  const errors = useFieldErrors('payout_method');
  const options: { value: PayoutMethod | null; label: string; hint: string }[] = [
    ...choices.map((m) => ({ value: m, label: METHOD_NAMES[m], hint: METHOD_HINTS[m] })),
    { value: null, label: 'No preference', hint: 'The programme pays your payout email its own way' },
  ];
  return (
    <fieldset class="method-choice" aria-describedby={errors.length > 0 ? 'payout-method-error' : undefined}>
      <legend class="label">How you're paid</legend>
      {options.map((o) => {
        const id = `payout-method-${o.value ?? 'none'}`;
        return (
          <div class="field-check method-option" key={id}>
            <input
              type="radio"
              class="check"
              id={id}
              name="payout_method"
              value={o.value ?? ''}
              checked={value === o.value}
              onChange={() => onChange(o.value)}
              aria-describedby={`${id}-hint`}
            />
            <label class="label-inline" for={id}>
              {o.label}
            </label>
            <p class="hint" id={`${id}-hint`}>
              {o.hint}
            </p>
          </div>
        );
      })}
      {errors.length > 0 && (
        <p class="field-error" id="payout-method-error">
          {errors.join(' ')}
        </p>
      )}
    </fieldset>
  );
}

/** Stripe: whether the member's account can be paid, and "Set up payouts" (Stripe's onboarding). */
function StripeSetup({ me, onMe, returned }: { me: Me; onMe: (me: Me) => void; returned: Returned }) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [checking, setChecking] = useState(returned === 'return' && !me.member.payout_method_ready);
  const stripeChosen = me.member.payout_method === ACCOUNT_METHOD;
  const ready = stripeChosen && me.member.payout_method_ready;
  const latest = useRef({ me, onMe });
  latest.current = { me, onMe };

  // Back from Stripe: its word (account.updated) may come a little after the member, so ask again for a while.
  useEffect(() => {
    if (returned !== 'return' || latest.current.me.member.payout_method_ready) return;
    let stopped = false;
    const deadline = Date.now() + RETURN_POLL_MS;
    const tick = async () => {
      while (!stopped && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, RETURN_POLL_EVERY_MS));
        if (stopped) return;
        try {
          const fresh = await getMe();
          if (stopped) return;
          if (fresh.member.payout_method_ready !== latest.current.me.member.payout_method_ready) latest.current.onMe(fresh);
          if (fresh.member.payout_method_ready) break;
        } catch {
          break; // a 401 ends the page elsewhere; anything else: the member can reload
        }
      }
      if (!stopped) setChecking(false);
    };
    void tick();
    return () => {
      stopped = true;
    };
  }, [returned]);

  const setUp = async () => {
    setBusy(true);
    setProblem(null);
    try {
      const link = await stripeAccountLink();
      // Stripe's pages cannot be framed: from an app's frame they open in a new tab.
      if (isFramed()) {
        window.open(link.url, '_blank', 'noopener');
        setBusy(false);
      } else location.assign(link.url);
    } catch (err) {
      const p = toProblem(err);
      setProblem(p.message ?? 'Stripe could not be reached; try again in a minute.');
      if (!(err instanceof ApiError) || (p.status !== 409 && p.status !== 401))
        post({ type: 'error', code: errorCode(p), message: p.message ?? '' });
      setBusy(false);
    }
  };

  return (
    <div class="stripe-setup">
      <p class={`payout-status ${ready ? 'is-ready' : 'is-pending'}`} role="status" id="stripe-status">
        {ready
          ? returned === 'return'
            ? 'Welcome back: your Stripe payouts are set up.'
            : 'Your Stripe payouts are set up.'
          : returned === 'refresh'
            ? 'The Stripe link expired before you finished: set up payouts again to continue.'
            : checking
              ? 'Checking with Stripe…'
              : returned === 'return'
                ? 'Stripe has not confirmed your account yet. If it asked for more details, set up payouts again to finish.'
                : stripeChosen
                  ? 'Stripe has not enabled payouts to your account yet: set up payouts to finish with Stripe.'
                  : 'Set up payouts with Stripe to be paid to your bank account.'}
      </p>
      {!ready && (
        <BusyButton busy={busy} busyLabel="Opening Stripe…" variant="secondary" onClick={setUp} aria-describedby="stripe-status">
          Set up payouts
        </BusyButton>
      )}
      {problem && (
        <p class="field-error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
