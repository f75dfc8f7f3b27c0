// Pieces several pages share: the campaign choices, and the reward, payout and referral tables with their
// actions (a member's page lists the same rows as the Rewards and Payouts pages).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { idempotencyKey, unwrap, type Schemas } from '../../api/client';
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { useConfirm } from '../../ui/confirm';
import type { Column } from '../components/paged-table';
import { useToast } from '../../ui/toast';
import { formatDate, formatMoney, formatTime } from '../../ui/format';
import { MemberRef, useMemberInfo } from '../lib/members';
import { useCan } from '../lib/session';

export type Campaign = Schemas['Campaign'];
export type Member = Schemas['Member'];
export type Referral = Schemas['Referral'];
export type LedgerReward = Schemas['LedgerReward'];
export type Payout = Schemas['Payout'];

/** The account's campaigns (first 100) for pickers and names; empty while loading. */
export function useCampaigns(): { campaigns: Campaign[]; loaded: boolean } {
  const [state, setState] = useState<{ campaigns: Campaign[]; loaded: boolean }>({ campaigns: [], loaded: false });
  useEffect(() => {
    unwrap(api.GET('/v1/campaigns/', { params: { query: { page_size: 100 } } }))
      .then((page) => setState({ campaigns: page.results, loaded: true }))
      .catch(() => setState({ campaigns: [], loaded: true }));
  }, []);
  return state;
}

export const referralHref = (id: string) => `/app/referrals/${encodeURIComponent(id)}`;
export const campaignHref = (id: string) => `/app/campaigns/${encodeURIComponent(id)}`;

export function IdLink({ href, id }: { href: string; id: string }) {
  return (
    <a href={href} class="mono-small">
      {id}
    </a>
  );
}

/**
 * The row buttons of the reward and payout tables: `act(kind, call, done)` marks that button busy (the
 * others disabled), runs the request, then toasts `done` and lets the table reload, or toasts the error.
 */
function useRowAction<Kind extends string>(onChanged: () => void) {
  const notify = useToast();
  const [busy, setBusy] = useState<Kind | null>(null);
  const act = async (kind: Kind, call: () => Promise<unknown>, done: string) => {
    setBusy(kind);
    try {
      await call();
      notify(done);
      onChanged();
    } catch (err) {
      notify(err instanceof Error && err.message ? err.message : 'The request failed.', 'error');
    } finally {
      setBusy(null);
    }
  };
  return { busy, act };
}

// ---- rewards ----

export const VOID_REASONS = [
  { value: 'manual', label: 'Manual (operator decision)' },
  { value: 'refunded', label: 'Refunded' },
  { value: 'fraud', label: 'Fraud' },
  { value: 'duplicate', label: 'Duplicate' },
];

const canApprove = (r: LedgerReward) => r.type === 'commission' && r.status === 'pending' && r.reverses === null;
const canVoid = (r: LedgerReward) => (r.status === 'pending' || r.status === 'approved') && r.reverses === null;

export function RewardActions({ reward, onChanged }: { reward: LedgerReward; onChanged: () => void }) {
  const allowed = useCan('money');
  const confirm = useConfirm();
  const { busy, act } = useRowAction<'approve' | 'void'>(onChanged);
  if (!allowed || (!canApprove(reward) && !canVoid(reward))) return null;

  const amount = formatMoney(reward.amount, reward.currency);
  return (
    <div class="row-actions">
      {canApprove(reward) && (
        <BusyButton
          variant="secondary"
          class="btn-small"
          busy={busy === 'approve'}
          busyLabel="Approving…"
          disabled={busy !== null}
          aria-label={`Approve ${amount} reward ${reward.id}`}
          onClick={() =>
            act('approve', () => unwrap(api.POST('/v1/rewards/{id}/approve/', { params: { path: { id: reward.id }, header: { 'Idempotency-Key': idempotencyKey() } } })), `Reward of ${amount} approved.`)
          }
        >
          Approve
        </BusyButton>
      )}
      {canVoid(reward) && (
        <BusyButton
          variant="ghost"
          class="btn-small btn-danger-text"
          busy={busy === 'void'}
          busyLabel="Voiding…"
          disabled={busy !== null}
          aria-label={`Void ${amount} reward ${reward.id}`}
          onClick={async () => {
            const reason = await confirm({
              title: `Void this ${amount} reward?`,
              body: <p>A voided reward is never paid. This cannot be undone.</p>,
              confirmLabel: 'Void reward',
              danger: true,
              input: { label: 'Reason', options: VOID_REASONS },
            });
            if (reason === null) return;
            await act(
              'void',
              () =>
                unwrap(
                  api.POST('/v1/rewards/{id}/void/', {
                    params: { path: { id: reward.id }, header: { 'Idempotency-Key': idempotencyKey() } },
                    body: { reason: reason as NonNullable<LedgerReward['void_reason']> },
                  }),
                ),
              `Reward of ${amount} voided.`,
            );
          }}
        >
          Void
        </BusyButton>
      )}
    </div>
  );
}

