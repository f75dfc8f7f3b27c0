// /app/webhooks (endpoints, create: the signing secret is shown once) and /app/webhooks/:id (edit, enable or
// disable, delete, and the endpoint's deliveries with their attempts).
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api } from '../api';
import { idempotencyKey, unwrap, type Schemas } from '../../api/client';
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { CopyBox } from '../../ui/copy';
import { CheckField, CheckGroup, Field, Form, SubmitButton, checked, text, textOrNull, useFormState } from '../../ui/form';
import { PagedTable, useTableReload } from '../components/paged-table';
import { Details, LoadState, PageHeader, Section, useLoad } from '../components/page';
import { useToast } from '../../ui/toast';
import { useDeleteFlow } from '../lib/actions';
import { formatCount, formatTime, plural } from '../../ui/format';
import { useCan } from '../lib/session';

type Endpoint = Schemas['WebhookEndpoint'];
type Delivery = Schemas['WebhookDelivery'];
type EventType = Endpoint['events'][number];

// Every event type the API sends, in the order the forms offer them. The build fails when this list names a
// type the API does not have (`satisfies`) or misses one it has (the error names the missing type).
const EVENT_TYPES = [
  'referral.created',
  'referral.converted',
  'member.created',
  'subscription.updated',
  'reward.created',
  'reward.approved',
  'reward.voided',
  'reward.paid',
  'reward.held',
  'reward.released',
  'payout.due',
  'payout.sent',
  'payout.paid',
  'payout.failed',
  'payout.unclaimed',
  'application.created',
  'application.approved',
  'application.rejected',
  'fraud.flagged',
] as const satisfies readonly EventType[];

type NoneMissing<Missing extends never> = Missing;
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, never used as a type.
type EveryEventTypeListed = NoneMissing<Exclude<EventType, (typeof EVENT_TYPES)[number]>>;

const eventsOf = (data: FormData) =>
  data.getAll('events').filter((v): v is EventType => typeof v === 'string' && (EVENT_TYPES as readonly string[]).includes(v));

const endpointHref = (id: string) => `/app/webhooks/${encodeURIComponent(id)}`;

function EndpointState({ endpoint }: { endpoint: Endpoint }) {
  return (
    <>
      <Badge status={endpoint.enabled ? 'enabled' : 'disabled'} label={endpoint.enabled ? 'Enabled' : 'Disabled'} />
      {endpoint.disabled_reason && <span class="cell-sub">{endpoint.disabled_reason}</span>}
      {endpoint.failing_since !== null && <span class="cell-sub is-warning">Failing since {formatTime(endpoint.failing_since)}</span>}
    </>
  );
}

function CreateEndpoint({ onCreated }: { onCreated: (endpoint: Schemas['CreatedWebhookEndpoint']) => void }) {
  const form = useFormState();
  return (
    <Section
      id="new-endpoint"
      title="Add an endpoint"
      description="Refloop POSTs signed JSON events to it; any 2xx acknowledges, anything else is retried for up to 3 days."
    >
      <Form
        form={form}
        labelledBy="new-endpoint-title"
        onSubmit={async (data, el) => {
          const created = await unwrap(
            api.POST('/v1/webhook-endpoints/', {
              params: { header: { 'Idempotency-Key': idempotencyKey() } },
              body: {
                url: text(data, 'url'),
                description: textOrNull(data, 'description'),
                events: eventsOf(data),
                enabled: checked(data, 'enabled'),
              },
            }),
          );
          el.reset();
          onCreated(created);
        }}
      >
        <div class="form-grid">
          <Field
            name="url"
            label="URL"
            type="url"
            placeholder="https://example.com/refloop/webhooks"
            required
            wide
            autoComplete="off"
            spellcheck={false}
            hint="https, on a public host."
          />
          <Field name="description" label="Description" optional autoComplete="off" />
          <CheckField name="enabled" label="Enabled" defaultChecked />
          <CheckGroup
            name="events"
            legend="Events"
            options={EVENT_TYPES.map((e) => ({ value: e, label: e }))}
            defaultValues={EVENT_TYPES}
          />
        </div>
        <div class="form-actions">
          <SubmitButton form={form} busyLabel="Creating…">
            Create endpoint
          </SubmitButton>
        </div>
      </Form>
    </Section>
  );
}

