// The fraud rules as the dashboard reads them (docs/fraud.md): each rule's name and thresholds in words,
// the review queue's calls, and the count of open flags that the navigation's badge, the overview's alert
// and the queue share (one request serves all three; every action on a flag refreshes it).
import { useEffect, useState } from 'preact/hooks';
import { idempotencyKey, unwrap, type ApiPaths, type Schemas } from '../../api/client';
import { api } from '../api';

export type FraudFlagRecord = Schemas['FraudFlag'];
export type FraudRules = Schemas['FraudRules'];
export type FraudPreview = Schemas['FraudPreview'];
export type FraudRule = FraudFlagRecord['rule'];
export type FraudAction = FraudRules['self_referral']['action'];
export type FlagStatus = FraudFlagRecord['status'];

export const RULES: readonly FraudRule[] = ['self_referral', 'duplicate_ip', 'disposable_email', 'click_spam', 'refund_rate', 'velocity'];
export const FLAG_STATUSES: readonly FlagStatus[] = ['open', 'released', 'voided', 'reviewed'];

/** A rule's name and what it looks for, in words. */
export const RULE_WORDS: Record<FraudRule, { name: string; about: string }> = {
  self_referral: {
    name: 'Self-referral',
    about: 'The referred customer is the member: the same email, payment card or customer account at the provider.',
  },
  duplicate_ip: {
    name: 'One network',
    about: "Many of a member's referrals or applications come from one network address in a short time.",
  },
  disposable_email: {
    name: 'Disposable email',
    about: 'A referral or an application uses a throwaway email domain.',
  },
  click_spam: {
    name: 'Click spam',
    about: "A member's link gets a great many clicks for each conversion.",
  },
  refund_rate: {
    name: 'Refund rate',
    about: "Too many of a member's converted referrals are refunded.",
  },
  velocity: {
    name: 'Sudden spike',
    about: "A member's conversions in one day jump far above their daily mean.",
  },
};

export const ruleName = (rule: string): string => RULE_WORDS[rule as FraudRule]?.name ?? rule.replace(/_/g, ' ');

/** Each threshold's label and the unit read after its field. */
export const THRESHOLD_WORDS: Record<string, { label: string; unit?: string }> = {
  max_referrals: { label: 'More than', unit: 'referrals or applications' },
  window_hours: { label: 'Within', unit: 'hours' },
  ratio: { label: 'Clicks per conversion over', unit: 'to 1' },
  min_clicks: { label: 'With at least', unit: 'clicks' },
  window_days: { label: 'Over', unit: 'days' },
  max_percent: { label: 'Refunded over', unit: '%' },
  min_conversions: { label: 'With at least', unit: 'conversions' },
  multiple: { label: "A day's conversions over", unit: 'times the daily mean' },
  mean_days: { label: 'Daily mean over', unit: 'days' },
  history_days: { label: 'With at least', unit: 'days of history' },
};

/** The thresholds a rule takes (every key of its settings but `action`), in the API's order. */
export const thresholdsOf = (settings: Record<string, unknown>): string[] => Object.keys(settings).filter((k) => k !== 'action');

export const ACTION_WORDS: Record<FraudAction, { label: string; hint: string }> = {
  off: { label: 'Off', hint: 'The rule does not run.' },
  flag: { label: 'Flag', hint: 'What it finds waits in the review queue; rewards are paid as usual.' },
  hold: { label: 'Hold', hint: 'What it finds waits in the review queue, and the commissions it touches are held until you release them.' },
};

/** A figure's name in words (`clicks`, `refund_percent` -> "refund percent"). */
export const figureName = (name: string): string => name.replace(/_/g, ' ');

const relative = (() => {
  try {
    return new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  } catch {
    return null;
  }
})();

/** "3 hours ago", "yesterday"; '' where the browser has no relative format. */
export function ago(unix: number, now = Date.now() / 1000): string {
  if (!relative) return '';
  const s = Math.round(unix - now);
  const abs = Math.abs(s);
  if (abs < 60) return relative.format(s, 'second');
  if (abs < 3600) return relative.format(Math.round(s / 60), 'minute');
  if (abs < 86_400) return relative.format(Math.round(s / 3600), 'hour');
  if (abs < 30 * 86_400) return relative.format(Math.round(s / 86_400), 'day');
  return relative.format(Math.round(s / (30 * 86_400)), 'month');
}

// ---- calls ----

type ListQuery = NonNullable<ApiPaths['/v1/fraud-flags/']['get']['parameters']['query']>;
const write = (id: string) => ({ path: { id }, header: { 'Idempotency-Key': idempotencyKey() } });

export const listFlags = (query: ListQuery) => unwrap(api.GET('/v1/fraud-flags/', { params: { query } }));
export const getRules = () => unwrap(api.GET('/v1/fraud-rules/'));

export type RulesPatch = NonNullable<ApiPaths['/v1/fraud-rules/']['patch']['requestBody']>['content']['application/json'];
export const saveRules = (body: RulesPatch) => unwrap(api.PATCH('/v1/fraud-rules/', { body }));

export type PreviewBody = ApiPaths['/v1/fraud-rules/preview/']['post']['requestBody']['content']['application/json'];
export const previewRule = (body: PreviewBody) => unwrap(api.POST('/v1/fraud-rules/preview/', { body }));

export type FlagAction = 'release' | 'void' | 'review';
export function resolveFlag(id: string, action: FlagAction, note: string | null): Promise<FraudFlagRecord> {
  const init = { params: write(id), body: { note } };
  if (action === 'release') return unwrap(api.POST('/v1/fraud-flags/{id}/release/', init));
  if (action === 'void') return unwrap(api.POST('/v1/fraud-flags/{id}/void/', init));
  return unwrap(api.POST('/v1/fraud-flags/{id}/review/', init));
}

export const releaseReward = (id: string) => unwrap(api.POST('/v1/rewards/{id}/release/', { params: write(id) }));

// ---- the open flags count (the navigation's badge, the overview's alert) ----

let open: number | null = null;
let inFlight: Promise<void> | null = null;
const listeners = new Set<(n: number | null) => void>();

function tell(): void {
  for (const l of listeners) l(open);
}

/** Reads the count again (GET /v1/fraud-flags/?status=open&page_size=1); null when it cannot be read. */
export function refreshOpenFlags(): Promise<void> {
  inFlight ??= listFlags({ status: 'open', page_size: 1 })
    .then((page) => {
      open = page.count;
    })
    .catch(() => {
      open = null;
    })
    .finally(() => {
      inFlight = null;
      tell();
    });
  return inFlight;
}

/** The count a page just read (the queue's Open tab, unfiltered): no request. */
export function setOpenFlags(n: number): void {
  open = n;
  tell();
}

/** The number of flags waiting for an operator; null while loading or when it cannot be read. */
export function useOpenFlags(): number | null {
  const [count, setCount] = useState<number | null>(open);
  useEffect(() => {
    listeners.add(setCount);
    if (open === null && !inFlight) void refreshOpenFlags();
    else setCount(open);
    return () => {
      listeners.delete(setCount);
    };
  }, []);
  return count;
}