export function RewardStatus({ reward }: { reward: LedgerReward | Schemas['Reward'] }) {
  return (
    <>
      <Badge status={reward.status} />
      {reward.status === 'pending' && reward.approves_at !== null && <span class="cell-sub">approves {formatDate(reward.approves_at)}</span>}
      {reward.status === 'voided' && reward.void_reason && <span class="cell-sub">{reward.void_reason}</span>}
      {reward.reverses !== null && <span class="cell-sub">clawback</span>}
    </>
  );
}

export function rewardColumns(onChanged: () => void, opts: { member?: boolean; campaigns?: Map<string, string> } = {}): Column<LedgerReward>[] {
  const cols: Column<LedgerReward>[] = [
    { key: 'created', header: 'Created', cell: (r) => formatTime(r.created_at) },
  ];
  if (opts.member !== false) cols.push({ key: 'member', header: 'Member', cell: (r) => <MemberRef id={r.member_id} detail /> });
  if (opts.campaigns) cols.push({ key: 'campaign', header: 'Campaign', cell: (r) => <CampaignRef id={r.campaign_id} names={opts.campaigns} /> });
  cols.push(
    { key: 'referral', header: 'Referral', cell: (r) => <IdLink href={referralHref(r.referral_id)} id={r.referral_id} /> },
    { key: 'type', header: 'Type', cell: (r) => (r.type === 'credit' ? 'Credit' : 'Commission') },
    { key: 'amount', header: 'Amount', numeric: true, cell: (r) => formatMoney(r.amount, r.currency) },
    { key: 'status', header: 'Status', cell: (r) => <RewardStatus reward={r} /> },
    { key: 'actions', header: 'Actions', hiddenHeader: true, cell: (r) => <RewardActions reward={r} onChanged={onChanged} /> },
  );
  return cols;
}

// ---- payouts ----

export function PayoutActions({ payout, onChanged }: { payout: Payout; onChanged: () => void }) {
  const allowed = useCan('money');
  const confirm = useConfirm();
  const { busy, act } = useRowAction<'paid' | 'failed'>(onChanged);
  const payable = payout.status === 'due' || payout.status === 'processing';
  const failable = payout.status === 'processing';
  if (!allowed || (!payable && !failable)) return null;
  const amount = formatMoney(payout.amount, payout.currency);

  return (
    <div class="row-actions">
      {payable && (
        <BusyButton
          variant="secondary"
          class="btn-small"
          busy={busy === 'paid'}
          busyLabel="Marking paid…"
          disabled={busy !== null}
          aria-label={`Mark paid: ${amount} payout ${payout.id}`}
          onClick={async () => {
            const reference = await confirm({
              title: `Mark this ${amount} payout paid?`,
              body: <p>Do this once the money has been sent. Its rewards become paid; this cannot be undone.</p>,
              confirmLabel: 'Mark paid',
              input: { label: 'Payment reference', hint: 'E.g. the PayPal or Wise transaction id.', maxLength: 200 },
            });
            if (reference === null) return;
            await act(
              'paid',
              () =>
                unwrap(
                  api.POST('/v1/payouts/{id}/mark-paid/', {
                    params: { path: { id: payout.id }, header: { 'Idempotency-Key': idempotencyKey() } },
                    body: reference ? { reference } : {},
                  }),
                ),
              `Payout of ${amount} marked paid.`,
            );
          }}
        >
          Mark paid
        </BusyButton>
      )}
      {failable && (
        <BusyButton
          variant="ghost"
          class="btn-small btn-danger-text"
          busy={busy === 'failed'}
          busyLabel="Marking failed…"
          disabled={busy !== null}
          aria-label={`Mark failed: ${amount} payout ${payout.id}`}
          onClick={async () => {
            const reason = await confirm({
              title: `Mark this ${amount} payout failed?`,
              body: <p>Its rewards go back to approved and join the member's next payout.</p>,
              confirmLabel: 'Mark failed',
              danger: true,
              input: { label: 'Reason', required: true, hint: 'E.g. "PayPal account not found".', maxLength: 500 },
            });
            if (reason === null) return;
            await act(
              'failed',
              () =>
                unwrap(
                  api.POST('/v1/payouts/{id}/mark-failed/', {
                    params: { path: { id: payout.id }, header: { 'Idempotency-Key': idempotencyKey() } },
                    body: { reason },
                  }),
                ),
              `Payout of ${amount} marked failed.`,
            );
          }}
        >
          Mark failed
        </BusyButton>
      )}
    </div>
  );
}

/** Why an open payout is not due yet: no payout email, or below the campaign's minimum. */
function PayoutOpenReason({ payout }: { payout: Payout }) {
  const info = useMemberInfo(payout.member_id);
  if (info === undefined) return null;
  return <span class="cell-sub">{info?.payout_email ? 'below the minimum' : 'no payout email'}</span>;
}

