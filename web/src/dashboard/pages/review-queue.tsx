// /app/review - the review queue: what the fraud rules flagged or held (GET /v1/fraud-flags/), newest first,
// by status (`?status=`, Open first), rule (`?rule=`) and member (`?member=`). Each flag says what its rule
// found in words, links its subject and evidence, and shows the rewards it still holds with their amounts
// (one read of the account's held rewards per page). Owners, admins and finance act on a flag: Release,
// Void (asked first), Mark reviewed (once it holds nothing), and for an application, Reject (owners and
// admins; the application is rejected, then the flag reviewed). Viewers read.
import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { cursorOf, toProblem, unwrap, type Page, type Problem } from '../../api/client';
import type { LedgerReward } from '../../api/types';
import { Badge } from '../../ui/badge';
import { BusyButton, Spinner } from '../../ui/busy-button';
import { useConfirm } from '../../ui/confirm';
import { formatCount, formatMoney, formatTime, plural } from '../../ui/format';
import { useToast } from '../../ui/toast';
import { api } from '../api';
import { PageHeader, Section } from '../components/page';
import { refreshPendingCount, rejectApplication } from '../lib/affiliates';
import {
  FLAG_STATUSES,
  type FlagAction,
  type FlagStatus,
  type FraudFlagRecord,
  type FraudRule,
  RULES,
  ago,
  figureName,
  listFlags,
  refreshOpenFlags,
  resolveFlag,
  ruleName,
  setOpenFlags,
} from '../lib/fraud';
import { referralHref } from '../lib/links';
import { MemberRef } from '../lib/members';
import { useCan } from '../lib/session';
import { oneOf, urlWith } from '../lib/url';
import { StatusFilter } from './filters';

const TABS = [...FLAG_STATUSES, 'all'] as const;
type Tab = (typeof TABS)[number];
const TAB_LABEL: Record<Tab, string> = { open: 'Open', released: 'Released', voided: 'Voided', reviewed: 'Reviewed', all: 'All' };
const EMPTY: Record<Tab, string> = {
  open: 'Nothing is waiting for review. The fraud rules put what they find here (Settings > Fraud rules).',
  released: 'No released flags.',
  voided: 'No voided flags.',
  reviewed: 'No reviewed flags.',
  all: 'The fraud rules have found nothing yet.',
};
/** A flag's status: the word, its tone through the badge's. */
const STATUS_TONE: Record<FlagStatus, string> = { open: 'due', released: 'approved', voided: 'voided', reviewed: 'paid' };

const applicationHref = (id: string) => `/app/applications/${encodeURIComponent(id)}`;
const EVIDENCE_SHOWN = 8;

/** The held rewards by id (one read per page of the queue: the account's held rewards are few). */
type HeldIndex = { rewards: Map<string, LedgerReward>; complete: boolean };

async function loadHeld(): Promise<HeldIndex> {
  const page = await unwrap(api.GET('/v1/rewards/', { params: { query: { status: 'held', page_size: 100 } } }));
  return { rewards: new Map(page.results.map((r) => [r.id, r])), complete: page.next === null };
}

/** "$12.00 + €5.00" of the rewards this flag still holds; null when some are not in the page read. */
function heldAmount(flag: FraudFlagRecord, held: HeldIndex | null): string | null {
  if (!held) return null;
  const totals = new Map<string, number>();
  let found = 0;
  for (const id of flag.held_reward_ids) {
    const r = held.rewards.get(id);
    if (!r) continue;
    found += 1;
    totals.set(r.currency, (totals.get(r.currency) ?? 0) + Number(r.amount));
  }
  if (found !== flag.held_count) return null;
  return [...totals].map(([c, v]) => formatMoney(v.toFixed(2), c)).join(' + ');
}

function Subject({ flag }: { flag: FraudFlagRecord }) {
  if (flag.subject_type === 'referral')
    return (
      <>
        Referral{' '}
        <a href={referralHref(flag.subject_id)} class="mono-small">
          {flag.subject_id}
        </a>
      </>
    );
  if (flag.subject_type === 'application')
    return (
      <>
        Application{' '}
        <a href={applicationHref(flag.subject_id)} class="mono-small">
          {flag.subject_id}
        </a>
      </>
    );
  return (
    <>
      Member <MemberRef id={flag.subject_id} />
    </>
  );
}

