// Settings > Embed origins: the sites allowed to frame the member portal (owner, admin).
import { useState } from 'preact/hooks';
import type { Account } from '../../../api/types';
import { Form, SubmitButton, useFieldErrors, useFormState } from '../../../ui/form';
import { LoadState, Section, type Loaded } from '../../components/page';
import { useToast } from '../../../ui/toast';
import { useCan } from '../../lib/session';
import { patchAccount } from './account-api';

export function EmbedOriginsSection({ account }: { account: Loaded<Account> }) {
  return (
    <Section
      id="embed-origins"
      title="Embed origins"
      description="Sites allowed to show the member portal in an iframe (Refloop.mount). Use https://host[:port], no path."
    >
      <LoadState loaded={account} what="the embed origins">
        {(a) => <OriginsEditor key={a.embed_origins.join(' ')} account={a} onSaved={account.setData} />}
      </LoadState>
    </Section>
  );
}

function OriginsEditor({ account, onSaved }: { account: Account; onSaved: (a: Account) => void }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const form = useFormState();
  const [origins, setOrigins] = useState<string[]>(account.embed_origins);
  const [draft, setDraft] = useState('');
  const [draftError, setDraftError] = useState<string | null>(null);
  const dirty = origins.join(' ') !== account.embed_origins.join(' ');

  const add = () => {
    const value = draft.trim().replace(/\/+$/, '');
    if (!value) return;
    let origin: string | null = null;
    try {
      const url = new URL(value);
      origin = url.origin === value ? url.origin : null;
    } catch {
      origin = null;
    }
    if (!origin) {
      setDraftError('Enter an origin like https://app.example.com (scheme and host, no path).');
      return;
    }
    if (!origins.includes(origin)) setOrigins([...origins, origin]);
    setDraft('');
    setDraftError(null);
  };

  if (!canEdit) {
    return account.embed_origins.length === 0 ? (
      <p class="muted">No embed origins: the portal cannot be framed by any site.</p>
    ) : (
      <ul class="origin-list">
        {account.embed_origins.map((o) => (
          <li key={o}>
            <code>{o}</code>
          </li>
        ))}
      </ul>
    );
  }

  return (
    <Form
      form={form}
      labelledBy="embed-origins-title"
      onSubmit={async () => {
        const saved = await patchAccount({ embed_origins: origins });
        onSaved(saved);
        notify('Embed origins saved.');
      }}
    >
      {origins.length === 0 ? (
        <p class="muted">No embed origins yet: the portal cannot be framed by any site.</p>
      ) : (
        <ul class="origin-list" aria-label="Embed origins">
          {origins.map((o) => (
            <li key={o}>
              <code>{o}</code>
              <button
                type="button"
                class="btn btn-ghost btn-small btn-danger-text"
                aria-label={`Remove ${o}`}
                onClick={() => setOrigins(origins.filter((x) => x !== o))}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <OriginInput
        draft={draft}
        draftError={draftError}
        onDraft={(v) => {
          setDraft(v);
          setDraftError(null);
        }}
        onAdd={add}
      />
      <div class="form-actions">
        <SubmitButton form={form} busyLabel="Saving…">
          Save origins
        </SubmitButton>
        {dirty && <span class="muted">Unsaved changes</span>}
      </div>
    </Form>
  );
}

/** The new-origin input; the API's `embed_origins` errors are shown under it. */
function OriginInput({
  draft,
  draftError,
  onDraft,
  onAdd,
}: {
  draft: string;
  draftError: string | null;
  onDraft: (v: string) => void;
  onAdd: () => void;
}) {
  const errors = useFieldErrors('embed_origins');
  const message = draftError ?? (errors.length > 0 ? errors.join(' ') : null);
  return (
    <div class="form-row">
      <div class="field">
        <label class="label" for="embed-origin-new">
          Add an origin
        </label>
        <input
          id="embed-origin-new"
          class="input"
          type="url"
          placeholder="https://app.example.com"
          value={draft}
          autoComplete="off"
          spellcheck={false}
          aria-invalid={message ? 'true' : undefined}
          aria-describedby={message ? 'embed-origin-error' : undefined}
          onInput={(e) => onDraft(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              onAdd();
            }
          }}
        />
        {message && (
          <p class="field-error" id="embed-origin-error">
            {message}
          </p>
        )}
      </div>
      <button type="button" class="btn btn-secondary" onClick={onAdd}>
        Add
      </button>
    </div>
  );
}
