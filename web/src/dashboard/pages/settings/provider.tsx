// Settings > Payment provider: the connection's status, the webhook URL to paste at the provider, and
// the form that connects or changes it (owner, admin). Secrets are write-only.
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

type Kind = ProviderInput['kind'];
const PROVIDERS: { value: Kind; label: string }[] = [
  { value: 'stripe', label: 'Stripe' },
  { value: 'paddle-billing', label: 'Paddle Billing' },
  { value: 'paddle-classic', label: 'Paddle Classic' },
];

function providerBody(kind: Kind, data: FormData): ProviderInput {
  const apiUrl = textOrUndefined(data, 'api_url');
  const extra = apiUrl ? { api_url: apiUrl } : {};
  if (kind === 'paddle-classic') {
    return { kind, vendor_id: intOrText(data, 'vendor_id') as number, auth_code: text(data, 'auth_code'), public_key: text(data, 'public_key'), ...extra };
  }
  if (kind === 'paddle-billing') return { kind, api_key: text(data, 'api_key'), webhook_secret: text(data, 'webhook_secret'), ...extra };
  return { kind, secret_key: text(data, 'secret_key'), webhook_secret: text(data, 'webhook_secret'), ...extra };
}

export function ProviderSection({ account }: { account: Loaded<Account> }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const form = useFormState();
  const [kind, setKind] = useState<Kind | null>(null);

  return (
    <Section id="provider" title="Payment provider" description="Refloop reads subscriptions and payments from your provider to convert referrals and create rewards.">
      <LoadState loaded={account} what="the provider connection">
        {(a) => {
          const p = a.provider;
          const chosen: Kind = kind ?? p.kind ?? 'stripe';
          return (
            <>
              <Details
                items={[
                  ['Status', p.connected ? <Badge status="active" label={`Connected: ${PROVIDERS.find((x) => x.value === p.kind)?.label ?? p.kind ?? ''}`} /> : <Badge status="disabled" label="Not connected" />],
                  ...(p.vendor_id !== null ? ([['Vendor id', String(p.vendor_id)]] as [string, string][]) : []),
                  ...(p.api_url ? ([['API URL', <code>{p.api_url}</code>]] as [string, ComponentChildren][]) : []),
                ]}
              />
              {p.webhook_url && (
                <CopyBox label="Webhook URL" value={p.webhook_url}>
                  <p class="hint">
                    Paste this URL in your {PROVIDERS.find((x) => x.value === p.kind)?.label ?? 'provider'}'s webhook settings{p.kind === 'paddle-classic' ? ' (Alerts / Webhooks)' : ''}.
                  </p>
                </CopyBox>
              )}
              {canEdit ? (
                <Form
                  form={form}
                  labelledBy="provider-title"
                  onSubmit={async (data, el) => {
                    const provider = await unwrap(api.POST('/v1/account/provider/', { body: providerBody(chosen, data) }));
                    account.setData({ ...a, provider });
                    el.reset();
                    notify(`Connected to ${PROVIDERS.find((x) => x.value === provider.kind)?.label ?? 'the provider'}. Paste the webhook URL at the provider.`);
                  }}
                >
                  <h3 class="form-title">{p.connected ? 'Change the connection' : 'Connect'}</h3>
                  <p class="hint">Secrets are write-only: they are never shown again, so enter them again to change them.</p>
                  <div class="form-grid">
                    <SelectField name="kind" label="Provider" value={chosen} onChange={(v) => setKind(v as Kind)} options={PROVIDERS} />
                  </div>
                  {chosen === 'stripe' && (
                    <div class="form-grid">
                      <Field name="secret_key" label="Secret key" type="password" placeholder="sk_live_…" autoComplete="off" hint="A restricted key with read access to customers, subscriptions and invoices is enough." />
                      <Field name="webhook_secret" label="Webhook signing secret" type="password" placeholder="whsec_…" autoComplete="off" hint="From the webhook endpoint you create with the URL above." />
                    </div>
                  )}
                  {chosen === 'paddle-billing' && (
                    <div class="form-grid">
                      <Field name="api_key" label="API key" type="password" autoComplete="off" hint="Paddle > Developer tools > Authentication." />
                      <Field name="webhook_secret" label="Webhook secret key" type="password" placeholder="pdl_ntfset_…" autoComplete="off" hint="From the notification destination you create with the URL above." />
                    </div>
                  )}
                  {chosen === 'paddle-classic' && (
                    <div class="form-grid">
                      <Field name="vendor_id" label="Vendor id" inputMode="numeric" autoComplete="off" />
                      <Field name="auth_code" label="Auth code" type="password" autoComplete="off" hint="Developer Tools > Authentication." />
                      <TextAreaField name="public_key" label="Public key" rows={6} spellcheck={false} placeholder="-----BEGIN PUBLIC KEY-----" hint="Developer Tools > Public Key: verifies Paddle's alerts." />
                    </div>
                  )}
                  <details class="advanced">
                    <summary>Advanced</summary>
                    <div class="form-grid">
                      <Field name="api_url" label="Provider API base URL" type="url" optional autoComplete="off" spellcheck={false} hint="Only for a local provider emulator (npm start); leave empty in production." />
                    </div>
                  </details>
                  <div class="form-actions">
                    <SubmitButton form={form} busyLabel="Connecting…">
                      {p.connected ? 'Save connection' : 'Connect provider'}
                    </SubmitButton>
                  </div>
                </Form>
              ) : (
                <p class="muted">Only an owner or admin can change the provider connection.</p>
              )}
            </>
          );
        }}
      </LoadState>
    </Section>
  );
}
