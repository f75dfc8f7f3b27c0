// Status words as badges: the word itself is the information (colour only supports it).
const TONES: Record<string, 'green' | 'blue' | 'amber' | 'red' | 'grey' | 'violet'> = {
  // rewards
  pending: 'amber',
  approved: 'blue',
  paid: 'green',
  applied: 'green',
  voided: 'grey',
  held: 'red',
  // payouts
  open: 'grey',
  due: 'amber',
  processing: 'blue',
  failed: 'red',
  canceled: 'grey',
  // subscriptions
  active: 'green',
  trialling: 'blue',
  trialing: 'blue',
  past_due: 'red',
  deleted: 'grey',
  paused: 'amber',
  // webhook deliveries and endpoints
  retrying: 'amber',
  succeeded: 'green',
  cancelled: 'grey',
  enabled: 'green',
  disabled: 'grey',
  // referrals
  converted: 'green',
  // roles
  owner: 'violet',
  admin: 'blue',
  finance: 'amber',
  viewer: 'grey',
};

export function Badge({ status, label }: { status: string; label?: string }) {
  const tone = TONES[status] ?? 'grey';
  const text = label ?? status.replace(/_/g, ' ');
  return <span class={`badge badge-${tone}`}>{text.charAt(0).toUpperCase() + text.slice(1)}</span>;
}
