// Named links of a member (docs/attribution.md), the same for the API (/v1/members/{id}/links/) and the
// portal (/portal/v1/links/, the session's member): a link's view carries its URL, built from the account's
// `referral_url` (read beside the write, so a create or a list costs no extra sequential round trip).
import { DetailError, NotFoundError } from '../domain/errors';
import { namedLinkUrl } from '../domain/links';
import { PORTAL_SESSION_ENDED } from '../domain/portal';
import type { CreateLinkInput } from '../schemas/links';
import { createLink, deleteLink, LinkMissingError, linkOwner, listLinks, type MemberLink } from '../store/links';
import { getItem } from '../store/ops';
import type { PortalSession } from '../store/portal';
import { keys } from '../store/table';

export function linkView(link: MemberLink, referralUrl: string | null, code: string) {
  return {
    slug: link.slug,
    destination_path: link.destination_path,
    url: namedLinkUrl(referralUrl, code, link.slug, link.destination_path),
    created_at: link.created_at,
  };
}

async function referralUrlOf(accountId: string): Promise<string | null> {
  const account = await getItem(keys.account(accountId), false);
  return typeof account?.referral_url === 'string' && account.referral_url !== '' ? account.referral_url : null;
}

type Page = { pageSize: number; cursor?: string | undefined };

export async function createMemberLink(accountId: string, memberId: string, input: CreateLinkInput) {
  // The member is read beside the write (its code goes into the URL); the write's own condition is what
  // refuses an unknown or deleted member.
  const [link, member, referralUrl] = await Promise.all([
    createLink(accountId, memberId, input),
    linkOwner(accountId, memberId),
    referralUrlOf(accountId),
  ]);
  return linkView(link, referralUrl, member.code);
}

export async function listMemberLinks(accountId: string, memberId: string, page: Page) {
  const [result, referralUrl] = await Promise.all([listLinks(accountId, memberId, page), referralUrlOf(accountId)]);
  return { ...result, results: result.items.map((l) => linkView(l, referralUrl, result.member.code)) };
}

export async function deleteMemberLink(accountId: string, memberId: string, slug: string): Promise<void> {
  await deleteLink(accountId, memberId, slug);
}

/** A member deleted since the portal session opened ends it (401), as the portal's other reads do. */
async function asPortal<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof NotFoundError && !(err instanceof LinkMissingError)) {
      throw new DetailError(401, PORTAL_SESSION_ENDED, { 'WWW-Authenticate': 'Bearer' });
    }
    throw err;
  }
}

export const portalLinks = (session: PortalSession, page: Page) =>
  asPortal(() => listMemberLinks(session.accountId, session.memberId, page));

export const createPortalLink = (session: PortalSession, input: CreateLinkInput) =>
  asPortal(() => createMemberLink(session.accountId, session.memberId, input));

/** DELETE /portal/v1/links/{slug}/: 404 for a slug the member does not have. */
export const deletePortalLink = (session: PortalSession, slug: string) =>
  asPortal(() => deleteLink(session.accountId, session.memberId, slug));
