// The campaign form's "Sign-up page" section: whether outsiders may apply on the campaign's public page
// (/join/<account slug>/<campaign slug>/), automatic or manual approval, the terms' address, the campaign's
// slug and up to 10 questions (text, web address or a choice; required or not), in the order shown.
// Controlled: the form sends `signup` as the section holds it (the API's errors for it show here).
import { useId } from 'preact/hooks';
import { CopyButton } from '../../ui/copy';
import { Field, useFieldErrors } from '../../ui/form';
import { MAX_QUESTIONS, QUESTION_ID, type SignupQuestion, joinPageUrl } from '../lib/affiliates';
import { type Row, type SignupState, idFrom, rowOf } from './campaign-signup-state';

const TYPES: { value: SignupQuestion['type']; label: string }[] = [
  { value: 'text', label: 'Text' },
  { value: 'url', label: 'Web address' },
  { value: 'choice', label: 'Choice' },
];

export function SignupSection({
  state,
  onChange,
  campaignSlug,
  accountSlug,
}: {
  state: SignupState;
  onChange: (s: SignupState) => void;
  campaignSlug: string | null | undefined;
  accountSlug: string | null | undefined;
}) {
  const id = useId();
  const errors = useFieldErrors('signup');
  const { signup, rows } = state;
  const set = (change: Partial<SignupState['signup']>) => onChange({ ...state, signup: { ...signup, ...change } });
  const setRows = (next: Row[]) => onChange({ ...state, rows: next });
  const update = (key: number, change: Partial<Row>) => setRows(rows.map((r) => (r.key === key ? { ...r, ...change } : r)));
  const move = (index: number, by: -1 | 1) => {
    const next = [...rows];
    const [row] = next.splice(index, 1);
    if (row) next.splice(index + by, 0, row);
    setRows(next);
  };
  const url = signup.enabled && accountSlug && campaignSlug ? joinPageUrl(accountSlug, campaignSlug) : null;

  return (
    <fieldset class="fieldset" aria-describedby={errors.length > 0 ? `${id}-errors` : undefined}>
      <legend class="legend">Sign-up page</legend>
      <p class="hint">
        Let people who are not users of your app apply to promote it (creators, bloggers, agencies). They confirm their email, then you
        approve them here or automatically, and they log in to their own portal.
      </p>
      {errors.length > 0 && (
        <p class="field-error" id={`${id}-errors`}>
          {errors.join(' ')}
        </p>
      )}
      <div class="field field-check">
        <input
          type="checkbox"
          id={`${id}-enabled`}
          class="check"
          checked={signup.enabled}
          onChange={(e) => set({ enabled: e.currentTarget.checked })}
        />
        <label class="label-inline" for={`${id}-enabled`}>
          Open the sign-up page
        </label>
      </div>
      <div class="form-grid">
        <div class="field">
          <label class="label" for={`${id}-approval`}>
            Applicants are approved
          </label>
          <select
            id={`${id}-approval`}
            class="input"
            value={signup.approval}
            onChange={(e) => set({ approval: e.currentTarget.value === 'auto' ? 'auto' : 'manual' })}
          >
            <option value="manual">By me, one by one (manual)</option>
            <option value="auto">Automatically, once their email is confirmed</option>
          </select>
        </div>
        <div class="field">
          <label class="label" for={`${id}-terms`}>
            Terms address <span class="optional">(optional)</span>
          </label>
          <input
            id={`${id}-terms`}
            type="url"
            class="input"
            value={signup.terms_url ?? ''}
            placeholder="https://yourapp.com/affiliate-terms"
            autoComplete="off"
            spellcheck={false}
            aria-describedby={`${id}-terms-hint`}
            onInput={(e) => set({ terms_url: e.currentTarget.value.trim() || null })}
          />
          <p class="hint" id={`${id}-terms-hint`}>
            Applicants must accept them when set.
          </p>
        </div>
        <Field
          name="slug"
          label="Page address (slug)"
          optional
          defaultValue={campaignSlug ?? ''}
          maxLength={40}
          autoComplete="off"
          spellcheck={false}
          hint="Lower-case letters, digits and dashes; from the name when empty."
        />
      </div>
      {url && (
        <div class="copybox">
          <label class="label" for={`${id}-url`}>
            Public sign-up page
          </label>
          <div class="copybox-row">
            <input id={`${id}-url`} class="input mono" readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={url} what="the sign-up page's address" />
            <a class="btn btn-secondary btn-small" href={url} target="_blank" rel="noopener noreferrer">
              Open
            </a>
          </div>
        </div>
      )}
      {signup.enabled && !accountSlug && (
        <p class="hint">
          Give the account a slug in <a href="/app/settings#programme-title">Settings</a> to get the page's address.
        </p>
      )}

      <h3 class="form-title">
        Questions{' '}
        <span class="optional">
          ({rows.length} of {MAX_QUESTIONS})
        </span>
      </h3>
      {rows.length === 0 ? (
        <p class="muted">No questions: applicants give their name, email, country and payout email only.</p>
      ) : (
        <ol class="question-list">
          {rows.map((q, i) => (
            <QuestionRow
              key={q.key}
              q={q}
              index={i}
              count={rows.length}
              taken={new Set(rows.filter((r) => r.key !== q.key).map((r) => r.id))}
              onChange={(change) => update(q.key, change)}
              onMove={(by) => move(i, by)}
              onRemove={() => setRows(rows.filter((r) => r.key !== q.key))}
            />
          ))}
        </ol>
      )}
      <div class="form-actions">
        <button
          type="button"
          class="btn btn-secondary btn-small"
          disabled={rows.length >= MAX_QUESTIONS}
          onClick={() => {
            const taken = new Set(rows.map((r) => r.id));
            setRows([...rows, rowOf({ id: idFrom('', taken), label: '', type: 'text', required: false, options: null }, true)]);
          }}
        >
          Add a question
        </button>
        {rows.length >= MAX_QUESTIONS && <span class="hint">At most {MAX_QUESTIONS} questions.</span>}
      </div>
    </fieldset>
  );
}

