// /app/payouts (summary per currency, pay with a connected rail, create a file batch, payouts by status),
// /app/payouts/batches (every batch, by status, with its rail) and /app/payouts/batches/:id (a file batch:
// its file, mark it paid, and its payouts one by one; a rail batch: each payout's live outcome, ./rail-batch.tsx).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api } from '../api';
import { idempotencyKey, unwrap, type ApiPaths, type Schemas } from '../../api/client';
import { Badge } from '../../ui/badge';
import { BusyButton, Spinner } from '../../ui/busy-button';
import { useConfirm } from '../../ui/confirm';
import { Form, SelectField, SubmitButton, text, useFormState } from '../../ui/form';
import { ColumnsHead, ColumnsRow, PagedTable, exportHref, type Column } from '../components/paged-table';
import { Details, LoadState, PageHeader, Section, useLoad } from '../components/page';
import { useToast } from '../../ui/toast';
import { formatCount, formatMoney, formatTime, plural } from '../../ui/format';
import { useCan } from '../lib/session';
import { oneOf, urlWith } from '../lib/url';
import { StatusFilter } from './filters';
import type { Payout } from '../../api/types';
import { payoutColumns } from '../tables/payouts';
import { RAIL_NAMES, railOf, type RailBatch } from '../lib/rails';
import { PayWithRail, RailBatchFailure, RailBatchPayouts, ReconcileButton, railBatchDetails } from './rail-batch';

type Query = NonNullable<ApiPaths['/v1/payouts/']['get']['parameters']['query']>;
type Summary = Schemas['PayoutSummary'];
type Batch = RailBatch;
type BatchQuery = NonNullable<ApiPaths['/v1/payout-batches/']['get']['parameters']['query']>;
const STATUSES = ['', 'open', 'due', 'processing', 'paid', 'failed', 'canceled'] as const;

const FORMATS = [
  { value: 'paypal', label: 'PayPal Payouts (web upload, no header)' },
  { value: 'wise', label: 'Wise batch (send by email)' },
  { value: 'csv', label: 'CSV (every field, with a header)' },
];

const SUMMARY_PARTS: { key: keyof Summary; label: string; hint: string }[] = [
  { key: 'due', label: 'Due', hint: 'Ready to pay: at the minimum, with a payout email or a ready payout method.' },
  { key: 'open', label: 'Open', hint: 'Collecting: below the minimum, or no payout email or ready payout method yet.' },
  { key: 'processing', label: 'Processing', hint: 'In a batch: being sent by a payout rail, or waiting to be marked paid.' },
  { key: 'paid', label: 'Paid', hint: 'Paid out so far.' },
];

function amounts(map: Record<string, string>): string[] {
  return Object.entries(map)
    .filter(([, v]) => Number(v) !== 0)
    .map(([c, v]) => formatMoney(v, c));
}

function SummaryTiles({ summary }: { summary: Summary }) {
  return (
    <ul class="kpis" aria-label="Payout totals">
      {SUMMARY_PARTS.map((part) => {
        const list = amounts(summary[part.key]);
        return (
          <li class="kpi" key={part.key} data-summary={part.key}>
            <p class="kpi-label">{part.label}</p>
            <p class="kpi-value">{list[0] ?? 'None'}</p>
            {list.length > 1 && <p class="kpi-more">+ {list.slice(1).join(' · ')}</p>}
            <p class="kpi-change">{part.hint}</p>
          </li>
        );
      })}
    </ul>
  );
}

function CreateBatch({ due }: { due: Record<string, string> }) {
  const { route } = useLocation();
  const notify = useToast();
  const form = useFormState();
  const currencies = Object.entries(due).filter(([, v]) => Number(v) > 0);
  if (currencies.length === 0) {
    return (
      <div class="empty empty-inline">
        <p>
          No payout is due right now. A member's payout becomes due once their approved commissions reach the campaign's minimum and they
          have a payout email.
        </p>
      </div>
    );
  }
  return (
    <Form
      form={form}
      labelledBy="create-batch-title"
      onSubmit={async (data) => {
        const format = text(data, 'format') as 'paypal' | 'wise' | 'csv';
        const batch = await unwrap(
          api.POST('/v1/payout-batches/', {
            params: { header: { 'Idempotency-Key': idempotencyKey() } },
            body: { format, currency: text(data, 'currency') },
          }),
        );
        notify(`Batch of ${plural(batch.payout_count, 'payout')} created: download its file and pay it.`);
        route(`/app/payouts/batches/${encodeURIComponent(batch.id)}`);
      }}
    >
      <p class="hint">Every due payout in the currency moves to processing and goes into one file for your payment provider.</p>
      <div class="form-grid">
        <SelectField name="format" label="File format" options={FORMATS} defaultValue="paypal" />
        <SelectField
          name="currency"
          label="Currency"
          options={currencies.map(([c, v]) => ({ value: c, label: `${c}: ${formatMoney(v, c)} due` }))}
          defaultValue={currencies[0]?.[0]}
        />
      </div>
      <div class="form-actions">
        <SubmitButton form={form} busyLabel="Creating batch…">
          Create batch
        </SubmitButton>
      </div>
    </Form>
  );
}

