// /app/settings/fraud - Settings > Fraud rules: each rule in words with its action (off, flag, hold) and
// thresholds (GET /v1/fraud-rules/). A changed rule is previewed before it is saved: Preview runs POST
// /v1/fraud-rules/preview/ with the edited values ("over the last 90 days this would have flagged N and
// held M", with examples), and Save (PATCH /v1/fraud-rules/, that rule only) waits for the preview of the
// values on screen. Owners and admins edit; the others read.
import { useState } from 'preact/hooks';
import { type Problem, toProblem } from '../../../api/client';
import { BusyButton } from '../../../ui/busy-button';
import { formatCount, formatTime, plural } from '../../../ui/format';
import { useToast } from '../../../ui/toast';
import { LoadState, PageHeader, Section, useLoad } from '../../components/page';
import {
  ACTION_WORDS,
  type FraudAction,
  type FraudPreview,
  type FraudRule,
  type FraudRules,
  RULE_WORDS,
  RULES,
  THRESHOLD_WORDS,
  getRules,
  previewRule,
  saveRules,
  thresholdsOf,
} from '../../lib/fraud';
import { referralHref } from '../../lib/links';
import { MemberRef } from '../../lib/members';
import { useCan } from '../../lib/session';
import { SettingsTabs } from './emails';

type Values = { action: FraudAction } & Record<string, number | string>;
const ACTIONS: FraudAction[] = ['off', 'flag', 'hold'];

/** The values on screen as the API takes them (thresholds as integers; a field left empty or not whole: its text, refused by the API). */
function asBody(values: Values): { action: FraudAction; thresholds: Record<string, number> } {
  const thresholds: Record<string, number> = {};
  for (const name of thresholdsOf(values)) {
    const raw = values[name];
    thresholds[name] = typeof raw === 'number' ? raw : Number(String(raw).trim() === '' ? Number.NaN : raw);
  }
  return { action: values.action, thresholds };
}

const keyOf = (values: Values) => JSON.stringify(values);

export function FraudRulesPage() {
  const loaded = useLoad(getRules, []);
  return (
    <>
      <PageHeader
        title="Fraud rules"
        subtitle="Six rules that explain what they find. Flag sends a finding to the review queue; Hold also keeps the commissions it touches from payouts until you release them."
      />
      <SettingsTabs current="fraud" />
      <LoadState loaded={loaded} what="the fraud rules">
        {(rules) => (
          <div class="rule-cards">
            {RULES.map((rule) => (
              <RuleCard key={rule} rule={rule} saved={rules[rule] as Values} onSaved={(all) => loaded.setData(all)} />
            ))}
          </div>
        )}
      </LoadState>
    </>
  );
}

