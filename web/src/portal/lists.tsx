// The member's referrals, rewards and payouts: a page each, newest first, "Load more" following the API's
// `next` link (its cursor, on this origin: the bearer token goes nowhere else).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Badge } from '../ui/badge';
import { formatDate, formatMoney, plural } from '../ui/format';
import {
  collectsCommission,
  errorCode,
  listPayouts,
  listReferrals,
  listRewards,
  toProblem,
  type ListPage,
  type Me,
  type Payout,
  type Problem,
  type Referral,
  type Reward,
} from './api';
import { post } from './host';
import { ScrollBox } from './scroll-box';

interface List<T> {
  items: T[] | null;
  count: number;
  next: string | null;
  busy: boolean;
  problem: Problem | null;
  more: () => void;
  retry: () => void;
  /** The index of the first row of the last "Load more" (it takes the focus), else null. */
  focusFrom: number | null;
}

function useList<T>(load: (next?: string | null) => Promise<ListPage<T>>): List<T> {
  const [items, setItems] = useState<T[] | null>(null);
  const [count, setCount] = useState(0);
  const [next, setNext] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [focusFrom, setFocusFrom] = useState<number | null>(null);
  const loading = useRef(false);
  const itemsRef = useRef<T[] | null>(null);

  const fetchPage = async (cursor: string | null) => {
    if (loading.current) return;
    loading.current = true;
    setBusy(true);
    setProblem(null);
    try {
      const page = await load(cursor);
      const before = cursor && itemsRef.current ? itemsRef.current : [];
      itemsRef.current = [...before, ...page.results];
      setFocusFrom(cursor ? before.length : null);
      setItems(itemsRef.current);
      setCount(page.count);
      setNext(page.next);
    } catch (err) {
      const p = toProblem(err);
      // A 401 has already replaced the whole page with its expired state.
      if (p.status !== 401) {
        setProblem(p);
        post({ type: 'error', code: errorCode(p), message: p.message ?? '' });
      }
    } finally {
      loading.current = false;
      setBusy(false);
    }
  };

  useEffect(() => {
    void fetchPage(null);
  }, []);

  return {
    items,
    count,
    next,
    busy,
    problem,
    focusFrom,
    more: () => void fetchPage(next),
    retry: () => void fetchPage(items ? next : null),
  };
}

interface Column<T> {
  label: string;
  num?: boolean;
  cell: (row: T) => ComponentChildren;
}