function IdList({ ids, href }: { ids: string[]; href: (id: string) => string }) {
  const shown = ids.slice(0, EVIDENCE_SHOWN);
  return (
    <span class="id-list">
      {shown.map((id, i) => (
        <span key={id}>
          {i > 0 && ', '}
          <a href={href(id)} class="mono-small">
            {id}
          </a>
        </span>
      ))}
      {ids.length > shown.length && <span class="muted"> and {formatCount(ids.length - shown.length)} more</span>}
    </span>
  );
}

function Evidence({ flag }: { flag: FraudFlagRecord }) {
  // The subject itself is linked above: the evidence lists the others.
  const others = (ids: string[] | undefined) => (ids ?? []).filter((id) => id !== flag.subject_id);
  const referrals = others(flag.evidence.referral_ids);
  const applications = others(flag.evidence.application_ids);
  const figures = flag.evidence.figures ?? {};
  const rows = Object.entries(figures);
  if (referrals.length === 0 && applications.length === 0 && rows.length === 0) return null;
  return (
    <div class="flag-evidence">
      {rows.length > 0 && (
        <dl class="figures" aria-label="Figures the rule compared">
          {rows.map(([name, value]) => (
            <div key={name} class="figure">
              <dt>{figureName(name)}</dt>
              <dd>{formatCount(value)}</dd>
            </div>
          ))}
        </dl>
      )}
      {referrals.length > 0 && (
        <p>
          {referrals.length === 1 ? 'Also counted: referral ' : 'Also counted: referrals '}
          <IdList ids={referrals} href={referralHref} />
        </p>
      )}
      {applications.length > 0 && (
        <p>
          {applications.length === 1 ? 'Also counted: application ' : 'Also counted: applications '}
          <IdList ids={applications} href={applicationHref} />
        </p>
      )}
    </div>
  );
}

function Holds({ flag, held }: { flag: FraudFlagRecord; held: HeldIndex | null }) {
  if (flag.action !== 'hold') return <p class="flag-holds muted">Flag only: no reward is held.</p>;
  if (flag.held_count === 0) {
    return (
      <p class="flag-holds muted">
        {flag.held_reward_ids.length === 0
          ? flag.status === 'open'
            ? 'Holds no reward yet: commissions of this referral are held as they are created.'
            : 'Held no reward.'
          : `Held ${plural(flag.held_reward_ids.length, 'reward')}; none is held any longer.`}
      </p>
    );
  }
  const amount = heldAmount(flag, held);
  return (
    <p class="flag-holds" data-held-count={String(flag.held_count)}>
      <strong>Holds {plural(flag.held_count, 'reward')}</strong>
      {amount && <>: {amount}</>}{' '}
      <a href={flag.member_id ? `/app/rewards?status=held&member=${encodeURIComponent(flag.member_id)}` : '/app/rewards?status=held'}>
        See held rewards
      </a>
    </p>
  );
}

