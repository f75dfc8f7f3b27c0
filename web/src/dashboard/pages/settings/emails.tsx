// /app/settings/emails - what each email to affiliates looks like (GET /v1/email-templates/: rendered with
// this account's name, sender and sample values): its subject, and its HTML in a sandboxed frame (no script,
// no same-origin access, no navigation) or its plain text.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { LoadState, PageHeader, Section, useLoad } from '../../components/page';
import { type EmailTemplate, listEmailTemplates } from '../../lib/affiliates';
import { urlWith } from '../../lib/url';
import { StatusFilter } from '../filters';

export function SettingsTabs({ current }: { current: 'general' | 'emails' | 'fraud' }) {
  return (
    <StatusFilter
      label="Settings pages"
      current={current}
      options={[
        { value: 'general', label: 'General' },
        { value: 'emails', label: 'Email previews' },
        { value: 'fraud', label: 'Fraud rules' },
      ]}
      href={(v) => (v === 'emails' ? '/app/settings/emails' : v === 'fraud' ? '/app/settings/fraud' : '/app/settings')}
    />
  );
}

export function EmailPreviews() {
  const { path, query, route } = useLocation();
  const loaded = useLoad(listEmailTemplates, []);
  return (
    <>
      <PageHeader title="Email previews" subtitle="The emails affiliates get from your programme, as they will read them." />
      <SettingsTabs current="emails" />
      <LoadState loaded={loaded} what="the email templates">
        {(templates) =>
          templates.length === 0 ? (
            <div class="empty">
              <p>No email templates.</p>
            </div>
          ) : (
            <Preview
              templates={templates}
              current={templates.find((t) => t.name === query.template) ?? (templates[0] as EmailTemplate)}
              onPick={(name) => route(urlWith(path, query, { template: name }), true)}
            />
          )
        }
      </LoadState>
    </>
  );
}

function Preview({ templates, current, onPick }: { templates: EmailTemplate[]; current: EmailTemplate; onPick: (name: string) => void }) {
  const [view, setView] = useState<'html' | 'text'>('html');
  return (
    <Section
      id="email-preview"
      title={current.label}
      description={
        current.transactional
          ? 'Transactional (a login or confirmation link, or the answer to an application): always sent, with no unsubscribe link.'
          : 'Has a one-click unsubscribe link (and List-Unsubscribe headers); affiliates who unsubscribe no longer get it.'
      }
      actions={
        <>
          <div class="inline-field">
            <label class="label-inline" for="email-template">
              Email
            </label>
            <select id="email-template" class="input input-small" value={current.name} onChange={(e) => onPick(e.currentTarget.value)}>
              {templates.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.label}
                </option>
              ))}
            </select>
          </div>
          <fieldset class="segmented">
            <legend class="sr-only">Show the email as</legend>
            {(['html', 'text'] as const).map((v) => (
              <label key={v} class={v === view ? 'segment is-selected' : 'segment'}>
                <input type="radio" name="email-view" value={v} checked={v === view} onChange={() => setView(v)} />
                {v === 'html' ? 'HTML' : 'Text'}
              </label>
            ))}
          </fieldset>
        </>
      }
    >
      <p>
        <span class="muted">Subject: </span>
        <strong data-email-subject>{current.subject}</strong>
      </p>
      {view === 'html' ? (
        // sandbox="" (every restriction): the email's HTML runs no script and cannot reach this page.
        <iframe key={current.name} class="email-frame" title={`${current.label}: HTML preview`} sandbox="" srcdoc={current.html} />
      ) : (
        <pre class="email-text" data-email-text>
          {current.text}
        </pre>
      )}
    </Section>
  );
}
