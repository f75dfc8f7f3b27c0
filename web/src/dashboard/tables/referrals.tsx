// The referrals table (the Referrals page, a member's page), a referral's status and its reward terms.
import { Badge } from '../../ui/badge';
import { formatDate, formatMoney, formatTime } from '../../ui/format';
import type { Referral } from '../../api/types';
import type { Column } from '../components/paged-table';
import { CampaignRef, referralHref } from '../lib/links';
import { MemberRef } from '../lib/members';

export function ReferralStatus({ referral }: { referral: Referral }) {
  return referral.is_converted ? (
    <>
      <Badge status="converted" label="Converted" />
      <span class="cell-sub">{formatDate(referral.converted_at)}</span>
    </>
  ) : (
    <Badge status="pending" label="Not converted" />
  );
}

export function referralTerms(r: Referral): string {
  if (!r.reward_type) return 'No reward';
  if (r.reward_percent !== null && Number(r.reward_percent) > 0)
    return `${r.reward_type === 'credit' ? 'Credit' : 'Commission'} ${r.reward_percent}%`;
  return `${r.reward_type === 'credit' ? 'Credit' : 'Commission'} ${formatMoney(r.reward_amount, r.currency)}`;
}

export function referralColumns(opts: { member?: boolean; campaigns?: Map<string, string> } = {}): Column<Referral>[] {
  const cols: Column<Referral>[] = [
    {
      key: 'user',
      header: 'Referred user',
      cell: (r) => <a href={referralHref(r.id)}>{r.user_identifier}</a>,
    },
  ];
  if (opts.member !== false) cols.push({ key: 'member', header: 'Member', cell: (r) => <MemberRef id={r.member_id} detail /> });
  if (opts.campaigns)
    cols.push({ key: 'campaign', header: 'Campaign', cell: (r) => <CampaignRef id={r.campaign_id} names={opts.campaigns} /> });
  cols.push(
    {
      key: 'status',
      header: 'Status',
      cell: (r) => (
        <>
          <ReferralStatus referral={r} />
          {(r.fraud_flags?.length ?? 0) > 0 && (
            <span class="cell-sub is-warning">
              {r.fraud_flags.length} fraud flag{r.fraud_flags.length === 1 ? '' : 's'}
            </span>
          )}
        </>
      ),
    },
    { key: 'terms', header: 'Reward terms', cell: (r) => referralTerms(r) },
    {
      key: 'earned',
      header: 'Earned',
      numeric: true,
      cell: (r) => formatMoney(Number(r.stats.commission_earned) + Number(r.stats.credit_earned), r.stats.currency),
    },
    {
      key: 'source',
      header: 'Source',
      cell: (r) => (
        <>
          <span class="tag">{r.source}</span>
          {r.sub && <span class="cell-sub">Sub-id {r.sub}</span>}
        </>
      ),
    },
    { key: 'created', header: 'Created', cell: (r) => formatTime(r.created_at) },
  );
  return cols;
}
