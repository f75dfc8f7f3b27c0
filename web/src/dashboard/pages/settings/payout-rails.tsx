// Settings > Payout rails: one card per rail the service offers (PayPal Payouts, Stripe Connect, Wise), from
// GET /v1/account/payout-rails/ (`rail_options` for the forms, `connected` for each connection's public part
// and webhook path(s)). Connecting sends the rail's fields and an optional `api_url` (PUT
// /v1/account/payout-rails/{kind}/: the rail checks the credentials first, its refusal shows on the field);
// disconnecting (DELETE) asks first. The list itself is for owners and admins only (the server answers 403
// to the other roles), so the others read a sentence saying who manages the rails.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { unwrap, type ApiPaths, type Schemas } from '../../../api/client';
import { Badge } from '../../../ui/badge';
import { BusyButton } from '../../../ui/busy-button';
import { useConfirm } from '../../../ui/confirm';
import { CopyBox } from '../../../ui/copy';
import { Field, Form, SubmitButton, TextAreaField, intOrText, text, textOrUndefined, useFormState } from '../../../ui/form';
import { formatTime } from '../../../ui/format';
import { useToast } from '../../../ui/toast';
import { Details, LoadState, Section, useLoad } from '../../components/page';
import { useCan } from '../../lib/session';

type Rails = Schemas['PayoutRails'];
type RailOption = Rails['rail_options'][number];
type RailField = RailOption['fields'][number];
type Connected = Schemas['PayoutRail'];
type RailBody = ApiPaths['/v1/account/payout-rails/{kind}/']['put']['requestBody']['content']['application/json'];

/** The rail's form as the PUT body: each field (an integer one as a number), and `api_url` when given. */
function railBody(option: RailOption, data: FormData): RailBody {
  const body: Record<string, unknown> = {};
  for (const field of option.fields) {
    const value = field.type === 'integer' ? intOrText(data, field.name) : text(data, field.name);
    if (value !== '' && value !== null) body[field.name] = value;
  }
  const apiUrl = textOrUndefined(data, 'api_url');
  if (apiUrl) body.api_url = apiUrl;
  return body as RailBody;
}

function RailInput({ field }: { field: RailField }) {
  const common = { name: field.name, label: field.label, optional: !field.required, placeholder: field.placeholder, hint: field.hint };
  if (field.type === 'textarea') return <TextAreaField {...common} rows={5} spellcheck={false} />;
  if (field.type === 'integer') return <Field {...common} inputMode="numeric" autoComplete="off" />;
  return <Field {...common} type={field.secret ? 'password' : undefined} autoComplete="off" spellcheck={false} />;
}

/** A connection's public setting; a long one (a PEM public key) folded under its first characters. */
function SettingValue({ value }: { value: string }) {
  if (value.length <= 80) return <code class="mono-small rail-setting">{value}</code>;
  return (
    <details class="rail-setting-long">
      <summary>
        <code class="mono-small">{value.replace(/\s+/g, ' ').slice(0, 40)}…</code>
      </summary>
      <pre class="mono-small rail-setting">{value}</pre>
    </details>
  );
}

/** A webhook path of the API as the full URL to register at the rail (the dashboard and the API share an origin). */
const webhookUrl = (path: string) => new URL(path, location.origin).toString();

