// /app/members (list, filter by campaign, create) and /app/members/:id (stats, referral code, edit,
// referrals, rewards, payouts, delete).
import { FraudFlagsSection } from '../components/fraud-flags';
import { useState } from 'preact/hooks';
import { lazy, useLocation, useRoute } from 'preact-iso';
import { api } from '../api';
import { idempotencyKey, unwrap } from '../../api/client';
import { BusyButton } from '../../ui/busy-button';
import { CopyBox } from '../../ui/copy';
import {
  CheckField,
  Field,
  Form,
  SelectField,
  SubmitButton,
  checked,
  text,
  textOrNull,
  textOrUndefined,
  useFormState,
} from '../../ui/form';
import { PagedTable, SearchBox, exportHref, useTableReload } from '../components/paged-table';
import { Details, LoadState, PageHeader, Section, useLoad } from '../components/page';
import { useToast } from '../../ui/toast';
import { useDeleteFlow } from '../lib/actions';
import { formatCount, formatMoney, formatTime } from '../../ui/format';
import { useCan } from '../lib/session';
import { urlWith } from '../lib/url';
import type { Campaign, Member } from '../../api/types';
import { useCampaigns } from '../lib/campaigns';
import { campaignHref } from '../lib/links';
import { payoutColumns } from '../tables/payouts';
import { referralColumns } from '../tables/referrals';
import { rewardColumns } from '../tables/rewards';
import { RAIL_KINDS, RAIL_NAMES, isRail, type RailKind } from '../lib/rails';
import { Badge } from '../../ui/badge';
import type { ComponentChildren } from 'preact';

// The links card is only on a member's page: loaded with it.
const MemberLinks = lazy(() => import('./member-links').then((m) => m.MemberLinks));

function campaignOptions(campaigns: Campaign[], none: string) {
  return [{ value: '', label: none }, ...campaigns.map((c) => ({ value: c.id, label: c.name }))];
}

/** A subscription id as the API takes it: digits are Paddle Classic's integers, else the string id. */
function subscriptionRef(value: string): { id: number | string } | null {
  if (value === '') return null;
  return { id: /^\d{1,15}$/.test(value) ? Number(value) : value };
}

function earned(m: Member): string {
  return formatMoney(Number(m.stats.commission_earned) + Number(m.stats.credit_earned), m.stats.currency);
}

function CreateMember({ campaigns, onCreated }: { campaigns: Campaign[]; onCreated: (m: Member) => void }) {
  const form = useFormState();
  return (
    <Section id="new-member" title="Add a member" description="Members are the people who refer others: usually the users of your app.">
      <Form
        form={form}
        labelledBy="new-member-title"
        onSubmit={async (data, el) => {
          const campaign = text(data, 'campaign');
          const member = await unwrap(
            api.POST('/v1/members/', {
              params: { header: { 'Idempotency-Key': idempotencyKey() } },
              body: {
                identifier: text(data, 'identifier'),
                email: text(data, 'email'),
                first_name: textOrNull(data, 'first_name'),
                last_name: textOrNull(data, 'last_name'),
                code: textOrUndefined(data, 'code'),
                campaign: campaign ? { id: campaign } : null,
                payout_email: textOrNull(data, 'payout_email'),
                email_opt_out: checked(data, 'email_opt_out'),
              },
            }),
          );
          el.reset();
          onCreated(member);
        }}
      >
        <div class="form-grid">
          <Field name="identifier" label="Identifier" hint="Your app's id for this user." required autoComplete="off" spellcheck={false} />
          <Field name="email" label="Email" type="email" required autoComplete="off" spellcheck={false} />
          <Field name="first_name" label="First name" optional autoComplete="off" />
          <Field name="last_name" label="Last name" optional autoComplete="off" />
          <Field
            name="code"
            label="Referral code"
            optional
            hint="Letters, digits, - and _. Generated when empty."
            autoComplete="off"
            spellcheck={false}
          />
          {/* "No campaign" until chosen: a member never lands in a campaign the operator did not pick. */}
          <SelectField name="campaign" label="Campaign" options={campaignOptions(campaigns, 'No campaign')} defaultValue="" />
          <Field
            name="payout_email"
            label="Payout email"
            type="email"
            optional
            hint="PayPal or Wise address; a payout is due only with one."
            autoComplete="off"
          />
          <CheckField name="email_opt_out" label="Do not email this member" />
        </div>
        <div class="form-actions">
          <SubmitButton form={form} busyLabel="Creating…">
            Create member
          </SubmitButton>
        </div>
      </Form>
    </Section>
  );
}

