// The payout rails on the Payouts pages: "Pay with PayPal / Stripe / Wise" (a confirmation with the total and
// the count of due payouts a rail batch would take, then POST /v1/payout-batches/ {rail, currency}), and a
// rail batch's page: its details (the whole batch's failure in words), "Check with <rail> now" (reconcile),
// and each payout's live outcome, polled every 2 s while one is still on its way, with "Send again" on an
// unclaimed PayPal payout. File batches keep their own UI (./payouts.tsx).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api';
import { cursorOf, toProblem, unwrap, type Problem } from '../../api/client';
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { useConfirm } from '../../ui/confirm';
import { formatCount, formatMoney, formatTime, plural } from '../../ui/format';
import { useToast } from '../../ui/toast';
import { LoadState, useLoad } from '../components/page';
import { MemberRef, memberInfo } from '../lib/members';
import {
  RAIL_KINDS,
  RAIL_NAMES,
  batchPayouts,
  createRailBatch,
  inFlight,
  isUnclaimed,
  railOf,
  railOutcomeWords,
  reconcileBatch,
  resendPayout,
  type RailBatch,
  type RailKind,
  type RailPayout,
} from '../lib/rails';
import { useCan } from '../lib/session';
import type { Payout } from '../../api/types';

/** Every 2 s while a payout of the batch is still on its way at the rail. */
const POLL_MS = 2000;
/** Reads after a reconcile or a re-send was queued, whatever the payouts say (10 s). */
const AFTER_CHECK_POLLS = 5;

