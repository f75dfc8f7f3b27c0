// Forms that show the API's answer where it belongs: each field's messages under the field
// (aria-invalid + aria-describedby), `non_field_errors` / `detail` (and errors of fields the form does not
// show) at the top in a role="alert". The API validates; the browser's own validation is off (noValidate)
// so there is one source of messages.
import { createContext, type ComponentChildren, type TextareaHTMLAttributes } from 'preact';
import { useCallback, useContext, useEffect, useId, useRef, useState } from 'preact/hooks';
import { toProblem, type Problem } from '../api/client';
import { titleCase } from './format';
import { BusyButton } from './busy-button';

interface FormState {
  id: string;
  problem: Problem | null;
  known: Set<string>;
  busy: boolean;
}

const FormContext = createContext<FormState | null>(null);

export interface FormHandle {
  busy: boolean;
  problem: Problem | null;
  /** Runs the action with the busy state on; a thrown ApiError (or network failure) is shown on the form. */
  run: (action: () => Promise<void>) => Promise<boolean>;
  setProblem: (problem: Problem | null) => void;
}

export function useFormState(): FormHandle {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const running = useRef(false);
  const run = useCallback(async (action: () => Promise<void>) => {
    if (running.current) return false;
    running.current = true;
    setBusy(true);
    setProblem(null);
    try {
      await action();
      return true;
    } catch (err) {
      setProblem(toProblem(err));
      return false;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, problem, run, setProblem };
}

interface FormProps {
  form: FormHandle;
  /** Gets the form's values; throws ApiError to show the API's errors. */
  onSubmit: (data: FormData, form: HTMLFormElement) => Promise<void>;
  children: ComponentChildren;
  /** The accessible name of the form (e.g. the heading's id). */
  labelledBy?: string;
  class?: string;
}

export function Form({ form, onSubmit, children, labelledBy, class: cls }: FormProps) {
  const id = useId();
  const known = useRef(new Set<string>());
  const ref = useRef<HTMLFormElement>(null);
  const alertRef = useRef<HTMLDivElement>(null);
  const { problem } = form;

  // After a failed submit: the first invalid field takes the focus, else the summary at the top.
  useEffect(() => {
    if (!problem) return;
    const invalid = ref.current?.querySelector<HTMLElement>('[aria-invalid="true"]');
    if (invalid) invalid.focus();
    else alertRef.current?.focus();
  }, [problem]);

  const unknownFieldErrors = problem ? Object.entries(problem.fields).filter(([name]) => !known.current.has(name)) : [];
  const hasTop = problem !== null && (problem.message !== null || unknownFieldErrors.length > 0);
  const fieldCount = problem ? Object.keys(problem.fields).length - unknownFieldErrors.length : 0;

  return (
    <FormContext.Provider value={{ id, problem, known: known.current, busy: form.busy }}>
      <form
        ref={ref}
        class={cls ?? 'form'}
        noValidate
        aria-labelledby={labelledBy}
        onSubmit={(e) => {
          e.preventDefault();
          const el = e.currentTarget;
          void form.run(() => onSubmit(new FormData(el), el));
        }}
      >
        <div ref={alertRef} tabIndex={-1} class={hasTop ? 'alert alert-error' : 'alert-slot'} role="alert">
          {hasTop && (
            <>
              {problem?.message && <p>{problem.message}</p>}
              {unknownFieldErrors.length > 0 && (
                <ul>
                  {unknownFieldErrors.map(([name, msgs]) => (
                    <li key={name}>
                      {titleCase(name)}: {msgs.join(' ')}
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
          {!hasTop && fieldCount > 0 && (
            <span class="sr-only">{fieldCount === 1 ? 'One field needs attention.' : `${fieldCount} fields need attention.`}</span>
          )}
        </div>
        {children}
      </form>
    </FormContext.Provider>
  );
}

function useField(name: string) {
  const state = useContext(FormContext);
  if (!state) throw new Error('A field outside <Form>');
  state.known.add(name);
  const id = `${state.id}-${name}`;
  const errors = state.problem?.fields[name] ?? [];
  return { id, errors, errorId: `${id}-error`, hintId: `${id}-hint`, busy: state.busy };
}

/** The API's errors of a field the form renders by hand (not through Field): shown there, not at the top. */
export function useFieldErrors(name: string): string[] {
  return useField(name).errors;
}

function describedBy(...ids: (string | false | undefined)[]) {
  const list = ids.filter((x): x is string => typeof x === 'string' && x !== '');
  return list.length > 0 ? list.join(' ') : undefined;
}

function FieldMessages({ errors, errorId, hint, hintId }: { errors: string[]; errorId: string; hint?: ComponentChildren; hintId: string }) {
  return (
    <>
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
      {errors.length > 0 && (
        <p class="field-error" id={errorId}>
          {errors.join(' ')}
        </p>
      )}
    </>
  );
}

interface InputProps {
  type?: 'text' | 'email' | 'url' | 'number' | 'password' | 'search' | 'tel';
  defaultValue?: string;
  value?: string;
  placeholder?: string;
  required?: boolean;
  disabled?: boolean;
  readOnly?: boolean;
  autoComplete?: string;
  inputMode?: 'text' | 'email' | 'url' | 'numeric' | 'decimal' | 'search';
  min?: number;
  max?: number;
  step?: number | 'any';
  maxLength?: number;
  spellcheck?: boolean;
  class?: string;
  onInput?: (value: string) => void;
}

export function Field(
  props: InputProps & { name: string; label: ComponentChildren; hint?: ComponentChildren; optional?: boolean; wide?: boolean },
) {
  const { name, label, hint, optional, wide, class: cls, onInput } = props;
  const { id, errors, errorId, hintId } = useField(name);
  return (
    <div class={`field${wide ? ' field-wide' : ''}`}>
      <label class="label" for={id}>
        {label}
        {optional && <span class="optional"> (optional)</span>}
      </label>
      <input
        // The input's ARIA typing is a union per type; the type is one of InputProps' text-like ones.
        type={(props.type ?? 'text') as 'text'}
        defaultValue={props.defaultValue}
        value={props.value}
        placeholder={props.placeholder}
        required={props.required}
        disabled={props.disabled}
        readOnly={props.readOnly}
        autoComplete={props.autoComplete}
        inputMode={props.inputMode}
        min={props.min}
        max={props.max}
        step={props.step}
        maxLength={props.maxLength}
        spellcheck={props.spellcheck}
        onInput={onInput ? (e) => onInput(e.currentTarget.value) : undefined}
        id={id}
        name={name}
        class={`input${cls ? ` ${cls}` : ''}`}
        aria-invalid={errors.length > 0 ? 'true' : undefined}
        aria-describedby={describedBy(hint ? hintId : undefined, errors.length > 0 && errorId)}
      />
      <FieldMessages errors={errors} errorId={errorId} hint={hint} hintId={hintId} />
    </div>
  );
}

export function TextAreaField(
  props: Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'name' | 'id'> & {
    name: string;
    label: ComponentChildren;
    hint?: ComponentChildren;
    optional?: boolean;
  },
) {
  const { name, label, hint, optional, ...rest } = props;
  const { id, errors, errorId, hintId } = useField(name);
  return (
    <div class="field field-wide">
      <label class="label" for={id}>
        {label}
        {optional && <span class="optional"> (optional)</span>}
      </label>
      <textarea
        {...rest}
        id={id}
        name={name}
        class="input"
        aria-invalid={errors.length > 0 ? 'true' : undefined}
        aria-describedby={describedBy(hint ? hintId : undefined, errors.length > 0 && errorId)}
      />
      <FieldMessages errors={errors} errorId={errorId} hint={hint} hintId={hintId} />
    </div>
  );
}

export interface Option {
  value: string;
  label: string;
}

export function SelectField(props: {
  name: string;
  label: ComponentChildren;
  options: Option[];
  value?: string;
  defaultValue?: string;
  hint?: ComponentChildren;
  optional?: boolean;
  onChange?: (value: string) => void;
  disabled?: boolean;
}) {
  const { id, errors, errorId, hintId } = useField(props.name);
  return (
    <div class="field">
      <label class="label" for={id}>
        {props.label}
        {props.optional && <span class="optional"> (optional)</span>}
      </label>
      <select
        id={id}
        name={props.name}
        class="input"
        disabled={props.disabled}
        value={props.value}
        onChange={(e) => props.onChange?.(e.currentTarget.value)}
        aria-invalid={errors.length > 0 ? 'true' : undefined}
        aria-describedby={describedBy(props.hint ? hintId : undefined, errors.length > 0 && errorId)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value} selected={props.value === undefined ? o.value === props.defaultValue : undefined}>
            {o.label}
          </option>
        ))}
      </select>
      <FieldMessages errors={errors} errorId={errorId} hint={props.hint} hintId={hintId} />
    </div>
  );
}

export function CheckField(props: {
  name: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
  defaultChecked?: boolean;
  checked?: boolean;
  onChange?: (checked: boolean) => void;
  value?: string;
}) {
  const { id, errors, errorId, hintId } = useField(props.name);
  return (
    <div class="field field-check">
      <input
        type="checkbox"
        id={id}
        name={props.name}
        value={props.value ?? 'on'}
        class="check"
        checked={props.checked}
        defaultChecked={props.defaultChecked}
        onChange={(e) => props.onChange?.(e.currentTarget.checked)}
        aria-invalid={errors.length > 0 ? 'true' : undefined}
        aria-describedby={describedBy(props.hint ? hintId : undefined, errors.length > 0 && errorId)}
      />
      <label class="label-inline" for={id}>
        {props.label}
      </label>
      <FieldMessages errors={errors} errorId={errorId} hint={props.hint} hintId={hintId} />
    </div>
  );
}

/** A group of checkboxes sharing one name (e.g. webhook event types), with the field's errors on the group. */
export function CheckGroup(props: {
  name: string;
  legend: ComponentChildren;
  options: Option[];
  defaultValues: readonly string[];
  hint?: ComponentChildren;
}) {
  const { id, errors, errorId, hintId } = useField(props.name);
  return (
    <fieldset class="fieldset field-wide" aria-describedby={describedBy(props.hint ? hintId : undefined, errors.length > 0 && errorId)}>
      <legend class="label">{props.legend}</legend>
      <div class="check-grid">
        {props.options.map((o) => (
          <div class="field-check" key={o.value}>
            <input
              type="checkbox"
              class="check"
              id={`${id}-${o.value}`}
              name={props.name}
              value={o.value}
              defaultChecked={props.defaultValues.includes(o.value)}
            />
            <label class="label-inline mono-small" for={`${id}-${o.value}`}>
              {o.label}
            </label>
          </div>
        ))}
      </div>
      <FieldMessages errors={errors} errorId={errorId} hint={props.hint} hintId={hintId} />
    </fieldset>
  );
}

export function SubmitButton({
  form,
  children,
  busyLabel,
  variant = 'primary',
}: {
  form: FormHandle;
  children: ComponentChildren;
  busyLabel: string;
  variant?: 'primary' | 'secondary' | 'danger';
}) {
  return (
    <BusyButton type="submit" busy={form.busy} busyLabel={busyLabel} variant={variant}>
      {children}
    </BusyButton>
  );
}

// ---- reading FormData into API bodies ----

export const text = (data: FormData, name: string): string => {
  const v = data.get(name);
  return typeof v === 'string' ? v.trim() : '';
};
/** Blank -> null (the API's nullable text fields). */
export const textOrNull = (data: FormData, name: string): string | null => text(data, name) || null;
/** Blank -> undefined (left out of the body: the API's default applies). */
export const textOrUndefined = (data: FormData, name: string): string | undefined => text(data, name) || undefined;
export const checked = (data: FormData, name: string): boolean => data.get(name) !== null;
/** An integer when the text is one, else the text itself (the API answers with its own message). */
export function intOrText(data: FormData, name: string): number | string | null {
  const t = text(data, name);
  if (t === '') return null;
  return /^-?\d+$/.test(t) ? Number(t) : t;
}