/**
 * The member of a payout and the address it pays: the one its batch recorded, or for a payout still
 * collecting (open, due) the member's payout email now, which a batch would use.
 */
function PayoutMember({ payout }: { payout: Payout }) {
  const info = useMemberInfo(payout.member_id);
  const collecting = payout.status === 'open' || payout.status === 'due';
  const email = payout.payout_email ?? (collecting ? info?.payout_email ?? null : null);
  return (
    <>
      <MemberRef id={payout.member_id} />
      {info && <span class="cell-sub">{info.name ?? info.email}</span>}
      {email && <span class="cell-sub" data-payout-email={email}>Pays to {email}</span>}
    </>
  );
}

export function payoutColumns(onChanged: () => void, opts: { member?: boolean; batch?: boolean } = {}): Column<Payout>[] {
  const cols: Column<Payout>[] = [{ key: 'created', header: 'Created', cell: (p) => formatTime(p.created_at) }];
  if (opts.member !== false) {
    cols.push({
      key: 'member',
      header: 'Member',
      cell: (p) => <PayoutMember payout={p} />,
    });
  }
  cols.push(
    { key: 'amount', header: 'Amount', numeric: true, cell: (p) => formatMoney(p.amount, p.currency) },
    { key: 'rewards', header: 'Rewards', numeric: true, cell: (p) => p.reward_count },
    {
      key: 'status',
      header: 'Status',
      cell: (p) => (
        <>
          <Badge status={p.status} />
          {p.status === 'paid' && p.paid_at !== null && <span class="cell-sub">{formatDate(p.paid_at)}</span>}
          {p.failure_reason && <span class="cell-sub">{p.failure_reason}</span>}
          {p.status === 'open' && <PayoutOpenReason payout={p} />}
        </>
      ),
    },
  );
  if (opts.batch !== false) {
    cols.push({ key: 'batch', header: 'Batch', cell: (p) => (p.batch_id ? <IdLink href={`/app/payouts/batches/${encodeURIComponent(p.batch_id)}`} id={p.batch_id} /> : '—') });
  }
  cols.push({ key: 'actions', header: 'Actions', hiddenHeader: true, cell: (p) => <PayoutActions payout={p} onChanged={onChanged} /> });
  return cols;
}

// ---- referrals ----

export function ReferralStatus({ referral }: { referral: Referral }) {
  return referral.is_converted ? (
    <>
      <Badge status="converted" label="Converted" />
      <span class="cell-sub">{formatDate(referral.converted_at)}</span>
    </>
  ) : (
    <Badge status="pending" label="Not converted" />
  );
}

export function referralTerms(r: Referral): string {
  if (!r.reward_type) return 'No reward';
  if (r.reward_percent !== null && Number(r.reward_percent) > 0) return `${r.reward_type === 'credit' ? 'Credit' : 'Commission'} ${r.reward_percent}%`;
  return `${r.reward_type === 'credit' ? 'Credit' : 'Commission'} ${formatMoney(r.reward_amount, r.currency)}`;
}

/** A campaign by name (linked) where the page knows the account's campaigns, else by id. */
export function CampaignRef({ id, names }: { id: string | null; names?: Map<string, string> | undefined }) {
  if (!id) return <span class="muted">None</span>;
  const name = names?.get(id);
  return (
    <a href={campaignHref(id)} class={name ? undefined : 'mono-small'} title={name ? id : undefined}>
      {name ?? id}
    </a>
  );
}

export function referralColumns(opts: { member?: boolean; campaigns?: Map<string, string> } = {}): Column<Referral>[] {
  const cols: Column<Referral>[] = [
    {
      key: 'user',
      header: 'Referred user',
      cell: (r) => (
        <a href={referralHref(r.id)}>
          {r.user_identifier}
        </a>
      ),
    },
  ];
  if (opts.member !== false) cols.push({ key: 'member', header: 'Member', cell: (r) => <MemberRef id={r.member_id} detail /> });
  if (opts.campaigns) cols.push({ key: 'campaign', header: 'Campaign', cell: (r) => <CampaignRef id={r.campaign_id} names={opts.campaigns} /> });
  cols.push(
    { key: 'status', header: 'Status', cell: (r) => <ReferralStatus referral={r} /> },
    { key: 'terms', header: 'Reward terms', cell: (r) => referralTerms(r) },
    { key: 'earned', header: 'Earned', numeric: true, cell: (r) => formatMoney(Number(r.stats.commission_earned) + Number(r.stats.credit_earned), r.stats.currency) },
    { key: 'source', header: 'Source', cell: (r) => <span class="tag">{r.source}</span> },
    { key: 'created', header: 'Created', cell: (r) => formatTime(r.created_at) },
  );
  return cols;
}