export function Payouts() {
  const { path, query } = useLocation();
  const canMoney = useCan('money');
  const status = oneOf(query.status, STATUSES, '');
  const [version, setVersion] = useState(0);
  const summary = useLoad(() => unwrap(api.GET('/v1/payouts/summary/')), [version]);

  return (
    <>
      <PageHeader title="Payouts" subtitle="Approved commissions gathered per member and currency, paid in batches.">
        <a class="btn btn-secondary" href="/app/payouts/batches">
          Payout batches
        </a>
      </PageHeader>
      <section aria-labelledby="payout-summary-title" class="kpis-section">
        <h2 id="payout-summary-title" class="sr-only">
          Totals
        </h2>
        <LoadState loaded={summary} what="the payout totals">
          {(s) => <SummaryTiles summary={s} />}
        </LoadState>
      </section>
      {canMoney && (
        <Section
          id="pay-with-rail"
          title="Pay with a payout rail"
          description="Send every due payout of a currency whose member's payout method is the rail and ready, straight from your rail's balance."
        >
          <LoadState loaded={summary} what="the due payouts">
            {(s) =>
              Object.values(s.due).some((v) => Number(v) > 0) ? (
                <PayWithRail due={s.due} />
              ) : (
                <p class="muted">No payout is due right now.</p>
              )
            }
          </LoadState>
        </Section>
      )}
      {canMoney && (
        <Section id="create-batch" title="Create batch">
          <LoadState loaded={summary} what="the due payouts">
            {(s) => <CreateBatch due={s.due} />}
          </LoadState>
        </Section>
      )}
      <StatusFilter
        label="Payout status"
        current={status}
        options={STATUSES.map((s) => ({ value: s, label: s === '' ? 'All' : s.charAt(0).toUpperCase() + s.slice(1) }))}
        href={(s) => urlWith(path, query, { status: s, cursor: null })}
      />
      <Section id="payout-list" title={status ? `${status.charAt(0).toUpperCase()}${status.slice(1)} payouts` : 'All payouts'}>
        <PagedTable<Payout>
          label="Payouts"
          noun={['payout', 'payouts']}
          deps={[status, version]}
          load={(q) => unwrap(api.GET('/v1/payouts/', { params: { query: { ...q, status: (status || undefined) as Query['status'] } } }))}
          rowKey={(p) => p.id}
          columns={payoutColumns(() => setVersion((n) => n + 1))}
          exportHref={exportHref('payouts.csv', { status: status || undefined })}
          empty={
            <p>
              {status
                ? `No ${status} payouts.`
                : 'No payouts yet. They are created as commissions are approved; set a minimum payout and hold period on each campaign.'}
            </p>
          }
        />
      </Section>
    </>
  );
}

const BATCH_STATUSES = ['', 'processing', 'paid', 'failed'] as const;

