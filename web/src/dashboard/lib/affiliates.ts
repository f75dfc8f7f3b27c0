// The affiliate programme's resources as the dashboard reads them (docs/affiliates.md): applications, a
// member's named links, the email templates' previews, and the programme fields of the account and of a
// campaign. The pending applications count is shared by the navigation's badge and the overview's tile,
// so one request serves both and an approval or rejection refreshes both.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, idempotencyKey, problemOf, unwrap, type ApiPaths, type Page, type Schemas } from '../../api/client';
import { api, loginUrl } from '../api';

export type ApplicationStatus = 'pending' | 'approved' | 'rejected';
export const APPLICATION_STATUSES: readonly ApplicationStatus[] = ['pending', 'approved', 'rejected'];

export interface FraudFlag {
  rule: string;
  at?: number;
  detail?: string;
  status?: string;
}

export interface Application {
  id: string;
  campaign_id: string;
  email: string;
  name: string;
  country: string;
  payout_email: string | null;
  answers: Record<string, string>;
  status: ApplicationStatus;
  member_id: string | null;
  created_at: number;
  decided_at: number | null;
  reason: string | null;
  fraud_flags: FraudFlag[];
}

export interface SignupQuestion {
  id: string;
  label: string;
  type: 'text' | 'url' | 'choice';
  required: boolean;
  options: string[] | null;
}

export interface Signup {
  enabled: boolean;
  approval: 'auto' | 'manual';
  terms_url: string | null;
  questions: SignupQuestion[];
}

export const SIGNUP_CLOSED: Signup = { enabled: false, approval: 'manual', terms_url: null, questions: [] };
export const MAX_QUESTIONS = 10;
export const QUESTION_ID = /^[a-z0-9_]{1,30}$/;

/** A campaign's programme fields (absent on a server without them: closed, no slug). */
export interface CampaignProgramme {
  slug?: string | null;
  signup?: Signup;
}

export type AttributionModel = 'first_click' | 'last_click';

export interface Theme {
  accent?: string;
  background?: string;
  text?: string;
  radius?: string;
  font?: string;
}

/** The account's programme fields (GET/PATCH /v1/account/). */
export interface AccountProgramme {
  slug?: string | null;
  attribution_model?: AttributionModel;
  attribution_days?: number;
  tax_details_required?: boolean;
  affiliate_emails?: { new_referral: boolean; monthly_summary: boolean };
  theme?: Theme;
}

/** A named link; its `url` is null while the account has no `referral_url` (Settings: where members' links point). */
export type MemberLink = Schemas['MemberLink'];

export type EmailTemplate = NonNullable<
  ApiPaths['/v1/email-templates/']['get']['responses'][200]['content']['application/json']
>['results'][number];

/** A referral's, click's or conversion's sub-id (the named link it came through); null without one. */
export const subOf = (row: object): string | null => {
  const sub = (row as { sub?: unknown }).sub;
  return typeof sub === 'string' && sub !== '' ? sub : null;
};

/** The public sign-up page of a campaign: `/join/<account slug>/<campaign slug>/` on this site. */
export const joinPageUrl = (accountSlug: string, campaignSlug: string): string =>
  `${location.origin}/join/${encodeURIComponent(accountSlug)}/${encodeURIComponent(campaignSlug)}/`;

/**
 * A call to an endpoint of the programme: same origin, the session cookie, an Idempotency-Key on writes,
 * a 401 to the login page (as dashboard/api.ts does), an error body as an ApiError the forms show.
 */
export async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(method === 'GET' ? {} : { 'Idempotency-Key': idempotencyKey() }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(problemOf(null, 0));
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (res.status === 401) location.assign(loginUrl());
  if (!res.ok) throw new ApiError(problemOf(parsed, res.status));
  return parsed as T;
}

const query = (params: Record<string, string | number | undefined>): string => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

export const listApplications = (params: { status?: string; campaign?: string; cursor?: string; page_size?: number }) =>
  call<Page<Application>>('GET', `/v1/applications/${query(params)}`);
export const getApplication = (id: string) => call<Application>('GET', `/v1/applications/${encodeURIComponent(id)}/`);
export const approveApplication = (id: string) => call<Application>('POST', `/v1/applications/${encodeURIComponent(id)}/approve/`, {});
export const rejectApplication = (id: string, reason: string) =>
  call<Application>('POST', `/v1/applications/${encodeURIComponent(id)}/reject/`, reason ? { reason } : {});

/** A member's named links: at most 20, so one page holds them all. */
export const listLinks = (memberId: string): Promise<MemberLink[]> =>
  unwrap(api.GET('/v1/members/{id}/links/', { params: { path: { id: memberId }, query: { page_size: 20 } } })).then((p) => p.results);
export const createLink = (memberId: string, body: { slug?: string; destination_path?: string }) =>
  unwrap(
    api.POST('/v1/members/{id}/links/', { params: { path: { id: memberId }, header: { 'Idempotency-Key': idempotencyKey() } }, body }),
  );
export const deleteLink = (memberId: string, slug: string) =>
  unwrap(api.DELETE('/v1/members/{id}/links/{slug}/', { params: { path: { id: memberId, slug } } }));

export const listEmailTemplates = (): Promise<EmailTemplate[]> => unwrap(api.GET('/v1/email-templates/')).then((b) => b.results);

// ---- the pending applications count (the navigation's badge, the overview's tile) ----

let pending: number | null = null;
let inFlight: Promise<void> | null = null;
const listeners = new Set<(n: number | null) => void>();

/** Reads the count again (GET /v1/applications/?status=pending&page_size=1); null when it cannot be read. */
export function refreshPendingCount(): Promise<void> {
  inFlight ??= listApplications({ status: 'pending', page_size: 1 })
    .then((page) => {
      pending = page.count;
    })
    .catch(() => {
      pending = null;
    })
    .finally(() => {
      inFlight = null;
      for (const l of listeners) l(pending);
    });
  return inFlight;
}

/** The count a page just read (the Applications page's Pending tab, unfiltered): no request. */
export function setPendingCount(n: number): void {
  pending = n;
  for (const l of listeners) l(pending);
}

/** The number of applications waiting for a decision; null while loading or when it cannot be read. */
export function usePendingApplications(): number | null {
  const [count, setCount] = useState<number | null>(pending);
  useEffect(() => {
    listeners.add(setCount);
    if (pending === null && !inFlight) void refreshPendingCount();
    else setCount(pending);
    return () => {
      listeners.delete(setCount);
    };
  }, []);
  return count;
}