function QuestionRow(props: {
  q: Row;
  index: number;
  count: number;
  taken: Set<string>;
  onChange: (change: Partial<Row>) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  const { q, index, count, taken, onChange } = props;
  const id = useId();
  const n = index + 1;
  const idInvalid = !QUESTION_ID.test(q.id) || taken.has(q.id);
  return (
    <li class="question">
      <div class="question-head">
        <strong>Question {n}</strong>
        <div class="row-actions">
          <button
            type="button"
            class="btn btn-ghost btn-small"
            disabled={index === 0}
            aria-label={`Move question ${n} up`}
            onClick={() => props.onMove(-1)}
          >
            ↑
          </button>
          <button
            type="button"
            class="btn btn-ghost btn-small"
            disabled={index === count - 1}
            aria-label={`Move question ${n} down`}
            onClick={() => props.onMove(1)}
          >
            ↓
          </button>
          <button
            type="button"
            class="btn btn-ghost btn-small btn-danger-text"
            aria-label={`Remove question ${n}`}
            onClick={props.onRemove}
          >
            Remove
          </button>
        </div>
      </div>
      <div class="form-grid">
        <div class="field">
          <label class="label" for={`${id}-label`}>
            Question {n}: label
          </label>
          <input
            id={`${id}-label`}
            class="input"
            value={q.label}
            maxLength={200}
            autoComplete="off"
            onInput={(e) => {
              const label = e.currentTarget.value;
              onChange(q.autoId ? { label, id: idFrom(label, taken) } : { label });
            }}
          />
        </div>
        <div class="field">
          <label class="label" for={`${id}-id`}>
            Question {n}: answer key
          </label>
          <input
            id={`${id}-id`}
            class="input mono"
            value={q.id}
            maxLength={30}
            autoComplete="off"
            spellcheck={false}
            aria-invalid={idInvalid ? 'true' : undefined}
            aria-describedby={`${id}-id-hint`}
            onInput={(e) => onChange({ id: e.currentTarget.value, autoId: false })}
          />
          <p class={idInvalid ? 'field-error' : 'hint'} id={`${id}-id-hint`}>
            {taken.has(q.id) ? 'Another question has this key.' : 'a-z, 0-9 and _; the answer’s name in the API.'}
          </p>
        </div>
        <div class="field">
          <label class="label" for={`${id}-type`}>
            Question {n}: type
          </label>
          <select
            id={`${id}-type`}
            class="input"
            value={q.type}
            onChange={(e) => {
              const type = e.currentTarget.value as SignupQuestion['type'];
              onChange({ type, options: type === 'choice' ? (q.options ?? []) : q.options });
            }}
          >
            {TYPES.map((t) => (
              <option key={t.value} value={t.value}>
                {t.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field field-check">
          <input
            type="checkbox"
            id={`${id}-required`}
            class="check"
            checked={q.required}
            onChange={(e) => onChange({ required: e.currentTarget.checked })}
          />
          <label class="label-inline" for={`${id}-required`}>
            Question {n} is required
          </label>
        </div>
        {q.type === 'choice' && (
          <div class="field field-wide">
            <label class="label" for={`${id}-options`}>
              Question {n}: options, one per line
            </label>
            <textarea
              id={`${id}-options`}
              class="input"
              rows={3}
              value={(q.options ?? []).join('\n')}
              onInput={(e) => onChange({ options: e.currentTarget.value.split('\n') })}
            />
          </div>
        )}
      </div>
    </li>
  );
}