/** /app/payouts/batches: every batch, newest first, with its amount and (once paid) date and reference. */
export function PayoutBatches() {
  const { path, query } = useLocation();
  const status = oneOf(query.status, BATCH_STATUSES, '');
  return (
    <>
      <PageHeader
        title="Payout batches"
        subtitle="Each batch is due payouts in one currency: sent by a payout rail, or one file for your payment provider."
        back={{ href: '/app/payouts', label: 'Payouts' }}
      />
      <StatusFilter
        label="Batch status"
        current={status}
        options={BATCH_STATUSES.map((s) => ({ value: s, label: s === '' ? 'All' : s.charAt(0).toUpperCase() + s.slice(1) }))}
        href={(s) => urlWith(path, query, { status: s, cursor: null })}
      />
      <Section id="batch-list" title={status ? `${status.charAt(0).toUpperCase()}${status.slice(1)} batches` : 'All batches'}>
        <PagedTable<Batch>
          label="Payout batches"
          noun={['batch', 'batches']}
          deps={[status]}
          load={(q) =>
            unwrap(api.GET('/v1/payout-batches/', { params: { query: { ...q, status: (status || undefined) as BatchQuery['status'] } } }))
          }
          rowKey={(b) => b.id}
          exportHref={exportHref('payout-batches.csv', { status: status || undefined })}
          empty={<p>{status ? `No ${status} batches.` : 'No batches yet. Create one on the Payouts page when payouts are due.'}</p>}
          columns={[
            {
              key: 'created',
              header: 'Created',
              cell: (b) => <a href={`/app/payouts/batches/${encodeURIComponent(b.id)}`}>{formatTime(b.created_at)}</a>,
            },
            { key: 'amount', header: 'Amount', numeric: true, cell: (b) => formatMoney(b.amount, b.currency) },
            { key: 'payouts', header: 'Payouts', numeric: true, cell: (b) => formatCount(b.payout_count) },
            { key: 'rail', header: 'Rail', cell: (b) => <span data-rail={b.rail ?? 'file'}>{RAIL_NAMES[railOf(b) ?? 'file']}</span> },
            {
              key: 'format',
              header: 'Format',
              cell: (b) => (b.format ? (FORMATS.find((f) => f.value === b.format)?.label.split(' (')[0] ?? b.format) : '—'),
            },
            {
              key: 'status',
              header: 'Status',
              cell: (b) => (
                <>
                  <Badge status={b.status} />
                  {b.status === 'paid' && <span class="cell-sub">{formatTime(b.paid_at)}</span>}
                  {b.status === 'failed' && b.failure_reason && <span class="cell-sub">{b.failure_reason}</span>}
                </>
              ),
            },
            { key: 'reference', header: 'Reference', cell: (b) => (b.reference ? <code class="mono-small">{b.reference}</code> : '—') },
          ]}
        />
      </Section>
    </>
  );
}

const BATCH_PAGE = 20;

function BatchPayouts({ batch, onChanged, version }: { batch: Batch; onChanged: () => void; version: number }) {
  const { path, query } = useLocation();
  const pages = Math.max(1, Math.ceil(batch.payout_ids.length / BATCH_PAGE));
  const page = Math.min(Math.max(Number(query.page) || 1, 1), pages);
  const ids = batch.payout_ids.slice((page - 1) * BATCH_PAGE, page * BATCH_PAGE);
  const loaded = useLoad(
    () => Promise.all(ids.map((id) => unwrap(api.GET('/v1/payouts/{id}/', { params: { path: { id } } })))),
    [batch.id, page, version],
  );
  const columns: Column<Payout>[] = payoutColumns(onChanged, { batch: false });

  return (
    <LoadState loaded={loaded} what="the batch's payouts">
      {(payouts) => (
        <div class="paged" aria-busy={loaded.loading ? 'true' : undefined}>
          <div class="table-wrap">
            <table class="table">
              <caption class="sr-only">Payouts in this batch</caption>
              <ColumnsHead columns={columns} />
              <tbody>
                {payouts.map((p) => (
                  <ColumnsRow key={p.id} columns={columns} row={p} />
                ))}
              </tbody>
            </table>
          </div>
          <nav class="pager" aria-label="Payouts in this batch: pages">
            <span class="pager-count">
              {plural(batch.payout_ids.length, 'payout')}
              {pages > 1 && ` · page ${page} of ${pages}`}
            </span>
            {pages > 1 && (
              <div class="pager-buttons">
                <a
                  class={`btn btn-secondary btn-small${page <= 1 ? ' is-disabled' : ''}`}
                  aria-disabled={page <= 1 ? 'true' : undefined}
                  href={page <= 1 ? undefined : urlWith(path, query, { page: page - 1 === 1 ? null : String(page - 1) })}
                >
                  ← Previous
                </a>
                <a
                  class={`btn btn-secondary btn-small${page >= pages ? ' is-disabled' : ''}`}
                  aria-disabled={page >= pages ? 'true' : undefined}
                  href={page >= pages ? undefined : urlWith(path, query, { page: String(page + 1) })}
                >
                  Next →
                </a>
              </div>
            )}
          </nav>
        </div>
      )}
    </LoadState>
  );
}