/** A section with its table, empty state, error and "Load more". The first column heads each row. */
function ListSection<T extends { id: string }>(props: {
  id: string;
  title: string;
  what: [string, string];
  list: List<T>;
  columns: Column<T>[];
  empty: ComponentChildren;
  intro?: ComponentChildren;
}) {
  const { id, title, list, columns } = props;
  const body = useRef<HTMLTableSectionElement>(null);

  // After "Load more", the first new row's heading takes the focus: reading goes on where it left off.
  useEffect(() => {
    if (list.focusFrom === null) return;
    body.current?.querySelectorAll<HTMLElement>('tr > th')[list.focusFrom]?.focus();
  }, [list.items]);

  const [first, ...rest] = columns;
  return (
    <section id={id} class="section" aria-labelledby={`${id}-title`} aria-busy={list.busy ? 'true' : undefined}>
      <div class="section-head">
        <h2 id={`${id}-title`} class="section-title">
          {title}
        </h2>
        {list.items !== null && list.count > 0 && <span class="section-count">{plural(list.count, props.what[0], props.what[1])}</span>}
      </div>
      {props.intro}
      {list.items === null ? (
        list.problem ? null : (
          <p class="loading" role="status">
            <span class="spinner" aria-hidden="true" />
            Loading {title.toLowerCase()}…
          </p>
        )
      ) : list.items.length === 0 ? (
        <div class="empty">{props.empty}</div>
      ) : (
        <div class="card card-table">
          <ScrollBox label={`${title} table`}>
            <table class="table">
              <thead>
                <tr>
                  {columns.map((c) => (
                    <th scope="col" class={c.num ? 'num' : undefined} key={c.label}>
                      {c.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody ref={body}>
                {list.items.map((row) => (
                  <tr key={row.id}>
                    <th scope="row" tabIndex={-1}>
                      {first?.cell(row)}
                    </th>
                    {rest.map((c) => (
                      <td class={c.num ? 'num' : undefined} key={c.label}>
                        {c.cell(row)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
          {list.next && (
            <div class="table-more">
              <span class="muted">
                Showing {list.items.length} of {list.count}
              </span>
              <button
                type="button"
                class="btn btn-secondary btn-small"
                disabled={list.busy}
                aria-busy={list.busy ? 'true' : undefined}
                onClick={list.more}
              >
                {list.busy && <span class="spinner" aria-hidden="true" />}
                {list.busy ? 'Loading…' : 'Load more'}
              </button>
            </div>
          )}
        </div>
      )}
      {list.problem && (
        <div class="notice notice-error" role="alert">
          <p>
            {title} could not be loaded: {list.problem.message}
          </p>
          <button type="button" class="btn btn-secondary btn-small" onClick={list.retry}>
            Try again
          </button>
        </div>
      )}
    </section>
  );
}

const REFERRAL_STATUS: Record<Referral['status'], { tone: string; label: string }> = {
  signed_up: { tone: 'approved', label: 'Signed up' },
  paying: { tone: 'paid', label: 'Paying' },
  canceled: { tone: 'voided', label: 'Canceled' },
};

export function Referrals() {
  const list = useList(listReferrals);
  return (
    <ListSection
      id="referrals"
      title="Referrals"
      what={['referral', 'referrals']}
      list={list}
      empty={
        <>
          <p class="empty-title">No referrals yet</p>
          <p>When someone signs up through your link, they appear here.</p>
        </>
      }
      columns={[
        {
          label: 'Person',
          cell: (r) => (
            <>
              <span class="masked">{r.user}</span>
              <span class="cell-sub">
                Signed up {formatDate(r.created_at)}
                {r.sub ? (
                  <>
                    {' '}
                    through <span class="code">{r.sub}</span>
                  </>
                ) : null}
              </span>
            </>
          ),
        },
        {
          label: 'Status',
          cell: (r) => {
            const s = REFERRAL_STATUS[r.status];
            return (
              <>
                <Badge status={s.tone} label={s.label} />
                {r.converted_at !== null && <span class="cell-sub">Since {formatDate(r.converted_at)}</span>}
              </>
            );
          },
        },
        {
          label: 'Earned',
          num: true,
          cell: (r) => (r.currency === null && Number(r.earned) === 0 ? '—' : formatMoney(r.earned, r.currency)),
        },
      ]}
    />
  );
}

const STANDING: Record<NonNullable<Reward['credit_standing']>, string> = {
  applied: 'Applied to your subscription',
  next_bill: 'Will be applied to your next bill',
  needs_subscription: 'Applied once you have a paid subscription',
};

const VOID_REASON: Record<NonNullable<Reward['void_reason']>, string> = {
  refunded: 'The payment was refunded',
  fraud: 'Not eligible',
  duplicate: 'Counted twice',
  manual: 'Withdrawn by the programme',
};

function rewardNote(r: Reward): string | null {
  if (r.credit_standing) return STANDING[r.credit_standing];
  if (r.status === 'pending' && r.approves_at !== null) return `Approved on ${formatDate(r.approves_at)}`;
  if (r.status === 'approved' && r.type === 'commission') return 'In your next payout';
  if (r.status === 'paid' && r.paid_at !== null) return `Paid on ${formatDate(r.paid_at)}`;
  if (r.status === 'voided') return r.void_reason ? VOID_REASON[r.void_reason] : null;
  // A fraud rule holds it until the programme checks it (the rule itself is the programme's business).
  if (r.status === 'held') return 'The programme is checking this referral';
  return null;
}

export function Rewards() {
  const list = useList(listRewards);
  return (
    <ListSection
      id="rewards"
      title="Rewards"
      what={['reward', 'rewards']}
      list={list}
      empty={
        <>
          <p class="empty-title">No rewards yet</p>
          <p>You earn a reward when someone you referred becomes a paying customer.</p>
        </>
      }
      columns={[
        {
          label: 'Reward',
          cell: (r) => (
            <>
              <span class="amount">{formatMoney(r.amount, r.currency)}</span>
              <span class="cell-sub">
                {r.is_clawback
                  ? `${r.type === 'credit' ? 'Credit' : 'Commission'} taken back`
                  : r.type === 'credit'
                    ? 'Credit'
                    : 'Commission'}
              </span>
            </>
          ),
        },
        {
          label: 'Status',
          cell: (r) => {
            const note = rewardNote(r);
            return (
              <>
                <Badge status={r.status} label={r.status === 'held' ? 'Under review' : undefined} />
                {note && <span class="cell-sub">{note}</span>}
              </>
            );
          },
        },
        { label: 'Earned on', num: true, cell: (r) => formatDate(r.created_at) },
      ]}
    />
  );
}

const PAYOUT_STATUS: Record<Payout['status'], string> = {
  open: 'Collecting',
  due: 'Scheduled',
  processing: 'Being paid',
  paid: 'Paid',
  failed: 'Failed',
  canceled: 'Canceled',
};

/** A credit-only member has no payouts: no section, and no request for them. */
export function Payouts({ me }: { me: Me }) {
  return collectsCommission(me) ? <PayoutList me={me} /> : null;
}

function PayoutList({ me }: { me: Me }) {
  const list = useList(listPayouts);
  // Commission earned on an earlier campaign: the section shows once the member has payouts.
  if (me.campaign?.reward_type !== 'commission' && !(list.items && list.items.length > 0)) return null;
  return (
    <ListSection
      id="payouts"
      title="Payouts"
      what={['payout', 'payouts']}
      list={list}
      intro={
        me.member.payout_email === null ? (
          <p class="section-intro">
            Add your payout email in <a href="#settings">Settings</a> so we can send your commission.
          </p>
        ) : null
      }
      empty={
        <>
          <p class="empty-title">No payouts yet</p>
          <p>
            Approved commission is paid out to {me.member.payout_email ?? 'your payout email'}
            {me.campaign?.min_payout && Number(me.campaign.min_payout) > 0
              ? ` once it reaches ${formatMoney(me.campaign.min_payout, me.campaign.currency)}`
              : ''}
            .
          </p>
        </>
      }
      columns={[
        {
          label: 'Amount',
          cell: (p) => (
            <>
              <span class="amount">{formatMoney(p.amount, p.currency)}</span>
              <span class="cell-sub">{plural(p.reward_count, 'reward')}</span>
            </>
          ),
        },
        { label: 'Status', cell: (p) => <Badge status={p.status} label={PAYOUT_STATUS[p.status]} /> },
        { label: 'Paid on', num: true, cell: (p) => (p.paid_at === null ? '—' : formatDate(p.paid_at)) },
      ]}
    />
  );
}
