// A value with a Copy button; `secret` adds the shown-once warning (API keys, webhook signing secrets).
import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

export function CopyButton({ text, label = 'Copy', what }: { text: string; label?: string; what?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <button
      type="button"
      class="btn btn-secondary btn-small"
      aria-label={what ? `${label} ${what}` : undefined}
      onClick={async () => {
        setState((await copyText(text)) ? 'copied' : 'failed');
        setTimeout(() => setState('idle'), 2000);
      }}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy' : label}
    </button>
  );
}

export function CopyBox(props: {
  label: string;
  value: string;
  multiline?: boolean;
  secret?: boolean;
  children?: ComponentChildren;
  onDismiss?: () => void;
}) {
  const id = useId();
  return (
    <div class={props.secret ? 'copybox copybox-secret' : 'copybox'}>
      {props.secret && (
        <p class="copybox-warning" id={`${id}-warn`}>
          <strong>Copy it now.</strong> This is the only time it is shown; store it somewhere safe. If you lose it, create a new one.
        </p>
      )}
      {props.children}
      <label class="label" for={id}>
        {props.label}
      </label>
      <div class="copybox-row">
        {props.multiline ? (
          <textarea
            id={id}
            class="input mono"
            readOnly
            rows={3}
            value={props.value}
            aria-describedby={props.secret ? `${id}-warn` : undefined}
            onFocus={(e) => e.currentTarget.select()}
          />
        ) : (
          <input
            id={id}
            class="input mono"
            readOnly
            value={props.value}
            aria-describedby={props.secret ? `${id}-warn` : undefined}
            onFocus={(e) => e.currentTarget.select()}
          />
        )}
        <CopyButton text={props.value} what={props.label} />
      </div>
      {props.onDismiss && (
        <button type="button" class="btn btn-ghost btn-small" onClick={props.onDismiss}>
          I have stored it
        </button>
      )}
    </div>
  );
}