function FlagActions({ flag, onDone }: { flag: FraudFlagRecord; onDone: (updated: FraudFlagRecord | null) => void }) {
  const canAct = useCan('money');
  const canDecide = useCan('manage');
  const confirm = useConfirm();
  const notify = useToast();
  const [busy, setBusy] = useState<FlagAction | 'reject' | null>(null);
  if (!canAct || flag.status !== 'open') return null;
  const holds = flag.held_count;
  const name = ruleName(flag.rule);
  const noteInput = { label: 'Note (optional)', maxLength: 500, hint: 'Kept with the flag for your team.' };

  const run = async (kind: FlagAction | 'reject') => {
    const ask =
      kind === 'release'
        ? {
            title: `Release ${plural(holds, 'held reward')}?`,
            body: <p>They return to pending and are approved at the end of their hold period (at once if it has passed).</p>,
            confirmLabel: 'Release',
            input: noteInput,
          }
        : kind === 'void'
          ? {
              title: `Void ${plural(holds, 'held reward')}?`,
              body: <p>They are voided with the reason “fraud” and never paid. This cannot be undone.</p>,
              confirmLabel: `Void ${plural(holds, 'held reward')}`,
              danger: true,
              input: noteInput,
            }
          : kind === 'reject'
            ? {
                title: 'Reject this application?',
                body: <p>The applicant gets a short, neutral email. The note is kept as the internal reason and never sent.</p>,
                confirmLabel: 'Reject application',
                danger: true,
                input: { ...noteInput, label: 'Internal reason (optional)', initial: `${name}: ${flag.detail}`.slice(0, 500) },
              }
            : {
                title: 'Mark this flag reviewed?',
                body: <p>You looked and nothing needs doing. It leaves the open queue.</p>,
                confirmLabel: 'Mark reviewed',
                input: noteInput,
              };
    const note = await confirm(ask);
    if (note === null) return;
    setBusy(kind);
    try {
      let updated: FraudFlagRecord;
      if (kind === 'reject') {
        await rejectApplication(flag.subject_id, note);
        void refreshPendingCount();
        updated = await resolveFlag(flag.id, 'review', note || null);
      } else {
        updated = await resolveFlag(flag.id, kind, note || null);
      }
      notify(
        kind === 'release'
          ? `Released ${plural(holds, 'reward')}.`
          : kind === 'void'
            ? `Voided ${plural(holds, 'reward')}.`
            : kind === 'reject'
              ? 'Application rejected and flag reviewed.'
              : 'Flag marked reviewed.',
      );
      onDone(updated);
    } catch (err) {
      // A 409 (someone acted first, or it holds rewards again) is said as the API says it; the list is read again.
      notify(err instanceof Error && err.message ? err.message : 'The request failed.', 'error');
      onDone(null);
    } finally {
      setBusy(null);
    }
  };

  const hintId = `${flag.id}-review-hint`;
  return (
    <div class="flag-actions">
      {holds > 0 && (
        <>
          <BusyButton
            variant="primary"
            class="btn-small"
            busy={busy === 'release'}
            busyLabel="Releasing…"
            disabled={busy !== null}
            onClick={() => void run('release')}
          >
            Release
          </BusyButton>
          <BusyButton
            variant="danger"
            class="btn-small"
            busy={busy === 'void'}
            busyLabel="Voiding…"
            disabled={busy !== null}
            onClick={() => void run('void')}
          >
            Void
          </BusyButton>
        </>
      )}
      {flag.subject_type === 'application' && canDecide && (
        <BusyButton
          variant="danger"
          class="btn-small"
          busy={busy === 'reject'}
          busyLabel="Rejecting…"
          disabled={busy !== null || holds > 0}
          onClick={() => void run('reject')}
        >
          Reject application
        </BusyButton>
      )}
      <BusyButton
        variant="secondary"
        class="btn-small"
        busy={busy === 'review'}
        busyLabel="Saving…"
        disabled={busy !== null || holds > 0}
        aria-describedby={holds > 0 ? hintId : undefined}
        onClick={() => void run('review')}
      >
        Mark reviewed
      </BusyButton>
      {holds > 0 && (
        <p class="hint flag-hint" id={hintId}>
          Release or void the held rewards before marking it reviewed.
        </p>
      )}
    </div>
  );
}

function FlagItem({ flag, held, onDone }: { flag: FraudFlagRecord; held: HeldIndex | null; onDone: (u: FraudFlagRecord | null) => void }) {
  const headingId = `${flag.id}-title`;
  const when = ago(flag.created_at);
  return (
    <li class="flag-item" aria-labelledby={headingId} data-flag={flag.id} data-rule={flag.rule} data-status={flag.status}>
      <div class="flag-head">
        <h3 id={headingId} class="flag-title">
          {ruleName(flag.rule)}
        </h3>
        <Badge status={STATUS_TONE[flag.status]} label={flag.status} />
        <Badge status={flag.action === 'hold' ? 'failed' : 'paused'} label={flag.action === 'hold' ? 'Hold' : 'Flag'} />
        <span class="flag-when">
          <time dateTime={new Date(flag.created_at * 1000).toISOString()} title={formatTime(flag.created_at)}>
            {when || formatTime(flag.created_at)}
          </time>
        </span>
      </div>
      <p class="flag-detail">{flag.detail}</p>
      <p class="flag-subject">
        <Subject flag={flag} />
        {flag.member_id && flag.subject_type !== 'member' && (
          <>
            {' · '}Member <MemberRef id={flag.member_id} />
          </>
        )}
      </p>
      <Evidence flag={flag} />
      <Holds flag={flag} held={held} />
      {flag.status !== 'open' && (
        <p class="flag-resolution muted">
          {flag.status.charAt(0).toUpperCase() + flag.status.slice(1)} {formatTime(flag.resolved_at)}
          {flag.note ? `: ${flag.note}` : ''}
        </p>
      )}
      <div class="flag-foot">
        <FlagActions flag={flag} onDone={onDone} />
        {flag.member_id && (
          <a class="flag-more" href={`/app/review?status=all&member=${encodeURIComponent(flag.member_id)}`}>
            All flags of this member
          </a>
        )}
      </div>
    </li>
  );
}

