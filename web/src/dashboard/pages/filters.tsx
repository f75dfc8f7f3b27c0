// A row of filter links (status tabs): each one is an address, so filters survive reload and back/forward.
export function StatusFilter({
  label,
  current,
  options,
  href,
}: {
  label: string;
  current: string;
  options: { value: string; label: string }[];
  href: (value: string) => string;
}) {
  return (
    <nav class="tabs" aria-label={label}>
      {options.map((o) => (
        <a
          key={o.value}
          href={href(o.value)}
          class={o.value === current ? 'tab is-selected' : 'tab'}
          aria-current={o.value === current ? 'true' : undefined}
        >
          {o.label}
        </a>
      ))}
    </nav>
  );
}
