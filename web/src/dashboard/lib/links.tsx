// Links to the dashboard's own pages: a referral, a campaign (by name where the page knows it), an id.
export const referralHref = (id: string) => `/app/referrals/${encodeURIComponent(id)}`;
export const campaignHref = (id: string) => `/app/campaigns/${encodeURIComponent(id)}`;

export function IdLink({ href, id }: { href: string; id: string }) {
  return (
    <a href={href} class="mono-small">
      {id}
    </a>
  );
}

/** A campaign by name (linked) where the page knows the account's campaigns, else by id. */
export function CampaignRef({ id, names }: { id: string | null; names?: Map<string, string> | undefined }) {
  if (!id) return <span class="muted">None</span>;
  const name = names?.get(id);
  return (
    <a href={campaignHref(id)} class={name ? undefined : 'mono-small'} title={name ? id : undefined}>
      {name ?? id}
    </a>
  );
}
