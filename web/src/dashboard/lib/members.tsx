// Rewards, payouts and referrals carry a member id; tables show the member instead (identifier, with their
// name or email under it), read once per member (GET /v1/members/{id}/) and kept for the session.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { unwrap } from '../../api/client';
import type { RailKind } from './rails';

/** What a table shows of a member; null for a member that is gone (404). */
export interface MemberInfo {
  identifier: string;
  name: string | null;
  email: string;
  payout_email: string | null;
  /** The member's payout method and whether a rail batch would pay them now (and why not). */
  payout_method: RailKind | null;
  payout_method_ready: boolean;
  payout_method_reason: string | null;
}

const known = new Map<string, MemberInfo | null>();
const pending = new Map<string, Promise<MemberInfo | null>>();

/** The member's info, read once per session; `fresh` reads it again (a payout method's readiness changes). */
export function memberInfo(id: string, fresh = false): Promise<MemberInfo | null> {
  let p = fresh ? undefined : pending.get(id);
  if (!p) {
    p = unwrap(api.GET('/v1/members/{id}/', { params: { path: { id } } }))
      .then(
        (m): MemberInfo => ({
          identifier: m.identifier,
          name: [m.first_name, m.last_name].filter(Boolean).join(' ') || null,
          email: m.email,
          payout_email: m.payout_email ?? null,
          payout_method: m.payout_method ?? null,
          payout_method_ready: m.payout_method_ready ?? false,
          payout_method_reason: m.payout_method_reason ?? null,
        }),
      )
      // A deleted member (404) keeps showing its id.
      .catch(() => null)
      .then((info) => {
        known.set(id, info);
        return info;
      });
    pending.set(id, p);
  }
  return p;
}

/** The member's info once loaded (undefined while loading, null when gone). */
export function useMemberInfo(id: string): MemberInfo | null | undefined {
  const [info, setInfo] = useState<MemberInfo | null | undefined>(known.get(id));
  useEffect(() => {
    let live = true;
    if (!known.has(id)) void memberInfo(id).then((i) => live && setInfo(i));
    else setInfo(known.get(id));
    return () => {
      live = false;
    };
  }, [id]);
  return info;
}

/** A link to the member, named by identifier; `detail` adds their name (or email) under it, for tables. */
export function MemberRef({ id, detail = false }: { id: string; detail?: boolean }) {
  const info = useMemberInfo(id);
  return (
    <>
      <a href={`/app/members/${encodeURIComponent(id)}`} class={info ? undefined : 'mono-small'} title={info ? id : undefined}>
        {info?.identifier ?? id}
      </a>
      {detail && info && <span class="cell-sub">{info.name ?? info.email}</span>}
    </>
  );
}
