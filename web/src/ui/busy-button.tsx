// A button for a long action: while busy it is disabled, says so (aria-busy) and shows what is happening.
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';

type ButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'children'>;

export function BusyButton(
  props: ButtonProps & {
    busy: boolean;
    busyLabel: string;
    children: ComponentChildren;
    variant?: 'primary' | 'secondary' | 'danger' | 'ghost';
  },
) {
  const { busy, busyLabel, children, variant = 'primary', class: extra, disabled, type = 'button', ...rest } = props;
  return (
    <button
      {...rest}
      type={type}
      class={`btn btn-${variant}${extra ? ` ${String(extra)}` : ''}`}
      disabled={busy || Boolean(disabled)}
      aria-busy={busy ? 'true' : undefined}
    >
      {busy ? (
        <>
          <span class="spinner" aria-hidden="true" />
          {busyLabel}
        </>
      ) : (
        children
      )}
    </button>
  );
}

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}
