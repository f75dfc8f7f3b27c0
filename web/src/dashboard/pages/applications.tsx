// /app/applications (the people who applied on a campaign's public sign-up page: Pending first, by
// `?status=` and `?campaign=`) and /app/applications/:id (the applicant, their answers under the campaign's
// questions, the decision; Approve and Reject for owners and admins). Approving creates the member and
// emails them a login link; rejecting sends a neutral email, and the reason stays internal.
import type { ComponentChildren } from 'preact';
import { useLocation, useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { unwrap } from '../../api/client';
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { useConfirm } from '../../ui/confirm';
import { formatTime } from '../../ui/format';
import { useToast } from '../../ui/toast';
import { FlagList } from '../components/fraud-flags';
import { PagedTable } from '../components/paged-table';
import { Details, LoadState, PageHeader, Section, useLoad } from '../components/page';
import {
  type Application,
  approveApplication,
  getApplication,
  listApplications,
  refreshPendingCount,
  rejectApplication,
  setPendingCount,
} from '../lib/affiliates';
import { useCampaigns } from '../lib/campaigns';
import { CampaignRef } from '../lib/links';
import { useCan } from '../lib/session';
import { oneOf, urlWith } from '../lib/url';
import { StatusFilter } from './filters';

const TABS = ['pending', 'approved', 'rejected', 'all'] as const;
type Tab = (typeof TABS)[number];
const TAB_LABEL: Record<Tab, string> = { pending: 'Pending', approved: 'Approved', rejected: 'Rejected', all: 'All' };
const EMPTY: Record<Tab, string> = {
  pending: 'Nobody is waiting for a decision.',
  approved: 'No approved applications yet.',
  rejected: 'No rejected applications.',
  all: 'No applications yet.',
};

const regionNames = (() => {
  try {
    return new Intl.DisplayNames(undefined, { type: 'region' });
  } catch {
    return null;
  }
})();

/** "France (FR)"; the code alone where the browser has no name for it. */
function countryName(code: string): string {
  if (!code) return '—';
  try {
    const name = regionNames?.of(code.toUpperCase());
    return name && name !== code.toUpperCase() ? `${name} (${code.toUpperCase()})` : code;
  } catch {
    return code;
  }
}

const applicationHref = (id: string) => `/app/applications/${encodeURIComponent(id)}`;

function FlagsCell({ a }: { a: Application }) {
  return a.fraud_flags.length > 0 ? (
    <span class="cell-sub is-warning">
      {a.fraud_flags.length} fraud flag{a.fraud_flags.length === 1 ? '' : 's'}
    </span>
  ) : null;
}

export function Applications() {
  const { path, query, route } = useLocation();
  const status = oneOf<Tab>(query.status, TABS, 'pending');
  const campaign = query.campaign || undefined;
  const { campaigns } = useCampaigns();
  const names = new Map(campaigns.map((c) => [c.id, c.name]));
  const open = campaigns.filter((c) => c.signup.enabled);

  return (
    <>
      <PageHeader
        title="Applications"
        subtitle="People who applied on a campaign's sign-up page. Approving one makes them a member and emails them a login link."
      />
      <StatusFilter
        label="Application status"
        current={status}
        options={TABS.map((t) => ({ value: t, label: TAB_LABEL[t] }))}
        href={(s) => urlWith(path, query, { status: s === 'pending' ? null : s, cursor: null })}
      />
      <Section
        id="application-list"
        title={status === 'all' ? 'All applications' : `${TAB_LABEL[status]} applications`}
        actions={
          <div class="inline-field">
            <label class="label-inline" for="application-campaign-filter">
              Campaign
            </label>
            <select
              id="application-campaign-filter"
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
        }
      >
        <PagedTable<Application>
          label="Applications"
          noun={['application', 'applications']}
          deps={[status, campaign]}
          load={(q) => listApplications({ ...q, status: status === 'all' ? undefined : status, campaign })}
          onLoaded={(page) => {
            if (status === 'pending' && !campaign && !query.cursor) setPendingCount(page.count);
          }}
          rowKey={(a) => a.id}
          empty={
            <p>
              {campaign ? 'No applications with these filters.' : EMPTY[status]}{' '}
              {open.length === 0 && (
                <>
                  Open a campaign to applications in its <strong>Sign-up page</strong> section (<a href="/app/campaigns">Campaigns</a>),
                  then share its page.
                </>
              )}
            </p>
          }
          columns={[
            {
              key: 'applicant',
              header: 'Applicant',
              cell: (a) => (
                <>
                  <a href={applicationHref(a.id)}>{a.name || a.email}</a>
                  <span class="cell-sub">{a.email}</span>
                </>
              ),
            },
            { key: 'campaign', header: 'Campaign', cell: (a) => <CampaignRef id={a.campaign_id} names={names} /> },
            { key: 'country', header: 'Country', cell: (a) => countryName(a.country) },
            {
              key: 'status',
              header: 'Status',
              cell: (a) => (
                <>
                  <Badge status={a.status} />
                  <FlagsCell a={a} />
                </>
              ),
            },
            { key: 'created', header: 'Applied', cell: (a) => formatTime(a.created_at) },
            { key: 'decided', header: 'Decided', cell: (a) => formatTime(a.decided_at) },
          ]}
        />
      </Section>
    </>
  );
}

/** An answer as text; a web address the applicant gave is a link (http and https only, never followed with our referrer). */
function Answer({ value, type }: { value: unknown; type: string | undefined }) {
  if (value === undefined || value === null || value === '') return <span class="muted">No answer</span>;
  const text = Array.isArray(value) ? value.join(', ') : String(value);
  if (type === 'url' && /^https?:\/\//i.test(text)) {
    return (
      <a href={text} target="_blank" rel="noopener noreferrer nofollow" class="break">
        {text}
      </a>
    );
  }
  return <span class="answer">{text}</span>;
}

export function ApplicationDetail() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const canDecide = useCan('manage');
  const notify = useToast();
  const confirm = useConfirm();
  const [busy, setBusy] = useState<'approve' | 'reject' | null>(null);
  const loaded = useLoad(() => getApplication(id), [id]);
  const a = loaded.data;
  const campaign = useLoad(
    () => (a ? unwrap(api.GET('/v1/campaigns/{id}/', { params: { path: { id: a.campaign_id } } })) : Promise.resolve(null)),
    [a?.campaign_id],
  );
  const c = campaign.data;

  const decide = async (kind: 'approve' | 'reject') => {
    if (!a) return;
    const who = a.name || a.email;
    const answer = await confirm(
      kind === 'approve'
        ? {
            title: `Approve ${who}?`,
            body: (
              <p>
                They become a member of {c?.name ?? 'the campaign'} with their own referral code, and get an email with a link to log in to
                their portal.
              </p>
            ),
            confirmLabel: 'Approve',
          }
        : {
            title: `Reject ${who}?`,
            body: <p>They get a short, neutral email. The reason below is kept for your team and never sent.</p>,
            confirmLabel: 'Reject',
            danger: true,
            input: { label: 'Internal reason', maxLength: 500, hint: 'Only your team sees it.' },
          },
    );
    if (answer === null) return;
    setBusy(kind);
    try {
      const saved = kind === 'approve' ? await approveApplication(a.id) : await rejectApplication(a.id, answer);
      loaded.setData(saved);
      notify(
        kind === 'approve'
          ? `${who} approved: they are a member now and have been emailed a login link.`
          : `${who}'s application rejected.`,
      );
    } catch (err) {
      // 409: someone decided first (or the other way). The page shows what it is now.
      notify(err instanceof Error && err.message ? err.message : `The application could not be ${kind}d.`, 'error');
      loaded.reload();
    } finally {
      setBusy(null);
      void refreshPendingCount();
    }
  };

  const questions = c?.signup?.questions ?? [];
  const asked = new Set(questions.map((q) => q.id));
  const extra = a ? Object.keys(a.answers ?? {}).filter((k) => !asked.has(k)) : [];
  const answerRows: [string, ComponentChildren][] = a
    ? [
        ...questions.map((q): [string, ComponentChildren] => [q.label, <Answer value={a.answers?.[q.id]} type={q.type} />]),
        ...extra.map((k): [string, ComponentChildren] => [k, <Answer value={a.answers[k]} type={undefined} />]),
      ]
    : [];

  return (
    <>
      <PageHeader
        title={a ? a.name || a.email : 'Application'}
        subtitle={a ? `Applied ${formatTime(a.created_at)}${c ? ` to ${c.name}` : ''}` : undefined}
        back={{ href: '/app/applications', label: 'Applications' }}
      >
        {a?.status === 'approved' && a.member_id && (
          <a class="btn btn-primary" href={`/app/members/${encodeURIComponent(a.member_id)}`}>
            Open member
          </a>
        )}
        {a?.status === 'pending' && canDecide && (
          <>
            <BusyButton busy={busy === 'approve'} busyLabel="Approving…" disabled={busy !== null} onClick={() => void decide('approve')}>
              Approve
            </BusyButton>
            <BusyButton
              variant="danger"
              busy={busy === 'reject'}
              busyLabel="Rejecting…"
              disabled={busy !== null}
              onClick={() => void decide('reject')}
            >
              Reject
            </BusyButton>
          </>
        )}
      </PageHeader>
      <LoadState loaded={loaded} what="the application">
        {(app) => (
          <>
            <div class="grid-2">
              <Section id="applicant" title="Applicant">
                <Details
                  items={[
                    ['Name', app.name || '—'],
                    ['Email', app.email],
                    ['Country', countryName(app.country)],
                    ['Payout email', app.payout_email ?? <span class="muted">Not given yet</span>],
                    ['Campaign', <CampaignRef id={app.campaign_id} names={c ? new Map([[c.id, c.name]]) : undefined} />],
                    ['Application id', <code>{app.id}</code>],
                  ]}
                />
              </Section>
              <Section id="decision" title="Decision">
                <Details
                  items={[
                    ['Status', <Badge status={app.status} />],
                    ['Decided', app.decided_at ? formatTime(app.decided_at) : <span class="muted">Not yet</span>],
                    ['Internal reason', app.reason ?? <span class="muted">None</span>],
                    [
                      'Member',
                      app.member_id ? (
                        <a href={`/app/members/${encodeURIComponent(app.member_id)}`} class="mono-small">
                          {app.member_id}
                        </a>
                      ) : (
                        <span class="muted">Created on approval</span>
                      ),
                    ],
                    [
                      'Fraud flags',
                      app.fraud_flags.length === 0 ? (
                        <span class="muted">None</span>
                      ) : (
                        <>
                          <FlagList flags={app.fraud_flags} />
                          <a href="/app/review?status=all">Review queue</a>
                        </>
                      ),
                    ],
                  ]}
                />
                {app.status === 'pending' && !canDecide && <p class="hint">An owner or admin decides on applications.</p>}
              </Section>
            </div>
            <Section id="answers" title="Answers">
              {campaign.loading && !c ? (
                <p class="muted">Loading the campaign's questions…</p>
              ) : answerRows.length === 0 ? (
                <p class="muted">The campaign asked no questions.</p>
              ) : (
                <Details items={answerRows} />
              )}
            </Section>
          </>
        )}
      </LoadState>
    </>
  );
}
