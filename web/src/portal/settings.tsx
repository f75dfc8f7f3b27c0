// The member's only writes: where commission is sent, and whether Refloop emails them. PATCH /portal/v1/me/;
// the API's field errors (`{"payout_email": ["..."]}`) show under the field (ui/form.tsx). A
// credit-only member is not asked for a payout email (api.ts collectsCommission).
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { CheckField, Field, Form, SubmitButton, checked, textOrNull, useFormState } from '../ui/form';
import { collectsCommission, errorCode, toProblem, updateMe, type Me } from './api';
import { post } from './host';

export function Settings({ me, onMe }: { me: Me; onMe: (me: Me) => void }) {
  const form = useFormState();
  const [saved, setSaved] = useState(false);
  const edited = () => setSaved(false);
  const payoutEmail = collectsCommission(me);

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
                ...(payoutEmail ? { payout_email: textOrNull(data, 'payout_email') } : {}),
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
          {payoutEmail && (
            <fieldset class="fieldset" id="payout-settings">
              <legend>Payout settings</legend>
              <Field
                name="payout_email"
                type="email"
                label="Payout email"
                hint="Where we send your commission (PayPal or Wise)"
                defaultValue={me.member.payout_email ?? ''}
                autoComplete="email"
                inputMode="email"
                spellcheck={false}
                maxLength={254}
                onInput={edited}
              />
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
