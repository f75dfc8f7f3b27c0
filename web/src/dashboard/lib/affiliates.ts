// The affiliate programme's resources as the dashboard reads them (docs/affiliates.md): applications, a
// member's named links, the email templates' previews, and the programme fields of the account and of a
// campaign. The pending applications count is shared by the navigation's badge and the overview's tile,
// so one request serves both and an approval or rejection refreshes both.
import { useEffect, useState } from 'preact/hooks';
import { idempotencyKey, unwrap, type ApiPaths, type Schemas } from '../../api/client';
import { api } from '../api';

export type Application = Schemas['Application'];
export type FraudFlag = Application['fraud_flags'][number];

export type Signup = Schemas['Campaign']['signup'];
export type SignupQuestion = Signup['questions'][number];

export const MAX_QUESTIONS = 10;
export const QUESTION_ID = /^[a-z0-9_]{1,30}$/;

export type AttributionModel = Schemas['Account']['attribution_model'];
export type Theme = Schemas['Account']['theme'];

/** A named link; its `url` is null while the account has no `referral_url` (Settings: where members' links point). */
export type MemberLink = Schemas['MemberLink'];

export type EmailTemplate = NonNullable<
  ApiPaths['/v1/email-templates/']['get']['responses'][200]['content']['application/json']
>['results'][number];

/** The public sign-up page of a campaign: `/join/<account slug>/<campaign slug>/` on this site. */
export const joinPageUrl = (accountSlug: string, campaignSlug: string): string =>
  `${location.origin}/join/${encodeURIComponent(accountSlug)}/${encodeURIComponent(campaignSlug)}/`;

type ListQuery = NonNullable<ApiPaths['/v1/applications/']['get']['parameters']['query']>;
const path = (id: string) => ({ path: { id }, header: { 'Idempotency-Key': idempotencyKey() } });

export const listApplications = (query: ListQuery) => unwrap(api.GET('/v1/applications/', { params: { query } }));
export const getApplication = (id: string) => unwrap(api.GET('/v1/applications/{id}/', { params: { path: { id } } }));
export const approveApplication = (id: string) => unwrap(api.POST('/v1/applications/{id}/approve/', { params: path(id) }));
export const rejectApplication = (id: string, reason: string) =>
  unwrap(api.POST('/v1/applications/{id}/reject/', { params: path(id), body: reason ? { reason } : {} }));

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
