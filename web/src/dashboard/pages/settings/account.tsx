// Settings > Account: the account's id and plan, and its name (owner, admin).
import type { Account } from '../../../api/types';
import { Field, Form, SubmitButton, text, useFormState } from '../../../ui/form';
import { Details, LoadState, Section, type Loaded } from '../../components/page';
import { useToast } from '../../../ui/toast';
import { titleCase } from '../../../ui/format';
import { useCan, useSessionState } from '../../lib/session';
import { patchAccount } from './account-api';

export function AccountSection({ account }: { account: Loaded<Account> }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const { session, setSession } = useSessionState();
  const form = useFormState();
  return (
    <Section id="account" title="Account">
      <LoadState loaded={account} what="the account">
        {(a) => (
          <>
            <Details
              items={[
                ['Account id', <code>{a.id}</code>],
                ['Plan', titleCase(a.plan)],
              ]}
            />
            {canEdit && (
              <Form
                form={form}
                labelledBy="account-title"
                onSubmit={async (data) => {
                  const saved = await patchAccount({ name: text(data, 'name') });
                  account.setData(saved);
                  setSession({ ...session, account_name: saved.name });
                  notify('Account name saved.');
                }}
              >
                <div class="form-row">
                  <Field name="name" label="Account name" defaultValue={a.name} required maxLength={100} autoComplete="organization" />
                  <SubmitButton form={form} busyLabel="Saving…" variant="secondary">
                    Save name
                  </SubmitButton>
                </div>
              </Form>
            )}
          </>
        )}
      </LoadState>
    </Section>
  );
}
