// Settings > Publishable key and script tag: the tag to copy, browser referrals, and where members' links point.
import type { Account } from '../../../api/types';
import { CopyBox } from '../../../ui/copy';
import { Field, Form, SelectField, SubmitButton, text, textOrUndefined, useFormState } from '../../../ui/form';
import { Details, LoadState, Section, type Loaded } from '../../components/page';
import { useToast } from '../../../ui/toast';
import { useCan } from '../../lib/session';
import { patchAccount } from './account-api';

const JS_MODES: { value: Account['js_referrals']; label: string }[] = [
  { value: 'open', label: 'Open: the script creates referrals at signup' },
  { value: 'confirm', label: 'Confirm: only your backend creates referrals' },
  { value: 'off', label: 'Off: browser referrals are refused' },
];

export function ScriptSection({ account }: { account: Loaded<Account> }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const form = useFormState();
  const linkForm = useFormState();
  return (
    <Section
      id="script"
      title="Publishable key and script tag"
      description="Add the tag to every page of your site: it records clicks on members' links (?via=CODE) and remembers the referrer until signup."
    >
      <LoadState loaded={account} what="the script tag">
        {(a) => (
          <>
            {a.script_tag ? <CopyBox label="Script tag" value={a.script_tag} multiline /> : <p class="muted">No script tag yet.</p>}
            {a.publishable_key && <CopyBox label="Publishable key" value={a.publishable_key} />}
            <p class="hint">The publishable key is safe in web pages: it only reaches the public /js/v1/ endpoints.</p>
            {canEdit ? (
              <Form
                form={form}
                labelledBy="script-title"
                onSubmit={async (data) => {
                  const saved = await patchAccount({ js_referrals: text(data, 'js_referrals') as Account['js_referrals'] });
                  account.setData(saved);
                  notify('Browser referrals setting saved.');
                }}
              >
                <div class="form-row">
                  <SelectField name="js_referrals" label="Referrals from the browser" options={JS_MODES} defaultValue={a.js_referrals} />
                  <SubmitButton form={form} busyLabel="Saving…" variant="secondary">
                    Save
                  </SubmitButton>
                </div>
              </Form>
            ) : (
              <Details
                items={[['Referrals from the browser', JS_MODES.find((m) => m.value === a.js_referrals)?.label ?? a.js_referrals]]}
              />
            )}
            {canEdit ? (
              <Form
                form={linkForm}
                labelledBy="script-title"
                onSubmit={async (data) => {
                  const saved = await patchAccount({ referral_url: textOrUndefined(data, 'referral_url') ?? null });
                  account.setData(saved);
                  notify(saved.referral_url ? 'Referral link saved.' : 'Referral link removed.');
                }}
              >
                <div class="form-row">
                  <Field
                    name="referral_url"
                    label="Members' links point to"
                    type="url"
                    optional
                    placeholder="https://yourapp.com/"
                    defaultValue={a.referral_url ?? ''}
                    autoComplete="off"
                    spellcheck={false}
                    hint="A member's link is this page with ?via=<code>; the member portal shows it with a copy button."
                  />
                  <SubmitButton form={linkForm} busyLabel="Saving…" variant="secondary">
                    Save link
                  </SubmitButton>
                </div>
              </Form>
            ) : (
              <Details items={[["Members' links point to", a.referral_url ?? 'Not set']]} />
            )}
          </>
        )}
      </LoadState>
    </Section>
  );
}
