// The payouts table (the Payouts page, a batch's page, a member's page) with its row actions: mark paid,
// mark failed (not on a payout a rail is paying: ../pages/rail-batch.tsx).
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { useConfirm } from '../../ui/confirm';
import { formatDate, formatMoney, formatTime } from '../../ui/format';
import { api } from '../api';
import { idempotencyKey, unwrap } from '../../api/client';
import type { Payout } from '../../api/types';
import type { Column } from '../components/paged-table';
import { IdLink } from '../lib/links';
import { MemberRef, useMemberInfo } from '../lib/members';
import { RAIL_NAMES, isRail } from '../lib/rails';
import { useCan } from '../lib/session';
import { useRowAction } from './row-action';

export function PayoutActions({ payout, onChanged }: { payout: Payout; onChanged: () => void }) {
  const allowed = useCan('money');
  const confirm = useConfirm();
  const { busy, act } = useRowAction<'paid' | 'failed'>(onChanged);
  // A payout its rail is paying has its outcome from the rail (its batch's page): marking it by hand could
  // pay its rewards twice.
  const byRail = isRail(payout.rail);
  const payable = payout.status === 'due' || (payout.status === 'processing' && !byRail);
  const failable = payout.status === 'processing' && !byRail;
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

/**
 * Why an open payout is not due yet when the API does not say (its `failure_reason` names a payout method
 * not ready): no payout email, or below the campaign's minimum.
 */
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
  const email = payout.payout_email ?? (collecting ? (info?.payout_email ?? null) : null);
  return (
    <>
      <MemberRef id={payout.member_id} />
      {info && <span class="cell-sub">{info.name ?? info.email}</span>}
      {email && (
        <span class="cell-sub" data-payout-email={email}>
          Pays to {email}
        </span>
      )}
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
          {isRail(p.rail) && (
            <span class="cell-sub" data-rail={p.rail}>
              Via {RAIL_NAMES[p.rail]}
              {p.rail_status ? ` · ${p.rail_status}` : ''}
            </span>
          )}
          {p.failure_reason && <span class="cell-sub">{p.failure_reason}</span>}
          {p.status === 'open' && !p.failure_reason && <PayoutOpenReason payout={p} />}
        </>
      ),
    },
  );
  if (opts.batch !== false) {
    cols.push({
      key: 'batch',
      header: 'Batch',
      cell: (p) => (p.batch_id ? <IdLink href={`/app/payouts/batches/${encodeURIComponent(p.batch_id)}`} id={p.batch_id} /> : '—'),
    });
  }
  cols.push({ key: 'actions', header: 'Actions', hiddenHeader: true, cell: (p) => <PayoutActions payout={p} onChanged={onChanged} /> });
  return cols;
}
