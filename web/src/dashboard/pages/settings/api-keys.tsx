// Settings > API keys: the owner creates (shown once) and revokes the secret keys of the backend.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { unwrap } from '../../../api/client';
import type { ApiKey, CreatedApiKey } from '../../../api/types';
import { Badge } from '../../../ui/badge';
import { BusyButton } from '../../../ui/busy-button';
import { useConfirm } from '../../../ui/confirm';
import { CopyBox } from '../../../ui/copy';
import { Field, Form, SubmitButton, text, useFormState } from '../../../ui/form';
import { PagedTable, useTableReload } from '../../components/paged-table';
import { Section } from '../../components/page';
import { useToast } from '../../../ui/toast';
import { formatTime } from '../../../ui/format';
import { useCan } from '../../lib/session';

export function ApiKeysSection() {
  const isOwner = useCan('owner');
  const notify = useToast();
  const confirm = useConfirm();
  const form = useFormState();
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const { version, reload, reloadFromStart } = useTableReload('keys_cursor');
  const [revoking, setRevoking] = useState<string | null>(null);

  const revoke = async (key: ApiKey) => {
    const ok = await confirm({
      title: `Revoke the key ${key.name || key.prefix}?`,
      body: <p>Requests with it are refused at once. Anything still using it stops working. This cannot be undone.</p>,
      confirmLabel: 'Revoke key',
      danger: true,
    });
    if (ok === null) return;
    setRevoking(key.id);
    try {
      await unwrap(api.DELETE('/v1/api-keys/{id}/', { params: { path: { id: key.id } } }));
      notify(`Key ${key.name || key.prefix} revoked.`);
      reload();
    } catch (err) {
      notify(err instanceof Error ? err.message : 'The key could not be revoked.', 'error');
    } finally {
      setRevoking(null);
    }
  };

  return (
    <Section
      id="api-keys"
      title="API keys"
      description="Secret keys for your backend: Authorization: Bearer rfl_live_…. Never put them in a web page or an app."
    >
      {!isOwner ? (
        <p class="muted">Only an owner of the account can see and manage API keys.</p>
      ) : (
        <>
          {created?.key && (
            <CopyBox
              label={`New key ${created.name || created.prefix}`}
              value={created.key ?? ''}
              secret
              onDismiss={() => setCreated(null)}
            />
          )}
          <Form
            form={form}
            labelledBy="api-keys-title"
            onSubmit={async (data, el) => {
              const key = await unwrap(api.POST('/v1/api-keys/', { body: { name: text(data, 'name') } }));
              el.reset();
              setCreated(key);
              notify('Key created. Copy it now: it is shown only once.');
              reloadFromStart();
            }}
          >
            <div class="form-row">
              <Field name="name" label="Key name" hint="What uses it, e.g. “Production backend”." maxLength={100} autoComplete="off" />
              <SubmitButton form={form} busyLabel="Creating…" variant="secondary">
                Create key
              </SubmitButton>
            </div>
          </Form>
          <PagedTable<ApiKey>
            label="API keys"
            noun={['key', 'keys']}
            cursorParam="keys_cursor"
            pageSize={10}
            deps={[version]}
            // The account's keys come in one page (no cursor).
            load={() => unwrap(api.GET('/v1/api-keys/'))}
            rowKey={(k) => k.id}
            empty={<p>No API keys. Create one above for your backend.</p>}
            columns={[
              { key: 'name', header: 'Name', cell: (k) => k.name || <span class="muted">Unnamed</span> },
              { key: 'prefix', header: 'Key', cell: (k) => <code>{k.prefix}</code> },
              { key: 'created', header: 'Created', cell: (k) => formatTime(k.created_at) },
              {
                key: 'state',
                header: 'State',
                cell: (k) =>
                  k.revoked_at ? (
                    <>
                      <Badge status="disabled" label="Revoked" />
                      <span class="cell-sub">{formatTime(k.revoked_at)}</span>
                    </>
                  ) : (
                    <Badge status="active" label="Active" />
                  ),
              },
              {
                key: 'actions',
                header: 'Actions',
                hiddenHeader: true,
                cell: (k) =>
                  k.revoked_at ? null : (
                    <BusyButton
                      variant="ghost"
                      class="btn-small btn-danger-text"
                      busy={revoking === k.id}
                      busyLabel="Revoking…"
                      disabled={revoking !== null}
                      aria-label={`Revoke key ${k.name || k.prefix}`}
                      onClick={() => revoke(k)}
                    >
                      Revoke
                    </BusyButton>
                  ),
              },
            ]}
          />
        </>
      )}
    </Section>
  );
}
