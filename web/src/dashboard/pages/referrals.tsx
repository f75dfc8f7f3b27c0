// /app/referrals (list, filter by member and by one of its sub-ids, create with `source: "app"`) and /app/referrals/:id (conversion
// status, the terms copied from the campaign, rewards, delete).
import { FraudFlagsSection } from '../components/fraud-flags';
import { useLocation, useRoute } from 'preact-iso';
import { api } from '../api';
import { idempotencyKey, unwrap } from '../../api/client';
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { Field, Form, SubmitButton, text, useFormState } from '../../ui/form';
import { PagedTable, SearchBox, exportHref, useTableReload } from '../components/paged-table';
import { Details, LoadState, PageHeader, Section, useLoad } from '../components/page';
import { useToast } from '../../ui/toast';
import { useDeleteFlow } from '../lib/actions';
import { formatMoney, formatTime } from '../../ui/format';
import { useCan } from '../lib/session';
import { MemberRef } from '../lib/members';
import { urlWith } from '../lib/url';
import type { Referral } from '../../api/types';
import { useCampaigns } from '../lib/campaigns';
import { campaignHref } from '../lib/links';
import { ReferralStatus, referralColumns, referralTerms } from '../tables/referrals';
import { RewardStatus } from '../tables/rewards';

function CreateReferral({ onCreated }: { onCreated: (r: Referral, existed: boolean) => void }) {
  const form = useFormState();
  return (
    <Section
      id="new-referral"
      title="Record a referral"
      description="For a signup you know was referred (e.g. told by support). Your app does this with POST /v1/referrals/; the script does it in the browser."
    >
      <Form
        form={form}
        labelledBy="new-referral-title"
        onSubmit={async (data, el) => {
          // `source: "app"` marks referrals created in the dashboard (the API ignores it from other callers).
          const body = { user_identifier: text(data, 'user_identifier'), member_code: text(data, 'member_code'), source: 'app' as const };
          const referral = await unwrap(api.POST('/v1/referrals/', { params: { header: { 'Idempotency-Key': idempotencyKey() } }, body }));
          el.reset();
          // The same user and code again answers the existing referral (nothing created).
          onCreated(referral, referral.created_at < Date.now() / 1000 - 60);
        }}
      >
        <div class="form-grid">
          <Field
            name="user_identifier"
            label="Referred user"
            hint="Your app's id for the user who signed up."
            required
            autoComplete="off"
            spellcheck={false}
          />
          <Field
            name="member_code"
            label="Member's referral code"
            hint="The code of the member who referred them (see Members)."
            required
            autoComplete="off"
            spellcheck={false}
          />
        </div>
        <div class="form-actions">
          <SubmitButton form={form} busyLabel="Creating…">
            Create referral
          </SubmitButton>
        </div>
      </Form>
    </Section>
  );
}

export function Referrals() {
  const { path, query } = useLocation();
  const canManage = useCan('manage');
  const notify = useToast();
  const { version, reloadFromStart } = useTableReload();
  const member = query.member || undefined;
  // A sub-id narrows one member's referrals (the API takes it only with `member`).
  const sub = (member && query.sub) || undefined;
  const search = query.search || undefined;
  const { campaigns } = useCampaigns();
  const campaignNames = new Map(campaigns.map((c) => [c.id, c.name]));

  return (
    <>
      <PageHeader title="Referrals" subtitle="Users referred by your members, and whether they became paying customers." />
      {canManage && (
        <CreateReferral
          onCreated={(r, existed) => {
            notify(existed ? `${r.user_identifier} was already referred by this member.` : `Referral of ${r.user_identifier} created.`);
            reloadFromStart();
          }}
        />
      )}
      <Section
        id="referral-list"
        title={member ? 'Referrals by one member' : 'All referrals'}
        actions={
          <>
            <SearchBox
              id="referral-search"
              label="Find"
              placeholder="Referred user's identifier"
              hint="The exact identifier of the referred user in your app"
            />
            {member && (
              <span class="filter-chip">
                Member <MemberRef id={member} />
                <a href={urlWith(path, query, { member: null, sub: null, cursor: null })}>Show all</a>
              </span>
            )}
            {sub && (
              <span class="filter-chip">
                Sub-id <code>{sub}</code>
                <a href={urlWith(path, query, { sub: null, cursor: null })}>All of the member's</a>
              </span>
            )}
          </>
        }
      >
        <PagedTable<Referral>
          label="Referrals"
          noun={['referral', 'referrals']}
          deps={[member, sub, search, version]}
          load={(q) => unwrap(api.GET('/v1/referrals/', { params: { query: { ...q, member, sub, search } } }))}
          rowKey={(r) => r.id}
          columns={referralColumns({ campaigns: campaignNames })}
          exportHref={search ? undefined : exportHref('referrals.csv', { member, sub })}
          empty={
            search ? (
              <p>
                No referral of the user “{search}”{member ? ' by this member' : ''}. Search matches the whole identifier, as your app sent
                it.
              </p>
            ) : sub ? (
              <p>No referrals through this link yet.</p>
            ) : member ? (
              <p>This member has no referrals yet.</p>
            ) : (
              <p>
                No referrals yet. Add the script tag from Settings to your site, call POST /v1/referrals/ from your app, or record one with
                the form above.
              </p>
            )
          }
        />
      </Section>
    </>
  );
}