function SecretNotice({ endpoint, onDismiss }: { endpoint: Schemas['CreatedWebhookEndpoint']; onDismiss: () => void }) {
  if (!endpoint.secret) return null;
  return (
    <Section
      id="endpoint-secret"
      title="Signing secret"
      class="card-highlight"
      description={`For ${endpoint.url}. Verify the Refloop-Signature header of every delivery with it.`}
    >
      <CopyBox label="Signing secret" value={endpoint.secret} secret onDismiss={onDismiss} />
    </Section>
  );
}

export function Webhooks() {
  const canManage = useCan('manage');
  const notify = useToast();
  const [created, setCreated] = useState<Schemas['CreatedWebhookEndpoint'] | null>(null);
  const { version, reloadFromStart } = useTableReload();

  return (
    <>
      <PageHeader title="Webhooks" subtitle="Tell your systems when referrals, rewards and payouts change." />
      {created && <SecretNotice endpoint={created} onDismiss={() => setCreated(null)} />}
      {canManage && (
        <CreateEndpoint
          onCreated={(endpoint) => {
            setCreated(endpoint);
            notify('Endpoint created. Copy its signing secret now.');
            reloadFromStart();
            requestAnimationFrame(() => document.getElementById('endpoint-secret-title')?.scrollIntoView({ block: 'center' }));
          }}
        />
      )}
      <Section id="endpoint-list" title="Endpoints">
        <PagedTable<Endpoint>
          label="Webhook endpoints"
          noun={['endpoint', 'endpoints']}
          deps={[version]}
          load={(q) => unwrap(api.GET('/v1/webhook-endpoints/', { params: { query: q } }))}
          rowKey={(e) => e.id}
          empty={
            <p>
              No webhook endpoints yet. {canManage ? 'Add one with the form above' : 'An owner or admin can add one'} to receive referral,
              reward and payout events.
            </p>
          }
          columns={[
            {
              key: 'url',
              header: 'URL',
              cell: (e) => (
                <>
                  <a href={endpointHref(e.id)} class="break">
                    {e.url}
                  </a>
                  {e.description && <span class="cell-sub">{e.description}</span>}
                </>
              ),
            },
            {
              key: 'events',
              header: 'Events',
              numeric: true,
              cell: (e) => (e.events.length === EVENT_TYPES.length ? 'All' : formatCount(e.events.length)),
            },
            { key: 'state', header: 'State', cell: (e) => <EndpointState endpoint={e} /> },
            { key: 'created', header: 'Created', cell: (e) => formatTime(e.created_at) },
          ]}
        />
      </Section>
    </>
  );
}

function EditEndpoint({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (e: Endpoint) => void }) {
  const form = useFormState();
  return (
    <Section id="edit-endpoint" title="Settings">
      <Form
        form={form}
        labelledBy="edit-endpoint-title"
        onSubmit={async (data) => {
          const saved = await unwrap(
            api.PATCH('/v1/webhook-endpoints/{id}/', {
              params: { path: { id: endpoint.id }, header: { 'Idempotency-Key': idempotencyKey() } },
              body: { url: text(data, 'url'), description: textOrNull(data, 'description'), events: eventsOf(data) },
            }),
          );
          onSaved(saved);
        }}
      >
        <div class="form-grid">
          <Field name="url" label="URL" type="url" defaultValue={endpoint.url} required wide autoComplete="off" spellcheck={false} />
          <Field name="description" label="Description" optional defaultValue={endpoint.description ?? ''} autoComplete="off" />
          <CheckGroup
            name="events"
            legend="Events"
            options={EVENT_TYPES.map((e) => ({ value: e, label: e }))}
            defaultValues={endpoint.events}
          />
        </div>
        <div class="form-actions">
          <SubmitButton form={form} busyLabel="Saving…">
            Save changes
          </SubmitButton>
        </div>
      </Form>
    </Section>
  );
}

function Attempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) return <span class="muted">None yet</span>;
  const last = delivery.attempts[delivery.attempts.length - 1];
  return (
    <details class="attempts">
      <summary>
        {plural(delivery.attempt_count, 'attempt')}
        {last && <span class="muted"> · last {last.status_code ?? last.error ?? 'no answer'}</span>}
      </summary>
      <ol>
        {delivery.attempts.map((a) => (
          <li key={a.attempt}>
            {formatTime(a.attempted_at)}: {a.status_code !== null ? `HTTP ${a.status_code}` : 'no response'} in {formatCount(a.duration_ms)}{' '}
            ms
            {a.error && <span class="cell-sub">{a.error}</span>}
          </li>
        ))}
      </ol>
    </details>
  );
}

