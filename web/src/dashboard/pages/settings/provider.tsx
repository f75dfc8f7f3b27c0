// Settings > Payment provider: the connection's status, the webhook URL to paste at the provider, and
// the form that connects or changes it (owner, admin). Secrets are write-only. The providers and their
// fields come from GET /v1/account/ (`provider_options`): a provider added to the service's registry shows
// here without a change to this file, which names none.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { unwrap } from '../../../api/client';
import type { Account, ProviderInput } from '../../../api/types';
import { Badge } from '../../../ui/badge';
import { CopyBox } from '../../../ui/copy';
import { Field, Form, SelectField, SubmitButton, TextAreaField, intOrText, text, textOrUndefined, useFormState } from '../../../ui/form';
import { Details, LoadState, Section, type Loaded } from '../../components/page';
import { useToast } from '../../../ui/toast';
import { useCan } from '../../lib/session';

type ProviderOption = Account['provider_options'][number];
type ConnectionField = ProviderOption['fields'][number];

/** The connection body of the chosen provider's form: its fields (an integer field as a number) and `api_url`. */
function providerBody(option: ProviderOption, data: FormData): ProviderInput {
  const body: Record<string, unknown> = { kind: option.kind };
  for (const field of option.fields) body[field.name] = field.type === 'integer' ? intOrText(data, field.name) : text(data, field.name);
  const apiUrl = textOrUndefined(data, 'api_url');
  if (apiUrl) body.api_url = apiUrl;
  return body as ProviderInput;
}

/** One field of a provider's connection, as GET /v1/account/ describes it (`provider_options`). */
function ConnectionInput({ field }: { field: ConnectionField }) {
  const common = { name: field.name, label: field.label, optional: !field.required, placeholder: field.placeholder, hint: field.hint };
  if (field.type === 'textarea') return <TextAreaField {...common} rows={6} spellcheck={false} />;
  if (field.type === 'integer') return <Field {...common} inputMode="numeric" autoComplete="off" />;
  return <Field {...common} type={field.type === 'password' ? 'password' : undefined} autoComplete="off" />;
}

export function ProviderSection({ account }: { account: Loaded<Account> }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const form = useFormState();
  const [kind, setKind] = useState<string | null>(null);

  return (
    <Section
      id="provider"
      title="Payment provider"
      description="Refloop reads subscriptions and payments from your provider to convert referrals and create rewards."
    >
      <LoadState loaded={account} what="the provider connection">
        {(a) => {
          const p = a.provider;
          const options = a.provider_options;
          const nameOf = (k: string | null) => options.find((o) => o.kind === k)?.name;
          const connected = options.find((o) => o.kind === p.kind);
          // The kind picked in the form, else the connected one, else the first the API offers.
          const chosen = options.find((o) => o.kind === (kind ?? p.kind)) ?? options[0];
          return (
            <>
              <Details
                items={[
                  [
                    'Status',
                    p.connected ? (
                      <Badge status="active" label={`Connected: ${nameOf(p.kind) ?? p.kind ?? ''}`} />
                    ) : (
                      <Badge status="disabled" label="Not connected" />
                    ),
                  ],
                  ...(p.vendor_id !== null ? ([['Vendor id', String(p.vendor_id)]] as [string, string][]) : []),
                  ...(p.api_url ? ([['API URL', <code>{p.api_url}</code>]] as [string, ComponentChildren][]) : []),
                ]}
              />
              {p.webhook_url && (
                <CopyBox label="Webhook URL" value={p.webhook_url}>
                  <p class="hint">
                    Paste this URL in your {connected?.name ?? 'provider'}'s webhook settings
                    {connected && (
                      <>
                        {' '}
                        (
                        <a href={connected.docs_url} target="_blank" rel="noreferrer">
                          {connected.name} documentation
                        </a>
                        )
                      </>
                    )}
                    .
                  </p>
                </CopyBox>
              )}
              {!canEdit ? (
                <p class="muted">Only an owner or admin can change the provider connection.</p>
              ) : chosen ? (
                <Form
                  form={form}
                  labelledBy="provider-title"
                  onSubmit={async (data, el) => {
                    const provider = await unwrap(api.POST('/v1/account/provider/', { body: providerBody(chosen, data) }));
                    account.setData({ ...a, provider });
                    el.reset();
                    notify(`Connected to ${nameOf(provider.kind) ?? 'the provider'}. Paste the webhook URL at the provider.`);
                  }}
                >
                  <h3 class="form-title">{p.connected ? 'Change the connection' : 'Connect'}</h3>
                  <p class="hint">Secrets are write-only: they are never shown again, so enter them again to change them.</p>
                  <div class="form-grid">
                    <SelectField
                      name="kind"
                      label="Provider"
                      value={chosen.kind}
                      onChange={setKind}
                      options={options.map((o) => ({ value: o.kind, label: o.name }))}
                    />
                  </div>
                  {/* Keyed by kind: another provider's fields start empty, as their own inputs. */}
                  <div class="form-grid" key={chosen.kind}>
                    {chosen.fields.map((field) => (
                      <ConnectionInput key={field.name} field={field} />
                    ))}
                  </div>
                  <p class="hint">
                    Where to find these:{' '}
                    <a href={chosen.docs_url} target="_blank" rel="noreferrer">
                      {chosen.name} documentation
                    </a>
                    .
                  </p>
                  <details class="advanced">
                    <summary>Advanced</summary>
                    <div class="form-grid">
                      <Field
                        name="api_url"
                        label="Provider API base URL"
                        type="url"
                        optional
                        autoComplete="off"
                        spellcheck={false}
                        hint="Only for a local provider emulator (npm start); leave empty in production."
                      />
                    </div>
                  </details>
                  <div class="form-actions">
                    <SubmitButton form={form} busyLabel="Connecting…">
                      {p.connected ? 'Save connection' : 'Connect provider'}
                    </SubmitButton>
                  </div>
                </Form>
              ) : null}
            </>
          );
        }}
      </LoadState>
    </Section>
  );
}
