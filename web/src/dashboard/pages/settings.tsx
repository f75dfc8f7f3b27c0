// /app/settings - API keys, the publishable key and script tag, the payment provider connection, the email
// sender, the team and the embed origins. Keys and the team are the owner's; the account settings and the
// provider are the owner's and admins' (the server refuses the others with 403 anyway).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { idempotencyKey, toProblem, unwrap, type ApiPaths, type Problem } from '../../api/client';
import { ROLES, type Account, type ApiKey, type CreatedApiKey, type ProviderInput, type Role, type TeamMember } from '../../api/types';
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { useConfirm } from '../../ui/confirm';
import { CopyBox } from '../../ui/copy';
import { Field, Form, SelectField, SubmitButton, TextAreaField, intOrText, text, textOrUndefined, useFieldErrors, useFormState } from '../../ui/form';
import { PagedTable, useTableReload } from '../components/paged-table';
import { Details, LoadState, PageHeader, Section, useLoad, type Loaded } from '../components/page';
import { useToast } from '../../ui/toast';
import { formatTime, titleCase } from '../../ui/format';
import { useCan, useSession, useSessionState } from '../lib/session';

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Owner: everything, including the team and API keys',
  admin: 'Admin: everything but the team and API keys',
  finance: 'Finance: read, approve and void rewards, payouts',
  viewer: 'Viewer: read only',
};

/** The invitation's role choices, the safe default (Viewer) first. */
const INVITE_ROLES: readonly Role[] = [...ROLES].reverse();

export function Settings() {
  const account = useLoad(() => unwrap(api.GET('/v1/account/')), []);
  return (
    <>
      <PageHeader title="Settings" subtitle="Your account, its keys, the payment provider and your team." />
      <nav class="toc" aria-label="Settings sections">
        <a href="#account-title">Account</a>
        <a href="#api-keys-title">API keys</a>
        <a href="#script-title">Script tag</a>
        <a href="#provider-title">Payment provider</a>
        <a href="#email-sender-title">Email sender</a>
        <a href="#team-title">Team</a>
        <a href="#embed-origins-title">Embed origins</a>
      </nav>
      <AccountSection account={account} />
      <ApiKeysSection />
      <ScriptSection account={account} />
      <ProviderSection account={account} />
      <EmailSenderSection account={account} />
      <TeamSection />
      <EmbedOriginsSection account={account} />
    </>
  );
}

type AccountPatch = ApiPaths['/v1/account/']['patch']['requestBody']['content']['application/json'];

function patchAccount(body: AccountPatch): Promise<Account> {
  return unwrap(api.PATCH('/v1/account/', { params: { header: { 'Idempotency-Key': idempotencyKey() } }, body }));
}

// ---- account ----