function RailCard({ option, connected, onChanged }: { option: RailOption; connected: Connected | null; onChanged: () => void }) {
  const form = useFormState();
  const confirm = useConfirm();
  const notify = useToast();
  const [disconnecting, setDisconnecting] = useState(false);
  const titleId = `rail-${option.kind}-title`;

  const disconnect = async () => {
    const ok = await confirm({
      title: `Disconnect ${option.name}?`,
      body: (
        <p>
          Its credentials are deleted. Batches already sent keep their outcome, but no new payout can be sent with {option.name} until you
          connect it again.
        </p>
      ),
      confirmLabel: 'Disconnect',
      danger: true,
    });
    if (ok === null) return;
    setDisconnecting(true);
    try {
      await unwrap(api.DELETE('/v1/account/payout-rails/{kind}/', { params: { path: { kind: option.kind } } }));
      notify(`${option.name} disconnected.`);
      onChanged();
    } catch (err) {
      notify(err instanceof Error ? err.message : `${option.name} could not be disconnected.`, 'error');
    } finally {
      setDisconnecting(false);
    }
  };

  return (
    <article class="rail-card" aria-labelledby={titleId} data-rail={option.kind}>
      <div class="rail-card-header">
        <h3 id={titleId}>{option.name}</h3>
        {connected ? <Badge status="active" label="Connected" /> : <Badge status="disabled" label="Not connected" />}
      </div>
      {connected && (
        <>
          <Details
            items={[
              ['Connected', formatTime(connected.connected_at)],
              ['API URL', <code>{connected.api_url}</code>],
              ...Object.entries(connected.settings).map(
                ([name, value]) =>
                  [option.fields.find((f) => f.name === name)?.label ?? name, <SettingValue value={value} />] as [
                    string,
                    ComponentChildren,
                  ],
              ),
            ]}
          />
          <CopyBox label={`${option.name} webhook URL`} value={webhookUrl(connected.webhook_path)}>
            <p class="hint">Register this URL at {option.name} so payouts show their outcome as soon as it is known.</p>
          </CopyBox>
          {connected.connect_webhook_path && (
            <CopyBox label={`${option.name} connected-accounts webhook URL`} value={webhookUrl(connected.connect_webhook_path)}>
              <p class="hint">Register it a second time as the endpoint for events on connected accounts (its own signing secret).</p>
            </CopyBox>
          )}
        </>
      )}
      <Form
        form={form}
        labelledBy={`${titleId} rail-${option.kind}-form-title`}
        onSubmit={async (data, el) => {
          await unwrap(
            api.PUT('/v1/account/payout-rails/{kind}/', { params: { path: { kind: option.kind } }, body: railBody(option, data) }),
          );
          el.reset();
          notify(`${option.name} connected. Register its webhook URL at ${option.name}.`);
          onChanged();
        }}
      >
        <h4 class="form-title" id={`rail-${option.kind}-form-title`}>
          {connected ? 'Replace the connection' : 'Connect'}
        </h4>
        <p class="hint">Secrets are write-only: they are never shown again. Replacing a connection replaces it whole.</p>
        <div class="form-grid">
          {option.fields.map((field) => (
            <RailInput key={field.name} field={field} />
          ))}
        </div>
        <details class="advanced">
          <summary>Advanced</summary>
          <div class="form-grid">
            <Field
              name="api_url"
              label={`${option.name} API base URL`}
              type="url"
              optional
              autoComplete="off"
              spellcheck={false}
              placeholder={option.default_api_url}
              hint="Its production API when empty; its sandbox, or a local emulator under npm start."
            />
          </div>
        </details>
        <div class="form-actions">
          <SubmitButton form={form} busyLabel="Checking with the rail…">
            {connected ? `Save ${option.name}` : `Connect ${option.name}`}
          </SubmitButton>
          {connected && (
            <BusyButton variant="ghost" class="btn-danger-text" busy={disconnecting} busyLabel="Disconnecting…" onClick={disconnect}>
              Disconnect {option.name}
            </BusyButton>
          )}
        </div>
      </Form>
    </article>
  );
}

function RailCards() {
  const loaded = useLoad(() => unwrap(api.GET('/v1/account/payout-rails/')), []);
  return (
    <LoadState loaded={loaded} what="the payout rails">
      {(rails) => (
        <div class="rail-cards">
          {rails.rail_options.map((option) => (
            <RailCard
              key={option.kind}
              option={option}
              connected={rails.connected.find((c) => c.kind === option.kind) ?? null}
              onChanged={loaded.reload}
            />
          ))}
        </div>
      )}
    </LoadState>
  );
}

export function PayoutRailsSection() {
  const canEdit = useCan('account');
  return (
    <Section
      id="payout-rails"
      title="Payout rails"
      description="Connect PayPal Payouts, Stripe Connect or Wise to send payouts from the Payouts page instead of uploading a file."
    >
      {canEdit ? <RailCards /> : <p class="muted">Only an owner or admin can see and change the payout rails' connections.</p>}
    </Section>
  );
}
