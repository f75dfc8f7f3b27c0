// Rewards, payouts and referrals carry a member id; tables show the member's identifier instead, read once
// per member (GET /v1/members/{id}/) and kept for the session.
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';

const labels = new Map<string, string | null>();
const pending = new Map<string, Promise<string | null>>();

function memberLabel(id: string): Promise<string | null> {
  let p = pending.get(id);
  if (!p) {
    p = unwrap(api.GET('/v1/members/{id}/', { params: { path: { id } } }))
      .then((m) => m.identifier)
      // A deleted member (404) keeps showing its id.
      .catch(() => null)
      .then((label) => {
        labels.set(id, label);
        return label;
      });
    pending.set(id, p);
  }
  return p;
}

export function MemberRef({ id }: { id: string }) {
  const [label, setLabel] = useState<string | null | undefined>(labels.get(id));
  useEffect(() => {
    let live = true;
    if (!labels.has(id)) void memberLabel(id).then((l) => live && setLabel(l));
    else setLabel(labels.get(id));
    return () => {
      live = false;
    };
  }, [id]);
  return (
    <a href={`/app/members/${encodeURIComponent(id)}`} class={label ? undefined : 'mono-small'} title={label ? id : undefined}>
      {label ?? id}
    </a>
  );
}
