// The top of the member's page: their link (or code), the campaign's terms, and their figures with the
// monthly chart.
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { formatCount, formatMoney } from '../ui/format';
import { errorCode, getStats, toProblem, type Me, type Problem, type Stats } from './api';
import { BarChart } from './chart';
import { post } from './host';

async function writeClipboard(text: string, input: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Framed without clipboard-write, or an older browser: the selection and the legacy command.
    if (!input) return false;
    input.focus();
    input.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}

/**
 * A read-only value with a Copy button that says what happened, also to screen readers (a status line).
 * (ui/copy.tsx's CopyButton has no announcement and is a small secondary button; this one is the
 * page's main action.)
 */
export function CopyField({ label, value, what, testId }: { label: string; value: string; what: string; testId: string }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<number>(0);
  return (
    <div class="copy-field">
      <label class="label" for={id}>
        {label}
      </label>
      <div class="copy-row">
        <input
          ref={input}
          id={id}
          class="input copy-input"
          readOnly
          value={value}
          data-testid={testId}
          onFocus={(e) => e.currentTarget.select()}
          spellcheck={false}
        />
        <button
          type="button"
          class="btn btn-primary copy-button"
          onClick={async () => {
            const ok = await writeClipboard(value, input.current);
            setState(ok ? 'copied' : 'failed');
            window.clearTimeout(timer.current);
            timer.current = window.setTimeout(() => setState('idle'), 2500);
          }}
        >
          <svg class="icon" viewBox="0 0 20 20" width="16" height="16" aria-hidden="true">
            {state === 'copied' ? (
              <path d="M7.6 13.2 4.4 10l-1.4 1.4 4.6 4.6 9.4-9.4L15.6 5z" fill="currentColor" />
            ) : (
              <path
                d="M7 2h9a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2h-1v-2h1V4H7v1H5V4a2 2 0 0 1 2-2zM4 7h9a2 2 0 0 1 2 2v7a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V9a2 2 0 0 1 2-2zm0 2v7h9V9z"
                fill="currentColor"
              />
            )}
          </svg>
          {state === 'copied' ? 'Copied' : 'Copy'}
          <span class="sr-only"> {what}</span>
        </button>
      </div>
      <p class={state === 'failed' ? 'hint is-warning' : 'sr-only'} role="status">
        {state === 'copied'
          ? `Your ${what} is copied.`
          : state === 'failed'
            ? 'Copying is not available here: the text is selected, copy it with your keyboard.'
            : ''}
      </p>
    </div>
  );
}

export function Share({ me }: { me: Me }) {
  const { link, code } = me.member;
  return (
    <section id="share" class="card card-share" aria-labelledby="share-title">
      <h2 id="share-title">{link ? 'Share your link' : 'Share your code'}</h2>
      {link ? (
        <>
          <p class="card-text">When someone signs up through your link and becomes a paying customer, you earn a reward.</p>
          <CopyField label="Your referral link" value={link} what="referral link" testId="share-link" />
          <p class="hint code-line">
            Your code: <span class="code">{code}</span>
          </p>
        </>
      ) : (
        <>
          <p class="card-text">Share your code: friends enter it when they sign up, and you earn a reward once they pay.</p>
          <CopyField label="Your referral code" value={code} what="referral code" testId="share-code" />
        </>
      )}
    </section>
  );
}

const percentFormat = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 2 });

/** The reward in a few words, for the headline: "€10.00 credit", "20% commission". */
function rewardHeadline(c: NonNullable<Me['campaign']>): string | null {
  if (c.reward_type === null) return null;
  if (c.reward_percent !== null) return `${percentFormat.format(Number(c.reward_percent) / 100)} commission`;
  if (c.reward_amount === null) return null;
  return `${formatMoney(c.reward_amount, c.currency)} ${c.reward_type === 'credit' ? 'credit' : 'commission'}`;
}

