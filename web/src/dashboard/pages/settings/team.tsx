// Settings > Team: the members of the dashboard, their roles and invitations (the owner's).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { unwrap } from '../../../api/client';
import { ROLES, type Role, type TeamMember } from '../../../api/types';
import { BusyButton } from '../../../ui/busy-button';
import { useConfirm } from '../../../ui/confirm';
import { Field, Form, SelectField, SubmitButton, text, useFormState } from '../../../ui/form';
import { PagedTable, useTableReload } from '../../components/paged-table';
import { Section } from '../../components/page';
import { useToast } from '../../../ui/toast';
import { formatTime, titleCase } from '../../../ui/format';
import { useCan, useSession } from '../../lib/session';

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Owner: everything, including the team and API keys',
  admin: 'Admin: everything but the team and API keys',
  finance: 'Finance: read, approve and void rewards, payouts',
  viewer: 'Viewer: read only',
};

/** The invitation's role choices, the safe default (Viewer) first. */
const INVITE_ROLES: readonly Role[] = [...ROLES].reverse();

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

export function TeamSection() {
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
              const member = await unwrap(
                api.POST('/v1/team/', { body: { email: text(data, 'email'), role: text(data, 'role') as Role } }),
              );
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
              <SelectField
                name="role"
                label="Role"
                defaultValue="viewer"
                options={INVITE_ROLES.map((r) => ({ value: r, label: ROLE_TEXT[r] }))}
              />
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
              {
                key: 'email',
                header: 'Email',
                cell: (m) => (
                  <>
                    {m.email}
                    {m.email.toLowerCase() === session.email.toLowerCase() && <span class="cell-sub">You</span>}
                  </>
                ),
              },
              { key: 'role', header: 'Role', cell: (m) => <RoleSelect member={m} onChanged={reload} /> },
              {
                key: 'last',
                header: 'Last login',
                cell: (m) => (m.last_login_at ? formatTime(m.last_login_at) : <span class="muted">Never</span>),
              },
              { key: 'created', header: 'Invited', cell: (m) => formatTime(m.created_at) },
              {
                key: 'actions',
                header: 'Actions',
                hiddenHeader: true,
                cell: (m) =>
                  m.email.toLowerCase() === session.email.toLowerCase() ? null : (
                    <BusyButton
                      variant="ghost"
                      class="btn-small btn-danger-text"
                      busy={removing === m.id}
                      busyLabel="Removing…"
                      disabled={removing !== null}
                      aria-label={`Remove ${m.email}`}
                      onClick={() => remove(m)}
                    >
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
