// Settings > Email sender: who member emails come from (owner, admin).
import { useState } from 'preact/hooks';
import { toProblem, type Problem } from '../../../api/client';
import type { Account } from '../../../api/types';
import { BusyButton } from '../../../ui/busy-button';
import { Field, Form, SubmitButton, text, useFieldErrors, useFormState } from '../../../ui/form';
import { Details, LoadState, Section, type Loaded } from '../../components/page';
import { useToast } from '../../../ui/toast';
import { useCan } from '../../lib/session';
import { patchAccount } from './account-api';

export function EmailSenderSection({ account }: { account: Loaded<Account> }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const form = useFormState();
  const [resetting, setResetting] = useState(false);
  const [resetProblem, setResetProblem] = useState<Problem | null>(null);
  return (
    <Section
      id="email-sender"
      title="Email sender"
      description="Who member emails (conversions, rewards, portal links) come from. The address must be verified for sending."
    >
      <LoadState loaded={account} what="the email sender">
        {(a) => (
          <>
            <Details
              items={[
                [
                  'Current sender',
                  a.email_sender
                    ? `${a.email_sender.name ? `${a.email_sender.name} ` : ''}<${a.email_sender.address}>`
                    : 'The service default',
                ],
              ]}
            />
            {canEdit && (
              <Form
                form={form}
                labelledBy="email-sender-title"
                onSubmit={async (data) => {
                  const saved = await patchAccount({ email_sender: { address: text(data, 'address'), name: text(data, 'name') } });
                  account.setData(saved);
                  notify('Email sender saved.');
                }}
              >
                <div class="form-grid">
                  <Field name="address" label="From address" type="email" defaultValue={a.email_sender?.address ?? ''} autoComplete="off" />
                  <Field
                    name="name"
                    label="From name"
                    optional
                    defaultValue={a.email_sender?.name ?? ''}
                    maxLength={100}
                    autoComplete="off"
                  />
                </div>
                <SenderErrors />
                <div class="form-actions">
                  <SubmitButton form={form} busyLabel="Saving…">
                    Save sender
                  </SubmitButton>
                  {a.email_sender && (
                    <BusyButton
                      variant="ghost"
                      busy={resetting}
                      busyLabel="Resetting…"
                      onClick={async () => {
                        setResetting(true);
                        setResetProblem(null);
                        try {
                          account.setData(await patchAccount({ email_sender: null }));
                          notify('Member emails now come from the service default.');
                        } catch (err) {
                          setResetProblem(toProblem(err));
                        } finally {
                          setResetting(false);
                        }
                      }}
                    >
                      Use the default sender
                    </BusyButton>
                  )}
                </div>
                {resetProblem && (
                  <p class="field-error" role="alert">
                    {resetProblem.message}
                  </p>
                )}
              </Form>
            )}
          </>
        )}
      </LoadState>
    </Section>
  );
}

function SenderErrors() {
  const errors = useFieldErrors('email_sender');
  return errors.length > 0 ? <p class="field-error">{errors.join(' ')}</p> : null;
}