function AccountSection({ account }: { account: Loaded<Account> }) {
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

// ---- API keys ----

function ApiKeysSection() {
  const isOwner = useCan('owner');
  const notify = useToast();
  const confirm = useConfirm();
  const form = useFormState();
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const { version, reload, reloadFromStart } = useTableReload('keys_cursor');
  const [revoking, setRevoking] = useState<string | null>(null);

  const revoke = async (key: ApiKey) => {
    const ok = await confirm({
      title: `Revoke the key ${key.name || key.prefix}?`,
      body: <p>Requests with it are refused at once. Anything still using it stops working. This cannot be undone.</p>,
      confirmLabel: 'Revoke key',
      danger: true,
    });
    if (ok === null) return;
    setRevoking(key.id);
    try {
      await unwrap(api.DELETE('/v1/api-keys/{id}/', { params: { path: { id: key.id } } }));
      notify(`Key ${key.name || key.prefix} revoked.`);
      reload();
    } catch (err) {
      notify(err instanceof Error ? err.message : 'The key could not be revoked.', 'error');
    } finally {
      setRevoking(null);
    }
  };

  return (
    <Section id="api-keys" title="API keys" description="Secret keys for your backend: Authorization: Bearer rfl_live_…. Never put them in a web page or an app.">
      {!isOwner ? (
        <p class="muted">Only an owner of the account can see and manage API keys.</p>
      ) : (
        <>
          {created?.key && (
            <CopyBox label={`New key ${created.name || created.prefix}`} value={created.key ?? ''} secret onDismiss={() => setCreated(null)} />
          )}
          <Form
            form={form}
            labelledBy="api-keys-title"
            onSubmit={async (data, el) => {
              const key = await unwrap(api.POST('/v1/api-keys/', { body: { name: text(data, 'name') } }));
              el.reset();
              setCreated(key);
              notify('Key created. Copy it now: it is shown only once.');
              reloadFromStart();
            }}
          >
            <div class="form-row">
              <Field name="name" label="Key name" hint="What uses it, e.g. “Production backend”." maxLength={100} autoComplete="off" />
              <SubmitButton form={form} busyLabel="Creating…" variant="secondary">
                Create key
              </SubmitButton>
            </div>
          </Form>
          <PagedTable<ApiKey>
            label="API keys"
            noun={['key', 'keys']}
            cursorParam="keys_cursor"
            pageSize={10}
            deps={[version]}
            // The account's keys come in one page (no cursor).
            load={() => unwrap(api.GET('/v1/api-keys/'))}
            rowKey={(k) => k.id}
            empty={<p>No API keys. Create one above for your backend.</p>}
            columns={[
              { key: 'name', header: 'Name', cell: (k) => k.name || <span class="muted">Unnamed</span> },
              { key: 'prefix', header: 'Key', cell: (k) => <code>{k.prefix}</code> },
              { key: 'created', header: 'Created', cell: (k) => formatTime(k.created_at) },
              { key: 'state', header: 'State', cell: (k) => (k.revoked_at ? <><Badge status="disabled" label="Revoked" /><span class="cell-sub">{formatTime(k.revoked_at)}</span></> : <Badge status="active" label="Active" />) },
              {
                key: 'actions',
                header: 'Actions',
                hiddenHeader: true,
                cell: (k) =>
                  k.revoked_at ? null : (
                    <BusyButton variant="ghost" class="btn-small btn-danger-text" busy={revoking === k.id} busyLabel="Revoking…" disabled={revoking !== null} aria-label={`Revoke key ${k.name || k.prefix}`} onClick={() => revoke(k)}>
                      Revoke
                    </BusyButton>
                  ),
              },
            ]}
          />
        </>
      )}
    </Section>
  );
}

// ---- publishable key, script tag, js referrals ----

const JS_MODES: { value: Account['js_referrals']; label: string }[] = [
  { value: 'open', label: 'Open: the script creates referrals at signup' },
  { value: 'confirm', label: 'Confirm: only your backend creates referrals' },
  { value: 'off', label: 'Off: browser referrals are refused' },
];

function ScriptSection({ account }: { account: Loaded<Account> }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const form = useFormState();
  const linkForm = useFormState();
  return (
    <Section id="script" title="Publishable key and script tag" description="Add the tag to every page of your site: it records clicks on members' links (?via=CODE) and remembers the referrer until signup.">
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
              <Details items={[['Referrals from the browser', JS_MODES.find((m) => m.value === a.js_referrals)?.label ?? a.js_referrals]]} />
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

// ---- provider ----

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

function ProviderSection({ account }: { account: Loaded<Account> }) {
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

// ---- email sender ----

function EmailSenderSection({ account }: { account: Loaded<Account> }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const form = useFormState();
  const [resetting, setResetting] = useState(false);
  const [resetProblem, setResetProblem] = useState<Problem | null>(null);
  return (
    <Section id="email-sender" title="Email sender" description="Who member emails (conversions, rewards, portal links) come from. The address must be verified for sending.">
      <LoadState loaded={account} what="the email sender">
        {(a) => (
          <>
            <Details items={[['Current sender', a.email_sender ? `${a.email_sender.name ? `${a.email_sender.name} ` : ''}<${a.email_sender.address}>` : 'The service default']]} />
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
                  <Field name="name" label="From name" optional defaultValue={a.email_sender?.name ?? ''} maxLength={100} autoComplete="off" />
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

// ---- team ----

function RoleSelect({ member, onChanged }: { member: TeamMember; onChanged: () => void }) {
  const session = useSession();
  const notify = useToast();
  const [busy, setBusy] = useState(false);
  const self = member.email.toLowerCase() === session.email.toLowerCase();
  return (
    <div class="inline-field">
      <select
        aria-label={`Role of ${member.email}`}
        class="input input-small"
        value={member.role}
        disabled={busy || self}
        aria-busy={busy ? 'true' : undefined}
        onChange={async (e) => {
          const role = e.currentTarget.value as Role;
          setBusy(true);
          try {
            await unwrap(api.PATCH('/v1/team/{id}/', { params: { path: { id: member.id } }, body: { role } }));
            notify(`${member.email} is now ${role}.`);
          } catch (err) {
            notify(err instanceof Error ? err.message : 'The role could not be changed.', 'error');
          } finally {
            setBusy(false);
            onChanged();
          }
        }}
      >
        {ROLES.map((r) => (
          <option key={r} value={r}>
            {titleCase(r)}
          </option>
        ))}
      </select>
      {busy && <span class="muted">Saving…</span>}
    </div>
  );
}

function TeamSection() {
  const isOwner = useCan('owner');
  const session = useSession();
  const notify = useToast();
  const confirm = useConfirm();
  const form = useFormState();
  const { version, reload, reloadFromStart } = useTableReload('team_cursor');
  const [removing, setRemoving] = useState<string | null>(null);
  // Bumped after each invitation: the fields are mounted afresh, so the role is back to Viewer. A form's
  // reset() alone would pick the select's first option (Preact sets `selected` as a property, which
  // reset() ignores): a second invitation would then make an owner nobody chose.
  const [inviteRound, setInviteRound] = useState(0);

  const remove = async (member: TeamMember) => {
    const ok = await confirm({
      title: `Remove ${member.email} from the team?`,
      body: <p>Their sessions end and they can no longer log in to this account.</p>,
      confirmLabel: 'Remove',
      danger: true,
    });
    if (ok === null) return;
    setRemoving(member.id);
    try {
      await unwrap(api.DELETE('/v1/team/{id}/', { params: { path: { id: member.id } } }));
      notify(`${member.email} removed.`);
      reload();
    } catch (err) {
      notify(err instanceof Error ? err.message : 'The team member could not be removed.', 'error');
    } finally {
      setRemoving(null);
    }
  };

  return (
    <Section id="team" title="Team" description="People who can log in to this dashboard, and what they may do.">
      {!isOwner ? (
        <p class="muted">Only an owner of the account can manage the team. You are signed in as {session.role}.</p>
      ) : (
        <>
          <Form
            form={form}
            labelledBy="team-title"
            onSubmit={async (data, el) => {
              const member = await unwrap(api.POST('/v1/team/', { body: { email: text(data, 'email'), role: text(data, 'role') as Role } }));
              el.reset();
              setInviteRound((n) => n + 1);
              notify(`Invitation sent to ${member.email} as ${member.role}.`);
              reloadFromStart();
            }}
          >
            <h3 class="form-title">Invite someone</h3>
            <div class="form-row" key={inviteRound}>
              <Field name="email" label="Email" type="email" required autoComplete="off" spellcheck={false} />
              {/* Least privilege first: whatever resets the field lands on Viewer, never on Owner. */}
              <SelectField name="role" label="Role" defaultValue="viewer" options={INVITE_ROLES.map((r) => ({ value: r, label: ROLE_TEXT[r] }))} />
              <SubmitButton form={form} busyLabel="Inviting…" variant="secondary">
                Send invitation
              </SubmitButton>
            </div>
            <p class="hint">They get an email with a login link.</p>
          </Form>
          <PagedTable<TeamMember>
            label="Team members"
            noun={['person', 'people']}
            cursorParam="team_cursor"
            pageSize={20}
            deps={[version]}
            // The whole team comes in one page (no cursor).
            load={() => unwrap(api.GET('/v1/team/'))}
            rowKey={(m) => m.id}
            empty={<p>Nobody else yet. Invite your team with the form above.</p>}
            columns={[
              { key: 'email', header: 'Email', cell: (m) => <>{m.email}{m.email.toLowerCase() === session.email.toLowerCase() && <span class="cell-sub">You</span>}</> },
              { key: 'role', header: 'Role', cell: (m) => <RoleSelect member={m} onChanged={reload} /> },
              { key: 'last', header: 'Last login', cell: (m) => (m.last_login_at ? formatTime(m.last_login_at) : <span class="muted">Never</span>) },
              { key: 'created', header: 'Invited', cell: (m) => formatTime(m.created_at) },
              {
                key: 'actions',
                header: 'Actions',
                hiddenHeader: true,
                cell: (m) =>
                  m.email.toLowerCase() === session.email.toLowerCase() ? null : (
                    <BusyButton variant="ghost" class="btn-small btn-danger-text" busy={removing === m.id} busyLabel="Removing…" disabled={removing !== null} aria-label={`Remove ${m.email}`} onClick={() => remove(m)}>
                      Remove
                    </BusyButton>
                  ),
              },
            ]}
          />
        </>
      )}
    </Section>
  );
}

// ---- embed origins ----

function EmbedOriginsSection({ account }: { account: Loaded<Account> }) {
  return (
    <Section id="embed-origins" title="Embed origins" description="Sites allowed to show the member portal in an iframe (Refloop.mount). Use https://host[:port], no path.">
      <LoadState loaded={account} what="the embed origins">
        {(a) => <OriginsEditor key={a.embed_origins.join(' ')} account={a} onSaved={account.setData} />}
      </LoadState>
    </Section>
  );
}

function OriginsEditor({ account, onSaved }: { account: Account; onSaved: (a: Account) => void }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const form = useFormState();
  const [origins, setOrigins] = useState<string[]>(account.embed_origins);
  const [draft, setDraft] = useState('');
  const [draftError, setDraftError] = useState<string | null>(null);
  const dirty = origins.join(' ') !== account.embed_origins.join(' ');

  const add = () => {
    const value = draft.trim().replace(/\/+$/, '');
    if (!value) return;
    let origin: string | null = null;
    try {
      const url = new URL(value);
      origin = url.origin === value ? url.origin : null;
    } catch {
      origin = null;
    }
    if (!origin) {
      setDraftError('Enter an origin like https://app.example.com (scheme and host, no path).');
      return;
    }
    if (!origins.includes(origin)) setOrigins([...origins, origin]);
    setDraft('');
    setDraftError(null);
  };

  if (!canEdit) {
    return account.embed_origins.length === 0 ? (
      <p class="muted">No embed origins: the portal cannot be framed by any site.</p>
    ) : (
      <ul class="origin-list">
        {account.embed_origins.map((o) => (
          <li key={o}>
            <code>{o}</code>
          </li>
        ))}
      </ul>
    );
  }

  return (
    <Form
      form={form}
      labelledBy="embed-origins-title"
      onSubmit={async () => {
        const saved = await patchAccount({ embed_origins: origins });
        onSaved(saved);
        notify('Embed origins saved.');
      }}
    >
      {origins.length === 0 ? (
        <p class="muted">No embed origins yet: the portal cannot be framed by any site.</p>
      ) : (
        <ul class="origin-list" aria-label="Embed origins">
          {origins.map((o) => (
            <li key={o}>
              <code>{o}</code>
              <button type="button" class="btn btn-ghost btn-small btn-danger-text" aria-label={`Remove ${o}`} onClick={() => setOrigins(origins.filter((x) => x !== o))}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <OriginInput draft={draft} draftError={draftError} onDraft={(v) => { setDraft(v); setDraftError(null); }} onAdd={add} />
      <div class="form-actions">
        <SubmitButton form={form} busyLabel="Saving…">
          Save origins
        </SubmitButton>
        {dirty && <span class="muted">Unsaved changes</span>}
      </div>
    </Form>
  );
}

/** The new-origin input; the API's `embed_origins` errors are shown under it. */
function OriginInput({ draft, draftError, onDraft, onAdd }: { draft: string; draftError: string | null; onDraft: (v: string) => void; onAdd: () => void }) {
  const errors = useFieldErrors('embed_origins');
  const message = draftError ?? (errors.length > 0 ? errors.join(' ') : null);
  return (
    <div class="form-row">
      <div class="field">
        <label class="label" for="embed-origin-new">
          Add an origin
        </label>
        <input
          id="embed-origin-new"
          class="input"
          type="url"
          placeholder="https://app.example.com"
          value={draft}
          autoComplete="off"
          spellcheck={false}
          aria-invalid={message ? 'true' : undefined}
          aria-describedby={message ? 'embed-origin-error' : undefined}
          onInput={(e) => onDraft(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              onAdd();
            }
          }}
        />
        {message && (
          <p class="field-error" id="embed-origin-error">
            {message}
          </p>
        )}
      </div>
      <button type="button" class="btn btn-secondary" onClick={onAdd}>
        Add
      </button>
    </div>
  );
}