export function PayoutBatch() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const canMoney = useCan('money');
  const confirm = useConfirm();
  const notify = useToast();
  const [version, setVersion] = useState(0);
  const [marking, setMarking] = useState(false);
  const loaded = useLoad(() => unwrap(api.GET('/v1/payout-batches/{id}/', { params: { path: { id } } })), [id, version]);
  const batch = loaded.data;
  const rail = batch ? railOf(batch) : null;
  const fileHref = `/v1/payout-batches/${encodeURIComponent(id)}/file/`;
  const fileName = batch ? `refloop-${batch.format}-${batch.currency}-${batch.id}.csv` : undefined;

  const markPaid = async () => {
    if (!batch) return;
    const amount = formatMoney(batch.amount, batch.currency);
    const reference = await confirm({
      title: `Mark the whole batch (${amount}) paid?`,
      body: (
        <p>
          Do this once your payment provider has sent all {plural(batch.payout_count, 'payout')}. Every payout and its rewards become paid;
          mark a payout failed first if it bounced. This cannot be undone.
        </p>
      ),
      confirmLabel: 'Mark batch paid',
      input: { label: 'Payment reference', hint: 'E.g. the PayPal batch id or the Wise transfer reference.', maxLength: 200 },
    });
    if (reference === null) return;
    setMarking(true);
    try {
      await unwrap(
        api.POST('/v1/payout-batches/{id}/mark-paid/', {
          params: { path: { id: batch.id }, header: { 'Idempotency-Key': idempotencyKey() } },
          body: reference ? { reference } : {},
        }),
      );
      notify(`Batch of ${amount} marked paid.`);
      setVersion((n) => n + 1);
    } catch (err) {
      notify(err instanceof Error ? err.message : 'The batch could not be marked paid.', 'error');
    } finally {
      setMarking(false);
    }
  };

  return (
    <>
      <PageHeader
        title={batch ? `Batch ${formatMoney(batch.amount, batch.currency)}` : 'Payout batch'}
        subtitle={batch ? `${batch.id}` : undefined}
        back={{ href: '/app/payouts', label: 'Payouts' }}
      >
        {batch && rail && <ReconcileButton batch={batch} onQueued={() => setVersion((n) => n + 1)} />}
        {batch && !rail && (
          <>
            <a class="btn btn-secondary" href={fileHref} download={fileName}>
              Download file
            </a>
            {canMoney && batch.status !== 'paid' && (
              <BusyButton busy={marking} busyLabel="Marking paid…" onClick={markPaid}>
                Mark batch paid
              </BusyButton>
            )}
          </>
        )}
      </PageHeader>
      <LoadState loaded={loaded} what="the batch">
        {(b) =>
          railOf(b) ? (
            <>
              <Section id="batch-details" title="Batch">
                <RailBatchFailure batch={b} />
                <Details items={railBatchDetails(b)} />
              </Section>
              <Section id="batch-payouts" title="Payouts in this batch">
                {b.payout_ids.length === 0 ? (
                  <p class="muted">This batch holds no payouts.</p>
                ) : (
                  <RailBatchPayouts batch={b} restart={version} onSettled={loaded.reload} />
                )}
              </Section>
            </>
          ) : (
            <>
              <Section id="batch-details" title="Batch">
                <Details
                  items={[
                    ['Status', <Badge status={b.status} />],
                    ['Format', FORMATS.find((f) => f.value === b.format)?.label ?? b.format],
                    ['Amount', formatMoney(b.amount, b.currency)],
                    ['Payouts', formatCount(b.payout_count)],
                    ['Created', formatTime(b.created_at)],
                    ...(b.status === 'paid'
                      ? ([
                          ['Paid', formatTime(b.paid_at)],
                          ['Reference', b.reference ? <code>{b.reference}</code> : '—'],
                        ] as [string, ComponentChildren][])
                      : []),
                  ]}
                />
                {b.status === 'processing' && (
                  <ol class="steps">
                    <li>
                      Download the file and upload it to{' '}
                      {b.format === 'wise' ? 'Wise' : b.format === 'paypal' ? 'PayPal Payouts' : 'your payment tool'}.
                    </li>
                    <li>Mark a payout failed if it could not be paid: its rewards return to the member's next payout.</li>
                    <li>Mark the batch paid once the money is sent.</li>
                  </ol>
                )}
              </Section>
              <Section id="batch-payouts" title="Payouts in this batch">
                {b.payout_ids.length === 0 ? (
                  <p class="muted">This batch holds no payouts.</p>
                ) : (
                  <BatchPayouts batch={b} version={version} onChanged={() => setVersion((n) => n + 1)} />
                )}
              </Section>
            </>
          )
        }
      </LoadState>
      {loaded.loading && loaded.data && <Spinner label="Updating…" />}
    </>
  );
}