export function ReviewQueue() {
  const { path, query, route } = useLocation();
  const status = oneOf<Tab>(query.status, TABS, 'open');
  const rule = oneOf<FraudRule | ''>(query.rule, ['', ...RULES], '');
  const member = query.member || undefined;
  const cursor = query.cursor || undefined;
  const canAct = useCan('money');
  const [page, setPage] = useState<Page<FraudFlagRecord> | null>(null);
  const [held, setHeld] = useState<HeldIndex | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [loading, setLoading] = useState(true);
  const [version, setVersion] = useState(0);

  useEffect(() => {
    let live = true;
    setLoading(true);
    setProblem(null);
    listFlags({ status: status === 'all' ? undefined : status, rule: rule || undefined, member, cursor, page_size: 20 })
      .then((p) => {
        if (!live) return;
        setPage(p);
        if (status === 'open' && !rule && !member && !cursor) setOpenFlags(p.count);
        // Amounts of what the page's flags hold: one read, only when one holds something.
        if (p.results.some((f) => f.held_count > 0))
          void loadHeld().then(
            (h) => live && setHeld(h),
            () => live && setHeld(null),
          );
      })
      .catch((err: unknown) => live && setProblem(toProblem(err)))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [status, rule, member, cursor, version]);

  const onDone = (updated: FraudFlagRecord | null) => {
    if (updated && page) {
      // Shown as it now is at once; the list is read again (it may leave this tab).
      setPage({ ...page, results: page.results.map((f) => (f.id === updated.id ? updated : f)) });
    }
    setVersion((n) => n + 1);
    void refreshOpenFlags();
  };
  const go = (link: string | null) => route(urlWith(path, query, { cursor: cursorOf(link) }));

  return (
    <>
      <PageHeader
        title="Review queue"
        subtitle={
          canAct
            ? 'What the fraud rules found. Release what is fine, void what is not; a held reward is paid only once released.'
            : 'What the fraud rules found. An owner, admin or finance member acts on it.'
        }
      >
        <a class="btn btn-secondary" href="/app/settings/fraud">
          Fraud rules
        </a>
      </PageHeader>
      <StatusFilter
        label="Flag status"
        current={status}
        options={TABS.map((t) => ({ value: t, label: TAB_LABEL[t] }))}
        href={(s) => urlWith(path, query, { status: s === 'open' ? null : s, cursor: null })}
      />
      <Section
        id="flag-list"
        title={status === 'all' ? 'All flags' : `${TAB_LABEL[status]} flags`}
        actions={
          <>
            {member && (
              <span class="filter-chip">
                Member <MemberRef id={member} />
                <a href={urlWith(path, query, { member: null, cursor: null })}>Show all</a>
              </span>
            )}
            <div class="inline-field">
              <label class="label-inline" for="flag-rule-filter">
                Rule
              </label>
              <select
                id="flag-rule-filter"
                class="input input-small"
                value={rule}
                onChange={(e) => route(urlWith(path, query, { rule: e.currentTarget.value, cursor: null }))}
              >
                <option value="">All rules</option>
                {RULES.map((r) => (
                  <option key={r} value={r}>
                    {ruleName(r)}
                  </option>
                ))}
              </select>
            </div>
          </>
        }
      >
        {problem ? (
          <div class="alert alert-error" role="alert">
            <p>Could not load the review queue: {problem.message ?? Object.values(problem.fields).flat().join(' ')}</p>
            <button type="button" class="btn btn-secondary btn-small" onClick={() => setVersion((n) => n + 1)}>
              Try again
            </button>
          </div>
        ) : !page ? (
          <Spinner label="Loading the review queue…" />
        ) : page.count === 0 && page.results.length === 0 && !cursor ? (
          <div class="empty">
            <p>{rule || member ? 'No flags with these filters.' : EMPTY[status]}</p>
          </div>
        ) : (
          <div class="paged" aria-busy={loading ? 'true' : undefined}>
            <ul class={loading ? 'flag-list-items is-loading' : 'flag-list-items'} aria-label="Flags">
              {page.results.map((f) => (
                <FlagItem key={f.id} flag={f} held={held} onDone={onDone} />
              ))}
            </ul>
            <nav class="pager" aria-label="Flags: pages">
              <span class="pager-count">{plural(page.count, 'flag')}</span>
              {(page.previous || page.next || cursor) && (
                <div class="pager-buttons">
                  <button
                    type="button"
                    class="btn btn-secondary btn-small"
                    disabled={!page.previous || loading}
                    onClick={() => go(page.previous)}
                  >
                    ← Previous
                  </button>
                  <button type="button" class="btn btn-secondary btn-small" disabled={!page.next || loading} onClick={() => go(page.next)}>
                    Next →
                  </button>
                </div>
              )}
            </nav>
          </div>
        )}
      </Section>
    </>
  );
}