/** The sum of decimal strings ("12.5" + "0.25"), exactly (no float): the dialog's total. */
export function sumDecimals(values: string[]): string {
  const scale = Math.max(0, ...values.map((v) => v.split('.')[1]?.length ?? 0));
  let total = 0n;
  for (const v of values) {
    const negative = v.startsWith('-');
    const [whole = '0', frac = ''] = v.replace(/^-/, '').split('.');
    const units = BigInt(whole || '0') * 10n ** BigInt(scale) + BigInt((frac.padEnd(scale, '0') || '0').slice(0, scale) || '0');
    total += negative ? -units : units;
  }
  const negative = total < 0n;
  const digits = (negative ? -total : total).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** The due payouts of a currency, page after page. */
async function duePayouts(currency: string): Promise<Payout[]> {
  const all: Payout[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const result = await unwrap(api.GET('/v1/payouts/', { params: { query: { status: 'due', currency, page_size: 100, cursor } } }));
    all.push(...result.results);
    const next = cursorOf(result.next);
    if (!next) break;
    cursor = next;
  }
  return all;
}

/** What a rail batch of the currency would take now: the due payouts whose member's method is the rail and ready. */
async function railCandidates(rail: RailKind, currency: string): Promise<{ take: Payout[]; others: number }> {
  const due = await duePayouts(currency);
  const ids = [...new Set(due.map((p) => p.member_id))];
  const ready = new Set<string>();
  // A few members at a time, read afresh: a method's readiness changes (a Stripe account finishing onboarding).
  for (let i = 0; i < ids.length; i += 6) {
    const infos = await Promise.all(ids.slice(i, i + 6).map((id) => memberInfo(id, true)));
    infos.forEach((info, j) => {
      if (info?.payout_method === rail && info.payout_method_ready) ready.add(ids[i + j] as string);
    });
  }
  const take = due.filter((p) => ready.has(p.member_id));
  return { take, others: due.length - take.length };
}

/** The rails connected to the account; null when the role may not read them (the server lets owners and admins only). */
function useConnectedRails(): ReturnType<typeof useLoad<RailKind[] | null>> {
  const canRead = useCan('account');
  return useLoad<RailKind[] | null>(
    async () => (canRead ? (await unwrap(api.GET('/v1/account/payout-rails/'))).connected.map((c) => c.kind) : null),
    [canRead],
  );
}

/** "Pay with <rail>" for each connected rail and each currency with payouts due. */
export function PayWithRail({ due }: { due: Record<string, string> }) {
  const rails = useConnectedRails();
  const { route } = useLocation();
  const confirm = useConfirm();
  const notify = useToast();
  const [busy, setBusy] = useState<string | null>(null);
  const currencies = Object.entries(due)
    .filter(([, v]) => Number(v) > 0)
    .map(([c]) => c);

  const pay = async (rail: RailKind, currency: string) => {
    const name = RAIL_NAMES[rail];
    setBusy(`${rail}-${currency}`);
    try {
      const { take, others } = await railCandidates(rail, currency);
      if (take.length === 0) {
        notify(`No due ${currency} payout has a member whose payout method is ${name} and ready.`, 'error');
        return;
      }
      const total = formatMoney(sumDecimals(take.map((p) => p.amount)), currency);
      const ok = await confirm({
        title: `Pay ${plural(take.length, 'payout')} with ${name}?`,
        body: (
          <>
            <p>
              <strong data-rail-total={total}>{total}</strong> in{' '}
              <strong data-rail-count={take.length}>{plural(take.length, 'payout')}</strong> due to members whose payout method is {name}{' '}
              and ready. {name} sends the money from your {name} balance; each payout's outcome shows on the batch's page.
            </p>
            {others > 0 && (
              <p class="hint">
                {plural(others, 'other due payout')} in {currency} {others === 1 ? 'stays' : 'stay'} due: another payout method, or not
                ready yet (the member's page says why).
              </p>
            )}
          </>
        ),
        confirmLabel: `Pay with ${name}`,
      });
      if (ok === null) return;
      const batch = await createRailBatch(rail, currency);
      notify(`Batch of ${plural(batch.payout_count, 'payout')} handed to ${name}.`);
      route(`/app/payouts/batches/${encodeURIComponent(batch.id)}`);
    } catch (err) {
      notify(err instanceof Error ? err.message : `The ${name} batch could not be created.`, 'error');
    } finally {
      setBusy(null);
    }
  };

  if (currencies.length === 0) return null;
  return (
    <LoadState loaded={rails} what="the payout rails">
      {(connected) => {
        // A role that may not read the connections is offered every rail; the server refuses one not connected.
        const offered = connected === null ? RAIL_KINDS : RAIL_KINDS.filter((k) => connected.includes(k));
        if (offered.length === 0) {
          return (
            <p class="hint">
              Connect PayPal Payouts, Stripe Connect or Wise in <a href="/app/settings#payout-rails-title">Settings → Payout rails</a> to
              send payouts from here.
            </p>
          );
        }
        return (
          <div class="rail-pay">
            {currencies.flatMap((currency) =>
              offered.map((rail) => (
                <BusyButton
                  key={`${rail}-${currency}`}
                  variant="secondary"
                  busy={busy === `${rail}-${currency}`}
                  busyLabel="Counting payouts…"
                  disabled={busy !== null}
                  data-pay-rail={rail}
                  onClick={() => pay(rail, currency)}
                >
                  Pay with {RAIL_NAMES[rail]}
                  {currencies.length > 1 ? ` (${currency})` : ''}
                </BusyButton>
              )),
            )}
          </div>
        );
      }}
    </LoadState>
  );
}

/** The rail batch's own details: its rail, its id there, and the whole batch's failure in words. */
export function railBatchDetails(b: RailBatch): [string, ComponentChildren][] {
  const rail = railOf(b);
  return [
    ['Status', <Badge status={b.status} />],
    ['Rail', rail ? RAIL_NAMES[rail] : '—'],
    ['Amount', formatMoney(b.amount, b.currency)],
    ['Payouts', formatCount(b.payout_count)],
    ['Created', formatTime(b.created_at)],
    ...(b.rail_batch_id
      ? ([[`${rail ? RAIL_NAMES[rail] : 'Rail'} batch id`, <code>{b.rail_batch_id}</code>]] as [string, ComponentChildren][])
      : []),
    ...(b.status === 'paid' ? ([['Paid', formatTime(b.paid_at)]] as [string, ComponentChildren][]) : []),
  ];
}

/** "Check with <rail> now": the worker reads the batch back from the rail; the outcome polls again. */
export function ReconcileButton({ batch, onQueued }: { batch: RailBatch; onQueued: () => void }) {
  const allowed = useCan('money');
  const notify = useToast();
  const [busy, setBusy] = useState(false);
  const rail = railOf(batch);
  // The rail is asked only about a batch still processing (the server answers 409 otherwise).
  if (!allowed || !rail || batch.status !== 'processing') return null;
  return (
    <BusyButton
      variant="secondary"
      busy={busy}
      busyLabel="Asking…"
      onClick={async () => {
        setBusy(true);
        try {
          await reconcileBatch(batch.id);
          notify(`Asked ${RAIL_NAMES[rail]} for this batch's outcome.`);
          onQueued();
        } catch (err) {
          notify(err instanceof Error ? err.message : 'The check could not be started.', 'error');
        } finally {
          setBusy(false);
        }
      }}
    >
      Check with {RAIL_NAMES[rail]} now
    </BusyButton>
  );
}

function ResendButton({ payout, onSent }: { payout: RailPayout; onSent: () => void }) {
  const allowed = useCan('money');
  const confirm = useConfirm();
  const notify = useToast();
  const [busy, setBusy] = useState(false);
  if (!allowed || payout.rail !== 'paypal' || !isUnclaimed(payout)) return null;
  const amount = formatMoney(payout.amount, payout.currency);
  return (
    <BusyButton
      variant="secondary"
      class="btn-small"
      busy={busy}
      busyLabel="Sending again…"
      aria-label={`Send again: ${amount} payout ${payout.id}`}
      onClick={async () => {
        const ok = await confirm({
          title: `Send this ${amount} payout again?`,
          body: (
            <p>
              PayPal's unclaimed payment is canceled first, then the payout is sent again to the member's payout email as it is now (correct
              it on the member's page first if it was wrong). It is paid once.
            </p>
          ),
          confirmLabel: 'Send again',
        });
        if (ok === null) return;
        setBusy(true);
        try {
          await resendPayout(payout.id);
          notify(`The ${amount} payout is being sent again.`);
          onSent();
        } catch (err) {
          notify(err instanceof Error ? err.message : 'The payout could not be sent again.', 'error');
        } finally {
          setBusy(false);
        }
      }}
    >
      Send again
    </BusyButton>
  );
}

/**
 * The batch's payouts and their outcome at the rail (GET /v1/payouts/?batch_id=…): read every 2 s while one
 * is still on its way (an unclaimed PayPal payout waits on its recipient, so it stops the polling too).
 * `restart` changes to poll again (after a reconcile or a re-send); `onSettled` runs when nothing is on its way.
 */
export function RailBatchPayouts({ batch, restart, onSettled }: { batch: RailBatch; restart: number; onSettled: () => void }) {
  const [payouts, setPayouts] = useState<RailPayout[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [polling, setPolling] = useState(false);
  const [again, setAgain] = useState(0);
  const [resent, setResent] = useState(0);
  const settled = useRef(onSettled);
  settled.current = onSettled;

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // After "Check with <rail> now" or "Send again" the worker's answer comes a moment later, even when
    // nothing is on its way yet.
    let extra = restart > 0 || resent > 0 ? AFTER_CHECK_POLLS : 0;
    const poll = async () => {
      try {
        const list = await batchPayouts(batch.id);
        if (!live) return;
        setPayouts(list);
        setProblem(null);
        if (list.some(inFlight) || extra-- > 0) {
          setPolling(true);
          timer = setTimeout(poll, POLL_MS);
        } else {
          setPolling(false);
          settled.current();
        }
      } catch (err) {
        if (!live) return;
        setProblem(toProblem(err));
        setPolling(false);
      }
    };
    void poll();
    return () => {
      live = false;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [batch.id, restart, again, resent]);

  if (problem && payouts === null) {
    return (
      <div class="alert alert-error" role="alert">
        <p>Could not load the batch's payouts: {problem.message ?? Object.values(problem.fields).flat().join(' ')}</p>
        <button type="button" class="btn btn-secondary btn-small" onClick={() => setAgain((n) => n + 1)}>
          Try again
        </button>
      </div>
    );
  }
  if (payouts === null) return <p class="muted">Loading the batch's payouts…</p>;
  const waiting = payouts.filter(inFlight).length;
  const unclaimed = payouts.filter(isUnclaimed).length;
  return (
    <div class="paged">
      <p class="hint" role="status" data-rail-progress={waiting === 0 ? 'settled' : 'waiting'}>
        {waiting > 0
          ? `${plural(waiting, 'payout')} still on ${waiting === 1 ? 'its' : 'their'} way; this list updates by itself.`
          : `Every payout has its outcome${unclaimed > 0 ? `, but ${plural(unclaimed, 'payout')} waits for its recipient to claim it` : ''}.`}
        {problem && ' (The last update failed; it will be tried again when you check with the rail.)'}
      </p>
      <div class="table-wrap" aria-busy={polling ? 'true' : undefined}>
        <table class="table">
          <caption class="sr-only">Payouts in this batch and their outcome</caption>
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col" class="num">
                Amount
              </th>
              <th scope="col">Status</th>
              <th scope="col">Rail status</th>
              <th scope="col">Outcome</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {payouts.map((p) => (
              <tr key={p.id} data-payout={p.id} data-status={p.status}>
                <td>
                  <MemberRef id={p.member_id} detail />
                  {p.payout_email && <span class="cell-sub">Pays to {p.payout_email}</span>}
                </td>
                <td class="num">{formatMoney(p.amount, p.currency)}</td>
                <td>{isUnclaimed(p) ? <Badge status="due" label="Unclaimed" /> : <Badge status={p.status} />}</td>
                <td>{p.rail_status ? <code class="mono-small">{p.rail_status}</code> : '—'}</td>
                <td class="rail-outcome">{isUnclaimed(p) && p.failure_reason ? p.failure_reason : railOutcomeWords(p)}</td>
                <td>
                  <ResendButton payout={p} onSent={() => setResent((n) => n + 1)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** The whole batch failed at once (e.g. the rail's balance was too low): its reason, and what to do. */
export function RailBatchFailure({ batch }: { batch: RailBatch }) {
  if (batch.status !== 'failed') return null;
  const rail = railOf(batch);
  return (
    <div class="alert alert-error" role="alert">
      <p>
        <strong>{rail ? RAIL_NAMES[rail] : 'The rail'} refused the whole batch.</strong> {batch.failure_reason ?? ''}
      </p>
      <p>Every payout in it is failed and its rewards are back in the member's next payout; pay them again once this is fixed.</p>
    </div>
  );
}