export function WebhookDetail() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const canManage = useCan('manage');
  const notify = useToast();
  const [toggling, setToggling] = useState(false);
  const loaded = useLoad(() => unwrap(api.GET('/v1/webhook-endpoints/{id}/', { params: { path: { id } } })), [id]);
  const endpoint = loaded.data;

  const toggle = async () => {
    if (!endpoint) return;
    setToggling(true);
    try {
      const saved = await unwrap(
        api.PATCH('/v1/webhook-endpoints/{id}/', {
          params: { path: { id: endpoint.id }, header: { 'Idempotency-Key': idempotencyKey() } },
          body: { enabled: !endpoint.enabled },
        }),
      );
      loaded.setData(saved);
      notify(saved.enabled ? 'Endpoint enabled.' : 'Endpoint disabled: no events are sent to it.');
    } catch (err) {
      notify(err instanceof Error ? err.message : 'The endpoint could not be changed.', 'error');
    } finally {
      setToggling(false);
    }
  };

  const { deleting, remove } = useDeleteFlow(
    endpoint && {
      confirm: {
        title: 'Delete this endpoint?',
        body: (
          <p>
            <span class="break">{endpoint.url}</span> stops receiving events, and pending retries are dropped. This cannot be undone.
          </p>
        ),
        confirmLabel: 'Delete endpoint',
        danger: true,
      },
      remove: () =>
        unwrap(
          api.DELETE('/v1/webhook-endpoints/{id}/', {
            params: { path: { id: endpoint.id }, header: { 'Idempotency-Key': idempotencyKey() } },
          }),
        ),
      done: 'Endpoint deleted.',
      failed: 'The endpoint could not be deleted.',
      back: '/app/webhooks',
    },
  );
  const busy = toggling || deleting;

  return (
    <>
      <PageHeader
        title="Webhook endpoint"
        subtitle={endpoint ? <span class="break">{endpoint.url}</span> : undefined}
        back={{ href: '/app/webhooks', label: 'Webhooks' }}
      >
        {endpoint && canManage && (
          <>
            <BusyButton
              variant="secondary"
              busy={toggling}
              busyLabel={endpoint.enabled ? 'Disabling…' : 'Enabling…'}
              disabled={busy}
              onClick={toggle}
            >
              {endpoint.enabled ? 'Disable' : 'Enable'}
            </BusyButton>
            <BusyButton variant="danger" busy={deleting} busyLabel="Deleting…" disabled={busy} onClick={remove}>
              Delete endpoint
            </BusyButton>
          </>
        )}
      </PageHeader>
      <LoadState loaded={loaded} what="the endpoint">
        {(e) => (
          <>
            <Section id="endpoint-details" title="Endpoint">
              <Details
                items={[
                  ['State', <EndpointState endpoint={e} />],
                  ['Endpoint id', <code>{e.id}</code>],
                  ['Events', e.events.length === EVENT_TYPES.length ? 'All events' : e.events.join(', ')],
                  ['Created', formatTime(e.created_at)],
                ]}
              />
            </Section>
            {canManage && (
              <EditEndpoint
                key={e.id}
                endpoint={e}
                onSaved={(saved) => {
                  loaded.setData(saved);
                  notify('Endpoint saved.');
                }}
              />
            )}
            <Section
              id="deliveries"
              title="Deliveries"
              description="Newest first. Each event is retried with exponential backoff until a 2xx or 3 days."
            >
              <PagedTable<Delivery>
                label="Deliveries"
                noun={['delivery', 'deliveries']}
                deps={[e.id]}
                load={(q) => unwrap(api.GET('/v1/webhook-endpoints/{id}/deliveries/', { params: { path: { id: e.id }, query: q } }))}
                rowKey={(d) => d.id}
                empty={<p>No deliveries yet. Events are sent here as referrals, rewards and payouts change.</p>}
                columns={[
                  {
                    key: 'event',
                    header: 'Event',
                    cell: (d) => (
                      <>
                        <code>{d.event_type}</code>
                        <span class="cell-sub mono-small">{d.event_id}</span>
                      </>
                    ),
                  },
                  { key: 'status', header: 'Status', cell: (d) => <Badge status={d.status} /> },
                  { key: 'attempts', header: 'Attempts', cell: (d) => <Attempts delivery={d} /> },
                  { key: 'next', header: 'Next retry', cell: (d) => formatTime(d.next_retry_at) },
                  { key: 'created', header: 'Created', cell: (d) => formatTime(d.created_at) },
                ]}
              />
            </Section>
          </>
        )}
      </LoadState>
    </>
  );
}