export function Terms({ me }: { me: Me }) {
  const c = me.campaign;
  const headline = c ? rewardHeadline(c) : null;
  // The API words the terms (percentages included) and the friend's discount apart; the discount has its own line.
  const discount = c?.referred_discount ?? null;
  const description = c?.description ?? '';
  return (
    <section id="terms" class="card card-terms" aria-labelledby="terms-title">
      <h2 id="terms-title">How you earn</h2>
      {c ? (
        <>
          {headline && (
            <p class="reward-headline">
              <span class="reward-label">You earn</span> <span class="reward-value">{headline}</span>
            </p>
          )}
          <p class="card-text">{description}</p>
          {discount && (
            <p class="discount">
              <svg class="icon" viewBox="0 0 20 20" width="16" height="16" aria-hidden="true">
                <path d="M10 2 2 10l8 8 8-8V2zm4 3a1.5 1.5 0 1 1 0 3 1.5 1.5 0 0 1 0-3z" fill="currentColor" />
              </svg>
              <span>Your friends get {discount}.</span>
            </p>
          )}
        </>
      ) : (
        <p class="card-text muted">
          There is no reward attached to your link at the moment. People who sign up through it are still counted here.
        </p>
      )}
    </section>
  );
}

/** Which earnings the programme pays: the campaign's type, else what the member has earned. */
function rewardKind(me: Me): 'credit' | 'commission' {
  const type = me.campaign?.reward_type;
  if (type) return type;
  return Number(me.stats.commission_earned) > 0 ? 'commission' : 'credit';
}

export function StatsSection({ me, sub = null, onSub }: { me: Me; sub?: string | null; onSub?: (sub: string | null) => void }) {
  const { stats } = me;
  const kind = rewardKind(me);
  const money = (v: string) => formatMoney(v, stats.currency);
  const [series, setSeries] = useState<Stats | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    setProblem(null);
    setSeries(null);
    getStats(sub).then(setSeries, (err: unknown) => {
      const p = toProblem(err);
      if (p.status === 401) return;
      setProblem(p);
      post({ type: 'error', code: errorCode(p), message: p.message ?? '' });
    });
  }, [attempt, sub]);

  return (
    <section id="stats" class="section" aria-labelledby="stats-title">
      <h2 id="stats-title" class="section-title">
        Your results
      </h2>
      <dl class="tiles">
        <Tile label="Clicks" value={formatCount(stats.link_clicks)} note="Visits through your link" />
        <Tile label="Referrals" value={formatCount(stats.referrals)} note="People who signed up" />
        <Tile label="Conversions" value={formatCount(stats.conversions)} note="Became paying customers" />
        <Tile
          label={kind === 'credit' ? 'Credit earned' : 'Earned'}
          value={money(kind === 'credit' ? stats.credit_earned : stats.commission_earned)}
          note="All time"
          accent
        />
      </dl>
      {kind === 'commission' && (
        <dl class="tiles tiles-small">
          <Tile label="Pending" value={money(stats.commission_pending)} note="Waiting for approval" />
          <Tile label="Approved" value={money(stats.commission_approved)} note="To be paid out" />
          <Tile label="Paid" value={money(stats.commission_paid)} note="Sent to you" />
        </dl>
      )}
      {sub && (
        <div class="sub-filter" data-testid="stats-sub">
          <p>
            The chart shows the link <span class="code">{sub}</span> only; the totals above are for all your links.
          </p>
          <button type="button" class="btn btn-secondary btn-small" onClick={() => onSub?.(null)}>
            Show all links
          </button>
        </div>
      )}
      <div class="card card-chart">
        {problem ? (
          <div class="notice notice-error" role="alert">
            <p>The chart could not be loaded: {problem.message}</p>
            <button type="button" class="btn btn-secondary btn-small" onClick={() => setAttempt((n) => n + 1)}>
              Try again
            </button>
          </div>
        ) : series ? (
          <BarChart stats={series} />
        ) : (
          <p class="loading" role="status">
            <span class="spinner" aria-hidden="true" />
            Loading the chart…
          </p>
        )}
      </div>
    </section>
  );
}

function Tile({ label, value, note, accent }: { label: string; value: string; note?: string; accent?: boolean }) {
  return (
    <div class={accent ? 'tile tile-accent' : 'tile'}>
      <dt class="tile-label">{label}</dt>
      <dd class="tile-value">{value}</dd>
      {note && <dd class="tile-note">{note}</dd>}
    </div>
  );
}