export function ReferralDetail() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const canManage = useCan('manage');
  const loaded = useLoad(() => unwrap(api.GET('/v1/referrals/{id}/', { params: { path: { id } } })), [id]);
  const referral = loaded.data;
  const { campaigns } = useCampaigns();
  const campaignName = (cid: string) => campaigns.find((c) => c.id === cid)?.name ?? cid;

  const { deleting, remove } = useDeleteFlow(
    referral && {
      confirm: {
        title: `Delete the referral of ${referral.user_identifier}?`,
        body: <p>The member's statistics drop accordingly and the user can be referred again. This cannot be undone.</p>,
        confirmLabel: 'Delete referral',
        danger: true,
      },
      remove: () =>
        unwrap(
          api.DELETE('/v1/referrals/{id}/', { params: { path: { id: referral.id }, header: { 'Idempotency-Key': idempotencyKey() } } }),
        ),
      done: `Referral of ${referral.user_identifier} deleted.`,
      failed: 'The referral could not be deleted.',
      back: '/app/referrals',
    },
  );

  return (
    <>
      <PageHeader
        title={referral ? `Referral of ${referral.user_identifier}` : 'Referral'}
        back={{ href: '/app/referrals', label: 'Referrals' }}
      >
        {referral && canManage && (
          <BusyButton variant="danger" busy={deleting} busyLabel="Deleting…" onClick={remove}>
            Delete referral
          </BusyButton>
        )}
      </PageHeader>
      <LoadState loaded={loaded} what="the referral">
        {(r) => (
          <>
            <FraudFlagsSection flags={r.fraud_flags ?? []} member={r.member_id} what="referral" />
            <div class="grid-2">
              <Section id="referral-conversion" title="Conversion">
                <Details
                  items={[
                    ['Status', <ReferralStatus referral={r} />],
                    ['Converted', formatTime(r.converted_at)],
                    [
                      'Subscription',
                      r.subscription ? (
                        <>
                          <code>{String(r.subscription.id)}</code> <Badge status={r.subscription.status} />{' '}
                          {r.subscription.plan.descriptor ?? r.subscription.plan.name}
                        </>
                      ) : (
                        'None yet'
                      ),
                    ],
                    ['Coupon', r.coupon_code ? <code>{r.coupon_code}</code> : '—'],
                    ['Rewards completed', r.rewards_completed ? 'Yes' : 'No'],
                  ]}
                />
                {!r.is_converted && (
                  <p class="hint">
                    Your backend converts it with POST /v1/referrals/{'{id}'}/conversion/ and the checkout or subscription id; a payment
                    webhook can also convert it.
                  </p>
                )}
              </Section>
              <Section id="referral-details" title="Details">
                <Details
                  items={[
                    ['Referral id', <code>{r.id}</code>],
                    ['Member', <MemberRef id={r.member_id} />],
                    ['Campaign', r.campaign_id ? <a href={campaignHref(r.campaign_id)}>{campaignName(r.campaign_id)}</a> : 'None'],
                    ['Reward terms', referralTerms(r)],
                    ['Reward threshold', r.currency ? formatMoney(r.reward_threshold, r.currency) : '—'],
                    ['Source', <span class="tag">{r.source}</span>],
                    ['Created', formatTime(r.created_at)],
                  ]}
                />
              </Section>
            </div>
            <Section id="referral-rewards" title="Rewards" description="Approve or void them on the Rewards page.">
              {r.rewards.length === 0 ? (
                <div class="empty empty-inline">
                  <p>
                    {r.is_converted
                      ? 'No rewards yet: they are created when the referred customer pays.'
                      : 'No rewards: the referral has not converted yet.'}
                  </p>
                </div>
              ) : (
                <div class="table-wrap">
                  <table class="table">
                    <caption class="sr-only">Rewards of this referral</caption>
                    <thead>
                      <tr>
                        <th scope="col">Created</th>
                        <th scope="col">Type</th>
                        <th scope="col" class="num">
                          Amount
                        </th>
                        <th scope="col">Status</th>
                        <th scope="col">Payment</th>
                      </tr>
                    </thead>
                    <tbody>
                      {r.rewards.map((w) => (
                        <tr key={w.id}>
                          <td>{formatTime(w.created_at)}</td>
                          <td>{w.type === 'credit' ? 'Credit' : 'Commission'}</td>
                          <td class="num">{formatMoney(w.amount, w.currency)}</td>
                          <td>
                            <RewardStatus reward={w} />
                          </td>
                          <td>
                            <code class="mono-small">{String(w.payment_id)}</code>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
              <p>
                <a href={`/app/rewards?member=${encodeURIComponent(r.member_id)}`}>All rewards of this member</a>
              </p>
            </Section>
          </>
        )}
      </LoadState>
    </>
  );
}
