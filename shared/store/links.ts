// A member's named links (docs/attribution.md): `A#<acct>#LINKS#<member id>` / `<slug>`, listed newest first
// through GSI1 (`A#<acct>#MEMBER#<member id>#LINKS`, `<created ms>#<slug>`).
//
// The slug is unique per member because it is the sort key (a Put under `attribute_not_exists`). At most
// MAX_NAMED_LINKS per member: the member item's `named_links` changes in the same transaction under the
// condition `named_links < 20`, so concurrent creations never pass the limit, and it is the list's exact
// count. The same condition requires the member to exist, so a deleted member gets no new link; the links
// of a deleted member stay in their partition, reached by nothing (every read goes through the member).
//
// Round trips: create 1 TransactWriteItems; list 1 Query beside 1 GetItem (the member); delete 1
// TransactWriteItems.
import { NotFoundError, ValidationError } from '../domain/errors';
import { isEntityId } from '../domain/ids';
import { generatedSlug, isSub, MAX_NAMED_LINKS } from '../domain/links';
import { tableName } from './client';
import { ConditionsFailedError, getItem, transact } from './ops';
import { queryPage, type PageRequest } from './pagination';
import { toMember } from './members';
import type { Member } from '../domain/models';
import { GSI1, keys, linkKeys, timeKey } from './table';

export interface MemberLink {
  slug: string;
  destination_path: string | null;
  created_at: number;
}

export function toLink(item: Record<string, unknown> | undefined): MemberLink | null {
  if (item?.type !== 'MemberLink') return null;
  return {
    slug: String(item.sk),
    destination_path: typeof item.destination_path === 'string' ? item.destination_path : null,
    created_at: Number(item.created_at),
  };
}

export const slugTaken = (slug: string) =>
  ValidationError.field('slug', `The slug ${slug} is already used by another of this member's links.`);
export const tooManyLinks = () =>
  ValidationError.field('non_field_errors', `A member has at most ${MAX_NAMED_LINKS} named links; delete one first.`);

/** The member (for the list's count and the links' URLs); 404 for an unknown or deleted one. */
export async function linkOwner(accountId: string, memberId: string): Promise<Member> {
  if (!isEntityId(memberId)) throw new NotFoundError();
  const member = toMember(await getItem(keys.member(accountId, memberId)));
  if (!member) throw new NotFoundError();
  return member;
}

/**
 * Creates a named link. Without a slug one is generated (and generated again on the rare collision).
 * 400 `{"slug": [...]}` when the member has that slug already; 400 when the member has 20 links; 404 for an
 * unknown member.
 */
export async function createLink(
  accountId: string,
  memberId: string,
  input: { slug: string | null; destination_path: string | null },
): Promise<MemberLink> {
  if (!isEntityId(memberId)) throw new NotFoundError();
  for (let attempt = 0; ; attempt++) {
    const slug = input.slug ?? generatedSlug();
    const createdMs = Date.now();
    const link: MemberLink = { slug, destination_path: input.destination_path, created_at: Math.floor(createdMs / 1000) };
    try {
      await transact([
        {
          Update: {
            TableName: tableName(),
            Key: keys.member(accountId, memberId),
            UpdateExpression: 'ADD named_links :one',
            ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(named_links) OR named_links < :max)',
            ExpressionAttributeValues: { ':one': 1, ':max': MAX_NAMED_LINKS },
          },
        },
        {
          Put: {
            TableName: tableName(),
            Item: {
              ...linkKeys.memberLink(accountId, memberId, slug),
              type: 'MemberLink',
              member_id: memberId,
              destination_path: link.destination_path,
              created_at: link.created_at,
              gsi1pk: linkKeys.memberLinks(accountId, memberId),
              gsi1sk: `${timeKey(createdMs)}#${slug}`,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ]);
      return link;
    } catch (err) {
      if (!(err instanceof ConditionsFailedError)) throw err;
      if (err.failed(1)) {
        if (input.slug !== null) throw slugTaken(slug);
        if (attempt < 5) continue;
      }
      if (err.failed(0)) {
        // Gone, or at the limit: which one is told by reading it (only on this refusal).
        if (!toMember(await getItem(keys.member(accountId, memberId)))) throw new NotFoundError();
        throw tooManyLinks();
      }
      throw err;
    }
  }
}

/** A page of the member's links, newest first, with the exact count (the member's `named_links`). */
export async function listLinks(accountId: string, memberId: string, page: PageRequest) {
  if (!isEntityId(memberId)) throw new NotFoundError();
  const [result, memberItem] = await Promise.all([
    queryPage({ index: GSI1, partitionValue: linkKeys.memberLinks(accountId, memberId), scope: `${accountId}|links|${memberId}` }, page),
    getItem(keys.member(accountId, memberId)),
  ]);
  const member = toMember(memberItem);
  if (!member) throw new NotFoundError();
  const count = Math.max(0, Number(memberItem?.named_links ?? 0));
  return { ...result, member, items: result.items.map((i) => toLink(i)).filter((l): l is MemberLink => l !== null), count };
}

/** Deletes a named link; 404 for an unknown member or link. */
export async function deleteLink(accountId: string, memberId: string, slug: string): Promise<void> {
  if (!isEntityId(memberId)) throw new NotFoundError();
  if (!isSub(slug)) throw new LinkMissingError();
  try {
    await transact([
      {
        Delete: {
          TableName: tableName(),
          Key: linkKeys.memberLink(accountId, memberId, slug),
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: keys.member(accountId, memberId),
          UpdateExpression: 'ADD named_links :minus',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':minus': -1 },
        },
      },
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw err.failed(1) ? new NotFoundError() : new LinkMissingError();
    throw err;
  }
}

/** 404 for a link the (live) member does not have; a plain NotFoundError means the member is gone. */
export class LinkMissingError extends NotFoundError {}