export function Members() {
  const { path, query, route } = useLocation();
  const canManage = useCan('manage');
  const notify = useToast();
  const { campaigns } = useCampaigns();
  const { version, reloadFromStart } = useTableReload();
  const campaign = query.campaign || undefined;
  const search = query.search || undefined;
  const names = new Map(campaigns.map((c) => [c.id, c.name]));

  return (
    <>
      <PageHeader title="Members" subtitle="The people who refer others, with their codes and what they have earned." />
      {canManage && (
        <CreateMember
          campaigns={campaigns}
          onCreated={(m) => {
            notify(`Member ${m.identifier} created with code ${m.code}.`);
            reloadFromStart();
          }}
        />
      )}
      <Section
        id="member-list"
        title="All members"
        actions={
          <>
            <SearchBox
              id="member-search"
              label="Find"
              placeholder="Email, identifier or code"
              hint="An exact email, identifier or referral code"
            />
            <div class="inline-field">
              <label class="label-inline" for="member-campaign-filter">
                Show
              </label>
              <select
                id="member-campaign-filter"
                class="input input-small"
                value={campaign ?? ''}
                onChange={(e) => route(urlWith(path, query, { campaign: e.currentTarget.value, cursor: null }))}
              >
                <option value="">All campaigns</option>
                {campaigns.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            </div>
          </>
        }
      >
        <PagedTable<Member>
          label="Members"
          noun={['member', 'members']}
          deps={[campaign, search, version]}
          load={(q) => unwrap(api.GET('/v1/members/', { params: { query: { ...q, campaign, search } } }))}
          rowKey={(m) => m.id}
          exportHref={search ? undefined : exportHref('members.csv', { campaign })}
          empty={
            search ? (
              <p>No member has the email, identifier or code “{search}”. Search matches whole values, not parts.</p>
            ) : campaign ? (
              <p>No members in this campaign yet.</p>
            ) : (
              <p>No members yet. Create one with the form above or POST /v1/members/ from your app.</p>
            )
          }
          columns={[
            {
              key: 'member',
              header: 'Member',
              cell: (m) => (
                <>
                  <a href={`/app/members/${encodeURIComponent(m.id)}`}>{m.identifier}</a>
                  <span class="cell-sub">
                    {m.email}
                    {m.source === 'signup' && <span class="tag tag-after">signup</span>}
                  </span>
                </>
              ),
            },
            { key: 'code', header: 'Code', cell: (m) => <code>{m.code}</code> },
            {
              key: 'campaign',
              header: 'Campaign',
              cell: (m) => (m.campaign ? (names.get(m.campaign.id) ?? m.campaign.name) : <span class="muted">None</span>),
            },
            { key: 'clicks', header: 'Clicks', numeric: true, cell: (m) => formatCount(m.stats.link_clicks) },
            { key: 'referrals', header: 'Referrals', numeric: true, cell: (m) => formatCount(m.stats.referrals) },
            { key: 'conversions', header: 'Conversions', numeric: true, cell: (m) => formatCount(m.stats.conversions) },
            { key: 'earned', header: 'Earned', numeric: true, cell: earned },
            { key: 'created', header: 'Created', cell: (m) => formatTime(m.created_at) },
          ]}
        />
      </Section>
    </>
  );
}

/** The member's payout method (the rail a batch pays them with) and whether a batch would pay them now, or why not. */
function payoutMethodDetails(m: Member): [string, ComponentChildren][] {
  const { payout_method: method, payout_method_ready: ready, payout_method_reason: reason } = m;
  if (!isRail(method)) return [['Payout method', 'None: paid in file batches, at the payout email']];
  return [
    ['Payout method', RAIL_NAMES[method]],
    [
      'Ready to pay',
      <span data-method-ready={ready ? 'true' : 'false'}>
        {ready ? <Badge status="active" label="Ready" /> : <Badge status="due" label="Not ready" />}
        {ready ? ` A ${RAIL_NAMES[method]} batch pays this member.` : reason ? ` ${reason}` : ''}
      </span>,
    ],
  ];
}

/** The payout methods offered: none (file batches), each connected rail, and the member's own even if disconnected. */
function methodOptions(connected: RailKind[] | null, current: RailKind | null): { value: string; label: string }[] {
  const kinds = RAIL_KINDS.filter((k) => connected?.includes(k) || k === current);
  return [
    { value: '', label: 'None: file batches, to the payout email' },
    ...kinds.map((k) => ({ value: k, label: connected?.includes(k) ? RAIL_NAMES[k] : `${RAIL_NAMES[k]} (not connected)` })),
  ];
}

function EditMember({ member, campaigns, onSaved }: { member: Member; campaigns: Campaign[]; onSaved: (m: Member) => void }) {
  const form = useFormState();
  const rails = useLoad(async () => (await unwrap(api.GET('/v1/account/payout-rails/'))).connected.map((c) => c.kind), []);
  return (
    <Section id="edit-member" title="Edit member">
      <Form
        form={form}
        labelledBy="edit-member-title"
        onSubmit={async (data) => {
          const campaign = text(data, 'campaign');
          const method = (text(data, 'payout_method') || null) as RailKind | null;
          const saved = await unwrap(
            api.PATCH('/v1/members/{id}/', {
              params: { path: { id: member.id }, header: { 'Idempotency-Key': idempotencyKey() } },
              body: {
                email: text(data, 'email'),
                first_name: textOrNull(data, 'first_name'),
                last_name: textOrNull(data, 'last_name'),
                code: text(data, 'code'),
                campaign: campaign ? { id: campaign } : null,
                subscription: subscriptionRef(text(data, 'subscription')),
                payout_email: textOrNull(data, 'payout_email'),
                email_opt_out: checked(data, 'email_opt_out'),
                // Sent only when changed: a method whose rail was disconnected since is kept, not refused.
                ...(method !== member.payout_method ? { payout_method: method } : {}),
              },
            }),
          );
          onSaved(saved);
        }}
      >
        <div class="form-grid">
          <Field name="email" label="Email" type="email" defaultValue={member.email} required autoComplete="off" />
          <Field name="code" label="Referral code" defaultValue={member.code} required autoComplete="off" spellcheck={false} />
          <Field name="first_name" label="First name" optional defaultValue={member.first_name ?? ''} autoComplete="off" />
          <Field name="last_name" label="Last name" optional defaultValue={member.last_name ?? ''} autoComplete="off" />
          <SelectField
            name="campaign"
            label="Campaign"
            options={campaignOptions(campaigns, 'No campaign')}
            defaultValue={member.campaign?.id ?? ''}
          />
          <Field
            name="subscription"
            label="Subscription id"
            optional
            hint="The member's own subscription at your payment provider: credits are applied to it."
            defaultValue={member.subscription ? String(member.subscription.id) : ''}
            autoComplete="off"
            spellcheck={false}
          />
          <Field
            name="payout_email"
            label="Payout email"
            type="email"
            optional
            defaultValue={member.payout_email ?? ''}
            autoComplete="off"
          />
          <SelectField
            name="payout_method"
            label="Payout method"
            options={methodOptions(rails.data, member.payout_method)}
            defaultValue={member.payout_method ?? ''}
            hint="How a batch pays this member. Stripe needs the member to set up payouts in their portal."
          />
          <CheckField name="email_opt_out" label="Do not email this member" defaultChecked={member.email_opt_out} />
        </div>
        <div class="form-actions">
          <SubmitButton form={form} busyLabel="Saving…">
            Save changes
          </SubmitButton>
        </div>
      </Form>
    </Section>
  );
}

export function MemberDetail() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const canManage = useCan('manage');
  const notify = useToast();
  const { campaigns } = useCampaigns();
  const [version, setVersion] = useState(0);
  const loaded = useLoad(() => unwrap(api.GET('/v1/members/{id}/', { params: { path: { id } } })), [id, version]);
  const member = loaded.data;

  const { deleting, remove } = useDeleteFlow(
    member && {
      confirm: {
        title: `Delete member ${member.identifier}?`,
        body: (
          <p>
            Their referrals and rewards stay in your history; their code, email and identifier become free to reuse. This cannot be undone.
          </p>
        ),
        confirmLabel: 'Delete member',
        danger: true,
      },
      remove: () =>
        unwrap(api.DELETE('/v1/members/{id}/', { params: { path: { id: member.id }, header: { 'Idempotency-Key': idempotencyKey() } } })),
      done: `Member ${member.identifier} deleted.`,
      failed: 'The member could not be deleted.',
      back: '/app/members',
    },
  );

  return (
    <>
      <PageHeader title={member ? member.identifier : 'Member'} subtitle={member?.email} back={{ href: '/app/members', label: 'Members' }}>
        {member && canManage && (
          <BusyButton variant="danger" busy={deleting} busyLabel="Deleting…" onClick={remove}>
            Delete member
          </BusyButton>
        )}
      </PageHeader>
      <LoadState loaded={loaded} what="the member">
        {(m) => (
          <>
            <ul class="kpis kpis-small" aria-label="Member statistics">
              <Stat label="Link clicks" value={formatCount(m.stats.link_clicks)} />
              <Stat label="Referrals" value={formatCount(m.stats.referrals)} />
              <Stat label="Conversions" value={formatCount(m.stats.conversions)} />
              <Stat label="Commission pending" value={formatMoney(m.stats.commission_pending, m.stats.currency)} />
              <Stat label="Commission held" value={formatMoney(m.stats.commission_held, m.stats.currency)} />
              <Stat label="Commission approved" value={formatMoney(m.stats.commission_approved, m.stats.currency)} />
              <Stat label="Commission paid" value={formatMoney(m.stats.commission_paid, m.stats.currency)} />
              <Stat label="Credit earned" value={formatMoney(m.stats.credit_earned, m.stats.currency)} />
            </ul>
            <FraudFlagsSection flags={m.fraud_flags ?? []} member={m.id} what="member" />
            <div class="grid-2">
              <Section id="referral-link" title="Referral link">
                <p>Any page of your site that loads the Refloop script credits this member when its address carries their code:</p>
                <CopyBox label="Link parameter" value={`?via=${m.code}`} />
                <p class="hint">
                  For example <code>https://your-site.example/pricing?via={m.code}</code>. Your app can also create referrals with{' '}
                  <code>member_code: "{m.code}"</code>.
                </p>
              </Section>
              <Section id="member-details" title="Details">
                <Details
                  items={[
                    ['Member id', <code>{m.id}</code>],
                    ['Name', [m.first_name, m.last_name].filter(Boolean).join(' ') || '—'],
                    ['Campaign', m.campaign ? <a href={campaignHref(m.campaign.id)}>{m.campaign.name}</a> : 'None'],
                    ['Source', m.source === 'signup' ? 'Sign-up page (approved application)' : 'Your app or this dashboard'],
                    ['Subscription', m.subscription ? `${String(m.subscription.id)} (${m.subscription.status})` : 'None attached'],
                    ['Payout email', m.payout_email ?? 'Not set: payouts stay open until it is'],
                    ...payoutMethodDetails(m),
                    ['Emails', m.email_opt_out ? 'Opted out' : 'Receives notices'],
                    ['Created', formatTime(m.created_at)],
                  ]}
                />
              </Section>
            </div>
            <MemberLinks memberId={m.id} identifier={m.identifier} />
            {canManage && <PortalAccess member={m} />}
            {canManage && (
              <EditMember
                member={m}
                campaigns={campaigns}
                onSaved={(saved) => {
                  loaded.setData(saved);
                  notify('Member saved.');
                }}
              />
            )}
            <Section id="member-referrals" title="Referrals">
              <PagedTable
                label={`Referrals by ${m.identifier}`}
                noun={['referral', 'referrals']}
                cursorParam="referrals_cursor"
                pageSize={10}
                deps={[m.id]}
                load={(q) => unwrap(api.GET('/v1/referrals/', { params: { query: { ...q, member: m.id } } }))}
                rowKey={(r) => r.id}
                columns={referralColumns({ member: false })}
                exportHref={exportHref('referrals.csv', { member: m.id })}
                empty={<p>No referrals yet. Share the member's link, or create a referral with their code on the Referrals page.</p>}
              />
            </Section>
            <Section id="member-rewards" title="Rewards">
              <PagedTable
                label={`Rewards of ${m.identifier}`}
                noun={['reward', 'rewards']}
                cursorParam="rewards_cursor"
                pageSize={10}
                deps={[m.id, version]}
                load={(q) => unwrap(api.GET('/v1/rewards/', { params: { query: { ...q, member: m.id } } }))}
                rowKey={(r) => r.id}
                columns={rewardColumns(() => setVersion((n) => n + 1), { member: false })}
                exportHref={exportHref('rewards.csv', { member: m.id })}
                empty={<p>No rewards yet. They are created when customers this member referred pay.</p>}
              />
            </Section>
            <Section id="member-payouts" title="Payouts">
              <PagedTable
                label={`Payouts of ${m.identifier}`}
                noun={['payout', 'payouts']}
                cursorParam="payouts_cursor"
                pageSize={10}
                deps={[m.id, version]}
                load={(q) => unwrap(api.GET('/v1/payouts/', { params: { query: { ...q, member: m.id } } }))}
                rowKey={(p) => p.id}
                columns={payoutColumns(() => setVersion((n) => n + 1), { member: false })}
                exportHref={exportHref('payouts.csv', { member: m.id })}
                empty={<p>No payouts yet. Approved commissions are gathered into a payout per currency.</p>}
              />
            </Section>
          </>
        )}
      </LoadState>
    </>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <li class="kpi">
      <p class="kpi-label">{label}</p>
      <p class="kpi-value">{value}</p>
    </li>
  );
}

/**
 * Support: a single-use URL of this member's portal (what they see), and ending every portal session of
 * theirs (a lost laptop, say). The URL opens once, within 10 minutes; open it in a private window so the
 * member's view stays apart from the dashboard.
 */
function PortalAccess({ member }: { member: Member }) {
  const notify = useToast();
  const [link, setLink] = useState<{ url: string; expires_at: number } | null>(null);
  const [busy, setBusy] = useState<'link' | 'end' | null>(null);
  const run = async (which: 'link' | 'end') => {
    setBusy(which);
    try {
      if (which === 'link') {
        const made = await unwrap(api.POST('/v1/members/{id}/portal-sessions/', { params: { path: { id: member.id } }, body: {} }));
        if (made.url) setLink({ url: made.url, expires_at: made.expires_at });
      } else {
        await unwrap(api.DELETE('/v1/members/{id}/portal-sessions/', { params: { path: { id: member.id } } }));
        setLink(null);
        notify('Every portal session of this member has ended.');
      }
    } catch {
      notify(which === 'link' ? 'The portal link could not be made.' : 'The portal sessions could not be ended.', 'error');
    } finally {
      setBusy(null);
    }
  };
  return (
    <Section
      id="member-portal"
      title="Member portal"
      description="What this member sees: their link, terms, referrals, rewards and payouts. Your app embeds it with Refloop.mount."
    >
      {link ? (
        <>
          <CopyBox label="Portal link (works once, for 10 minutes)" value={link.url} />
          <p class="hint">
            Valid until {formatTime(link.expires_at)}.{' '}
            <a href={link.url} target="_blank" rel="noopener noreferrer">
              Open it in a new tab
            </a>
            .
          </p>
        </>
      ) : (
        <p class="muted">No portal link made here yet.</p>
      )}
      <div class="form-actions">
        <BusyButton variant="secondary" busy={busy === 'link'} busyLabel="Making a link…" onClick={() => void run('link')}>
          Make a portal link
        </BusyButton>
        <BusyButton variant="secondary" busy={busy === 'end'} busyLabel="Ending…" onClick={() => void run('end')}>
          End portal sessions
        </BusyButton>
      </div>
    </Section>
  );
}
