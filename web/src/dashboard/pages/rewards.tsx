// /app/rewards - every reward across referrals, by status (`?status=`), type (`?type=`), campaign
// (`?campaign=`) or member (`?member=`; choosing a campaign leaves the member's rewards: the API takes one of
// the two), with Approve, Void and, for a reward a fraud rule holds, Release.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api';
import { unwrap, type ApiPaths } from '../../api/client';
import { PagedTable, exportHref } from '../components/paged-table';
import { MemberRef } from '../lib/members';
import { PageHeader, Section } from '../components/page';
import { oneOf, urlWith } from '../lib/url';
import { StatusFilter } from './filters';
import type { LedgerReward } from '../../api/types';
import { useCampaigns } from '../lib/campaigns';
import { rewardColumns } from '../tables/rewards';

type Query = NonNullable<ApiPaths['/v1/rewards/']['get']['parameters']['query']>;
const STATUSES = ['', 'pending', 'held', 'approved', 'paid', 'applied', 'voided'] as const;
const TYPES = ['', 'commission', 'credit'] as const;

const EMPTY: Record<(typeof STATUSES)[number], string> = {
  '': "No rewards yet. They are created when customers your members referred pay, under their campaign's terms.",
  pending: 'No pending rewards. New commissions wait here for their hold period (or for your approval on manual campaigns).',
  held: 'No held rewards. A fraud rule set to hold keeps the commissions it touches here until you release or void them (Review queue).',
  approved: 'No approved rewards waiting for a payout.',
  paid: 'No paid rewards yet. Rewards become paid when their payout is marked paid on the Payouts page.',
  applied: 'No applied credits yet.',
  voided: 'No voided rewards.',
};

export function Rewards() {
  const { path, query, route } = useLocation();
  const status = oneOf(query.status, STATUSES, '');
  const type = oneOf(query.type, TYPES, '');
  const member = query.member || undefined;
  const campaign = query.campaign || undefined;
  const { campaigns } = useCampaigns();
  const campaignNames = new Map(campaigns.map((c) => [c.id, c.name]));
  const [version, setVersion] = useState(0);

  return (
    <>
      <PageHeader
        title="Rewards"
        subtitle="Commissions and credits your members earned. Commissions are pending during their hold, then approved, then paid in a payout."
      />
      <StatusFilter
        label="Reward status"
        current={status}
        options={STATUSES.map((s) => ({ value: s, label: s === '' ? 'All' : s.charAt(0).toUpperCase() + s.slice(1) }))}
        href={(s) => urlWith(path, query, { status: s, cursor: null })}
      />
      <Section
        id="reward-list"
        title={status ? `${status.charAt(0).toUpperCase()}${status.slice(1)} rewards` : 'All rewards'}
        actions={
          <>
            {member && (
              <span class="filter-chip">
                Member <MemberRef id={member} />
                <a href={urlWith(path, query, { member: null, cursor: null })}>Show all</a>
              </span>
            )}
            <div class="inline-field">
              <label class="label-inline" for="reward-campaign-filter">
                Campaign
              </label>
              <select
                id="reward-campaign-filter"
                class="input input-small"
                value={campaign ?? ''}
                onChange={(e) => route(urlWith(path, query, { campaign: e.currentTarget.value, member: null, cursor: null }))}
              >
                <option value="">All campaigns</option>
                {campaigns.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            </div>
            <div class="inline-field">
              <label class="label-inline" for="reward-type-filter">
                Type
              </label>
              <select
                id="reward-type-filter"
                class="input input-small"
                value={type}
                onChange={(e) => route(urlWith(path, query, { type: e.currentTarget.value, cursor: null }))}
              >
                <option value="">All types</option>
                <option value="commission">Commissions</option>
                <option value="credit">Credits</option>
              </select>
            </div>
          </>
        }
      >
        <PagedTable<LedgerReward>
          label="Rewards"
          noun={['reward', 'rewards']}
          deps={[status, type, member, campaign, version]}
          load={(q) =>
            unwrap(
              api.GET('/v1/rewards/', {
                params: {
                  query: {
                    ...q,
                    status: (status || undefined) as Query['status'],
                    type: (type || undefined) as Query['type'],
                    member,
                    campaign,
                  },
                },
              }),
            )
          }
          rowKey={(r) => r.id}
          columns={rewardColumns(() => setVersion((n) => n + 1), { campaigns: campaignNames })}
          exportHref={exportHref('rewards.csv', { status: status || undefined, type: type || undefined, member, campaign })}
          empty={<p>{member || campaign || type ? 'No rewards with these filters.' : EMPTY[status]}</p>}
        />
      </Section>
    </>
  );
}