function RuleCard({ rule, saved, onSaved }: { rule: FraudRule; saved: Values; onSaved: (rules: FraudRules) => void }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const [values, setValues] = useState<Values>(saved);
  const [preview, setPreview] = useState<{ key: string; result: FraudPreview | null; problem: Problem | null } | null>(null);
  const [busy, setBusy] = useState<'preview' | 'save' | null>(null);
  const [saveProblem, setSaveProblem] = useState<Problem | null>(null);
  const words = RULE_WORDS[rule];
  const id = `rule-${rule.replace(/_/g, '-')}`;
  const changed = keyOf(values) !== keyOf(saved);
  const previewed = preview !== null && preview.key === keyOf(values);

  const set = (name: string, value: string | FraudAction) => {
    setValues((v) => ({ ...v, [name]: name === 'action' ? value : /^\d+$/.test(String(value)) ? Number(value) : String(value) }));
    setSaveProblem(null);
  };

  const runPreview = async () => {
    const key = keyOf(values);
    setBusy('preview');
    try {
      const result = await previewRule({ rule, ...asBody(values) });
      setPreview({ key, result, problem: null });
    } catch (err) {
      setPreview({ key, result: null, problem: toProblem(err) });
    } finally {
      setBusy(null);
    }
  };

  const save = async () => {
    setBusy('save');
    setSaveProblem(null);
    try {
      const { action, thresholds } = asBody(values);
      const all = await saveRules({ [rule]: { action, ...thresholds } });
      const now = all[rule] as Values;
      setValues(now);
      onSaved(all);
      notify(`${words.name}: saved.`);
    } catch (err) {
      setSaveProblem(toProblem(err));
    } finally {
      setBusy(null);
    }
  };

  const fieldErrors = (name: string): string[] => [
    ...(saveProblem?.fields[rule] ?? []).filter((m) => m.startsWith(`${name}:`)),
    ...(preview?.problem?.fields.thresholds ?? []).filter((m) => m.startsWith(`${name}:`)),
  ];
  const topProblem = saveProblem ?? preview?.problem ?? null;
  const topMessage = topProblem ? (topProblem.message ?? Object.values(topProblem.fields).flat().join(' ')) : null;

  return (
    <Section id={id} title={words.name} description={words.about} class="rule-card">
      <div class="rule-form" data-rule={rule}>
        <fieldset class="segmented" disabled={!canEdit}>
          <legend class="sr-only">{words.name}: action</legend>
          {ACTIONS.map((a) => (
            <label key={a} class={values.action === a ? 'segment is-selected' : 'segment'}>
              <input type="radio" name={`${id}-action`} value={a} checked={values.action === a} onChange={() => set('action', a)} />
              {ACTION_WORDS[a].label}
            </label>
          ))}
        </fieldset>
        <p class="hint">{ACTION_WORDS[values.action].hint}</p>
        {thresholdsOf(values).length > 0 && (
          <div class="rule-thresholds">
            {thresholdsOf(values).map((name) => {
              const w = THRESHOLD_WORDS[name] ?? { label: name.replace(/_/g, ' ') };
              const inputId = `${id}-${name}`;
              const errors = fieldErrors(name);
              return (
                <div class="field rule-threshold" key={name}>
                  <label class="label" for={inputId}>
                    {w.label}
                    {w.unit && <span class="sr-only"> ({w.unit})</span>}
                  </label>
                  <div class="input-with-unit">
                    <input
                      id={inputId}
                      class="input input-small"
                      type="number"
                      inputMode="numeric"
                      min={1}
                      step={1}
                      value={String(values[name] ?? '')}
                      disabled={!canEdit}
                      aria-invalid={errors.length > 0 ? 'true' : undefined}
                      aria-describedby={errors.length > 0 ? `${inputId}-error` : undefined}
                      onInput={(e) => set(name, e.currentTarget.value)}
                    />
                    {w.unit && (
                      <span class="unit" aria-hidden="true">
                        {w.unit}
                      </span>
                    )}
                  </div>
                  {errors.length > 0 && (
                    <p class="field-error" id={`${inputId}-error`}>
                      {errors.map((m) => m.slice(name.length + 1).trim()).join(' ')}
                    </p>
                  )}
                </div>
              );
            })}
          </div>
        )}
        {topMessage && (
          <div class="alert alert-error" role="alert">
            <p>{topMessage}</p>
          </div>
        )}
        {canEdit && changed && (
          <div class="form-actions rule-actions">
            <BusyButton
              variant="secondary"
              busy={busy === 'preview'}
              busyLabel="Previewing…"
              disabled={busy !== null}
              aria-label={`Preview ${words.name}`}
              onClick={() => void runPreview()}
            >
              Preview
            </BusyButton>
            <BusyButton
              busy={busy === 'save'}
              busyLabel="Saving…"
              disabled={busy !== null || !previewed}
              aria-describedby={previewed ? undefined : `${id}-save-hint`}
              aria-label={`Save ${words.name}`}
              onClick={() => void save()}
            >
              Save
            </BusyButton>
            <button
              type="button"
              class="btn btn-ghost"
              disabled={busy !== null}
              onClick={() => {
                setValues(saved);
                setPreview(null);
                setSaveProblem(null);
              }}
            >
              Undo changes
            </button>
            {!previewed && (
              <p class="hint" id={`${id}-save-hint`}>
                Preview the change first: it shows what these settings would have done.
              </p>
            )}
          </div>
        )}
        <div aria-live="polite">{previewed && preview?.result && <PreviewResult preview={preview.result} />}</div>
        {!canEdit && <p class="hint">An owner or admin changes the rules.</p>}
      </div>
    </Section>
  );
}

function PreviewResult({ preview }: { preview: FraudPreview }) {
  return (
    <div class="rule-preview" data-would-flag={String(preview.would_flag)} data-would-hold={String(preview.would_hold)}>
      <p class="rule-preview-sentence">
        {preview.action === 'off' ? (
          <>Turned off, this rule flags and holds nothing.</>
        ) : (
          <>
            Over the last {preview.window_days} days this would have flagged <strong>{formatCount(preview.would_flag)}</strong> and held{' '}
            <strong>{plural(preview.would_hold, 'reward')}</strong>.
          </>
        )}
      </p>
      {preview.partial && <p class="hint">Counted from the most recent facts only: more were recorded than a preview reads.</p>}
      {preview.examples.length > 0 ? (
        <ul class="rule-examples" aria-label="Examples">
          {preview.examples.map((e) => (
            <li key={`${e.subject_type}-${e.subject_id}-${e.at}`}>
              <span>{e.detail}</span>{' '}
              <span class="muted">
                {e.subject_type === 'referral' ? (
                  <a href={referralHref(e.subject_id)} class="mono-small">
                    {e.subject_id}
                  </a>
                ) : e.subject_type === 'application' ? (
                  <a href={`/app/applications/${encodeURIComponent(e.subject_id)}`} class="mono-small">
                    {e.subject_id}
                  </a>
                ) : (
                  <MemberRef id={e.subject_id} />
                )}{' '}
                · {formatTime(e.at)}
              </span>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">Nothing in the last {preview.window_days} days would have matched.</p>
      )}
    </div>
  );
}
