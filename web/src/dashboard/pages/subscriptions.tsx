// /app/subscriptions - the payment provider's subscriptions as Refloop knows them (webhooks and sync);
// read-only, filtered by status (`?status=`).
import { useLocation } from 'preact-iso';
import { api } from '../api';
import { unwrap, type ApiPaths, type Schemas } from '../../api/client';
import { Badge } from '../../ui/badge';
import { PagedTable, exportHref } from '../components/paged-table';
import { PageHeader, Section } from '../components/page';
import { formatDay, formatMoney } from '../../ui/format';
import { oneOf, urlWith } from '../lib/url';
import { StatusFilter } from './filters';

type Status = NonNullable<NonNullable<ApiPaths['/v1/subscriptions/']['get']['parameters']['query']>['status']>;
const STATUSES = ['', 'active', 'trialling', 'past_due', 'paused', 'deleted'] as const;

export function Subscriptions() {
  const { path, query } = useLocation();
  const status = oneOf(query.status, STATUSES, '');
  return (
    <>
      <PageHeader title="Subscriptions" subtitle="Your customers' subscriptions at the payment provider, kept in sync by its webhooks." />
      <StatusFilter
        label="Subscription status"
        current={status}
        options={STATUSES.map((s) => ({
          value: s,
          label: s === '' ? 'All' : s === 'past_due' ? 'Past due' : s.charAt(0).toUpperCase() + s.slice(1),
        }))}
        href={(s) => urlWith(path, query, { status: s, cursor: null })}
      />
      <Section id="subscription-list" title={status ? `${status.replace('_', ' ')} subscriptions` : 'All subscriptions'}>
        <PagedTable<Schemas['Subscription']>
          label="Subscriptions"
          noun={['subscription', 'subscriptions']}
          deps={[status]}
          load={(q) =>
            unwrap(api.GET('/v1/subscriptions/', { params: { query: { ...q, status: (status || undefined) as Status | undefined } } }))
          }
          rowKey={(s) => String(s.id)}
          exportHref={exportHref('subscriptions.csv', { status: status || undefined })}
          empty={
            status ? (
              <p>No {status.replace('_', ' ')} subscriptions.</p>
            ) : (
              <p>
                No subscriptions yet. Connect your payment provider in <a href="/app/settings">Settings</a> and paste the webhook URL there;
                subscriptions appear as customers subscribe.
              </p>
            )
          }
          columns={[
            { key: 'id', header: 'Subscription', cell: (s) => <code class="mono-small">{String(s.id)}</code> },
            { key: 'email', header: 'Customer email', cell: (s) => s.email },
            {
              key: 'plan',
              header: 'Plan',
              cell: (s) => (
                <>
                  {s.plan.name}
                  <span class="cell-sub">{s.plan.descriptor ?? formatMoney(s.plan.amount, s.plan.currency)}</span>
                </>
              ),
            },
            {
              key: 'price',
              header: 'Unit price',
              numeric: true,
              cell: (s) => (s.unit_price === null ? '—' : formatMoney(s.unit_price, s.currency)),
            },
            { key: 'status', header: 'Status', cell: (s) => <Badge status={s.status} /> },
            { key: 'next', header: 'Next bill', cell: (s) => formatDay(s.next_bill_date) },
            { key: 'last', header: 'Last bill', cell: (s) => formatDay(s.last_bill_date) },
          ]}
        />
      </Section>
    </>
  );
}
