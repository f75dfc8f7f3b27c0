// The confirmation asked before every delete, void and mark-paid: a native modal <dialog> (the page behind
// it is inert), Tab kept inside it, Escape cancels, focus returns to what opened it. It may ask for one
// value too (a void reason, a failure reason, a payment reference).
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';

export interface ConfirmInput {
  label: string;
  /** A choice (select) or free text. */
  options?: { value: string; label: string }[];
  required?: boolean;
  initial?: string;
  hint?: string;
  maxLength?: number;
}

export interface ConfirmOptions {
  title: string;
  body?: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  input?: ConfirmInput;
}

/** Resolves to null when cancelled, else to the entered value ('' without an input). */
type Confirm = (options: ConfirmOptions) => Promise<string | null>;

const ConfirmContext = createContext<Confirm>(async () => null);
export const useConfirm = () => useContext(ConfirmContext);

interface Pending extends ConfirmOptions {
  resolve: (value: string | null) => void;
}

const FOCUSABLE =
  'button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

export function ConfirmProvider({ children }: { children: ComponentChildren }) {
  const [pending, setPending] = useState<Pending | null>(null);
  const [value, setValue] = useState('');
  const [invalid, setInvalid] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<Element | null>(null);

  const confirm = useCallback<Confirm>(
    (options) =>
      new Promise((resolve) => {
        opener.current = document.activeElement;
        setValue(options.input?.initial ?? options.input?.options?.[0]?.value ?? '');
        setInvalid(false);
        setPending({ ...options, resolve });
      }),
    [],
  );

  const close = useCallback(
    (result: string | null) => {
      const d = dialog.current;
      if (d?.open) d.close();
      pending?.resolve(result);
      setPending(null);
      const back = opener.current;
      if (back instanceof HTMLElement && back.isConnected) back.focus();
    },
    [pending],
  );

  useEffect(() => {
    const d = dialog.current;
    if (!pending || !d) return;
    if (!d.open) d.showModal();
    // Focus the value to enter, else the safe choice (Cancel) for a destructive action.
    const first = d.querySelector<HTMLElement>('[data-autofocus]');
    first?.focus();
  }, [pending]);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Tab' || !dialog.current) return;
    const items = [...dialog.current.querySelectorAll<HTMLElement>(FOCUSABLE)];
    const first = items[0];
    const last = items[items.length - 1];
    if (!first || !last) return;
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };

  const submit = (e: Event) => {
    e.preventDefault();
    if (pending?.input?.required && value.trim() === '') {
      setInvalid(true);
      return;
    }
    close(value.trim());
  };

  const input = pending?.input;
  return (
    <ConfirmContext.Provider value={confirm}>
      {children}
      <dialog
        ref={dialog}
        class="dialog"
        aria-labelledby="confirm-title"
        aria-describedby={pending?.body ? 'confirm-body' : undefined}
        onCancel={(e) => {
          e.preventDefault();
          close(null);
        }}
        onKeyDown={onKeyDown}
      >
        {pending && (
          <form method="dialog" onSubmit={submit}>
            <h2 id="confirm-title" class="dialog-title">
              {pending.title}
            </h2>
            {pending.body && (
              <div id="confirm-body" class="dialog-body">
                {pending.body}
              </div>
            )}
            {input && (
              <div class="field">
                <label class="label" for="confirm-input">
                  {input.label}
                  {!input.required && <span class="optional"> (optional)</span>}
                </label>
                {input.options ? (
                  <select id="confirm-input" class="input" data-autofocus value={value} onChange={(e) => setValue(e.currentTarget.value)}>
                    {input.options.map((o) => (
                      <option key={o.value} value={o.value}>
                        {o.label}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    id="confirm-input"
                    class="input"
                    data-autofocus
                    value={value}
                    maxLength={input.maxLength}
                    aria-invalid={invalid ? 'true' : undefined}
                    aria-describedby={invalid ? 'confirm-input-error' : input.hint ? 'confirm-input-hint' : undefined}
                    onInput={(e) => {
                      setValue(e.currentTarget.value);
                      setInvalid(false);
                    }}
                  />
                )}
                {input.hint && !invalid && (
                  <p class="hint" id="confirm-input-hint">
                    {input.hint}
                  </p>
                )}
                {invalid && (
                  <p class="field-error" id="confirm-input-error">
                    This field is required.
                  </p>
                )}
              </div>
            )}
            <div class="dialog-actions">
              <button type="button" class="btn btn-secondary" onClick={() => close(null)} data-autofocus={input ? undefined : true}>
                Cancel
              </button>
              <button type="submit" class={`btn ${pending.danger ? 'btn-danger' : 'btn-primary'}`}>
                {pending.confirmLabel}
              </button>
            </div>
          </form>
        )}
      </dialog>
    </ConfirmContext.Provider>
  );
}
