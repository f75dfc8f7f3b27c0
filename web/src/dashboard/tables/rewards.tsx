// The rewards table (the Rewards page, a member's page) with its row actions: approve, void, and release
// for a reward a fraud rule holds (docs/fraud.md).
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { useConfirm } from '../../ui/confirm';
import { formatDate, formatMoney, formatTime } from '../../ui/format';
import { api } from '../api';
import { idempotencyKey, unwrap, type Schemas } from '../../api/client';
import type { LedgerReward } from '../../api/types';
import type { Column } from '../components/paged-table';
import { CampaignRef, IdLink, referralHref } from '../lib/links';
import { MemberRef } from '../lib/members';
import { useCan } from '../lib/session';
import { refreshOpenFlags, releaseReward } from '../lib/fraud';
import { useRowAction } from './row-action';

export const VOID_REASONS = [
  { value: 'manual', label: 'Manual (operator decision)' },
  { value: 'refunded', label: 'Refunded' },
  { value: 'fraud', label: 'Fraud' },
  { value: 'duplicate', label: 'Duplicate' },
];

const canApprove = (r: LedgerReward) => r.type === 'commission' && r.status === 'pending' && r.reverses === null;
const canVoid = (r: LedgerReward) => (r.status === 'pending' || r.status === 'approved' || r.status === 'held') && r.reverses === null;
const canRelease = (r: LedgerReward) => r.status === 'held';

export function RewardActions({ reward, onChanged }: { reward: LedgerReward; onChanged: () => void }) {
  const allowed = useCan('money');
  const confirm = useConfirm();
  const { busy, act } = useRowAction<'approve' | 'void' | 'release'>(onChanged);
  if (!allowed || (!canApprove(reward) && !canVoid(reward) && !canRelease(reward))) return null;

  const amount = formatMoney(reward.amount, reward.currency);
  return (
    <div class="row-actions">
      {canRelease(reward) && (
        <BusyButton
          variant="secondary"
          class="btn-small"
          busy={busy === 'release'}
          busyLabel="Releasing…"
          disabled={busy !== null}
          aria-label={`Release ${amount} reward ${reward.id}`}
          onClick={() =>
            act(
              'release',
              async () => {
                await releaseReward(reward.id);
                void refreshOpenFlags();
              },
              `Reward of ${amount} released.`,
            )
          }
        >
          Release
        </BusyButton>
      )}
      {canApprove(reward) && (
        <BusyButton
          variant="secondary"
          class="btn-small"
          busy={busy === 'approve'}
          busyLabel="Approving…"
          disabled={busy !== null}
          aria-label={`Approve ${amount} reward ${reward.id}`}
          onClick={() =>
            act(
              'approve',
              () =>
                unwrap(
                  api.POST('/v1/rewards/{id}/approve/', {
                    params: { path: { id: reward.id }, header: { 'Idempotency-Key': idempotencyKey() } },
                  }),
                ),
              `Reward of ${amount} approved.`,
            )
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
      {reward.status === 'pending' && reward.approves_at !== null && (
        <span class="cell-sub">approves {formatDate(reward.approves_at)}</span>
      )}
      {reward.status === 'voided' && reward.void_reason && <span class="cell-sub">{reward.void_reason}</span>}
      {reward.status === 'held' && (
        <span class="cell-sub is-warning">
          by a fraud rule (<a href="/app/review">review</a>)
        </span>
      )}
      {reward.reverses !== null && <span class="cell-sub">clawback</span>}
    </>
  );
}

export function rewardColumns(
  onChanged: () => void,
  opts: { member?: boolean; campaigns?: Map<string, string> } = {},
): Column<LedgerReward>[] {
  const cols: Column<LedgerReward>[] = [{ key: 'created', header: 'Created', cell: (r) => formatTime(r.created_at) }];
  if (opts.member !== false) cols.push({ key: 'member', header: 'Member', cell: (r) => <MemberRef id={r.member_id} detail /> });
  if (opts.campaigns)
    cols.push({ key: 'campaign', header: 'Campaign', cell: (r) => <CampaignRef id={r.campaign_id} names={opts.campaigns} /> });
  cols.push(
    { key: 'referral', header: 'Referral', cell: (r) => <IdLink href={referralHref(r.referral_id)} id={r.referral_id} /> },
    { key: 'type', header: 'Type', cell: (r) => (r.type === 'credit' ? 'Credit' : 'Commission') },
    { key: 'amount', header: 'Amount', numeric: true, cell: (r) => formatMoney(r.amount, r.currency) },
    { key: 'status', header: 'Status', cell: (r) => <RewardStatus reward={r} /> },
    { key: 'actions', header: 'Actions', hiddenHeader: true, cell: (r) => <RewardActions reward={r} onChanged={onChanged} /> },
  );
  return cols;
}
