// The host's theme for the portal (from the URL fragment, as the embed script passes it): each value is
// checked against a narrow pattern before use and lands in a CSS custom property through the CSSOM (the
// page's CSP has no 'unsafe-inline' styles; CSSOM writes are not inline markup). A value that does not
// match is ignored. The colours the page derives (cards, borders, muted text, text on the accent, links)
// are computed here so that each pair keeps WCAG AA contrast whatever the host chose.

export interface Theme {
  accent?: string;
  background?: string;
  text?: string;
  radius?: string;
  font?: string;
}

const COLOUR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
const RADIUS = /^\d{1,2}(px)?$/;
const FONT = /^[A-Za-z0-9 ,'"-]{1,100}$/;

/** The theme's valid values out of the fragment's parameters; anything else is dropped. */
export function themeFrom(params: URLSearchParams): Theme {
  const theme: Theme = {};
  for (const key of ['accent', 'background', 'text'] as const) {
    const value = params.get(key)?.trim();
    if (value && COLOUR.test(value)) theme[key] = value;
  }
  const radius = params.get('radius')?.trim();
  if (radius && RADIUS.test(radius) && Number.parseInt(radius, 10) <= 32) theme.radius = `${Number.parseInt(radius, 10)}px`;
  const font = params.get('font')?.trim();
  if (font && FONT.test(font)) theme.font = font;
  return theme;
}

type Rgb = [number, number, number];

function rgbOf(hex: string): Rgb {
  let h = hex.slice(1);
  if (h.length === 3) h = h.replace(/./g, (c) => c + c);
  // #rrggbbaa: the alpha is not used for contrast (what is behind it is the host's page).
  return [0, 2, 4].map((i) => Number.parseInt(h.slice(i, i + 2), 16)) as Rgb;
}

const hexOf = (c: Rgb) =>
  `#${c
    .map((v) =>
      Math.round(Math.min(255, Math.max(0, v)))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;

function luminance([r, g, b]: Rgb): number {
  const lin = (v: number) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export function contrast(a: Rgb, b: Rgb): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** `share` of `a` over `b` (0..1), in sRGB. */
const mix = (a: Rgb, b: Rgb, share: number): Rgb => [0, 1, 2].map((i) => a[i]! * share + b[i]! * (1 - share)) as Rgb;

/** `colour` moved towards `towards` until it reaches `ratio` against `on` (the first step that does). */
function ensureContrast(colour: Rgb, towards: Rgb, on: Rgb, ratio: number): Rgb {
  for (let share = 0; share <= 1; share += 0.05) {
    const c = mix(towards, colour, share);
    if (contrast(c, on) >= ratio) return c;
  }
  return towards;
}

const WHITE: Rgb = [255, 255, 255];
const INK: Rgb = [17, 24, 39];

/** The text colour readable on `background`: near-black or white, whichever contrasts more. */
export function inkOn(background: Rgb): Rgb {
  return contrast(INK, background) >= contrast(WHITE, background) ? INK : WHITE;
}

/** The CSS custom properties for a theme (only those it changes). */
export function themeProperties(theme: Theme): Record<string, string> {
  const props: Record<string, string> = {};
  if (theme.radius) {
    const r = Number.parseInt(theme.radius, 10);
    props['--radius'] = `${r}px`;
    props['--radius-small'] = `${Math.max(0, Math.round(r * 0.75))}px`;
  }
  if (theme.font) props['--font'] = `${theme.font}, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif`;
  if (!theme.accent && !theme.background && !theme.text) return props;

  const bg = theme.background ? rgbOf(theme.background) : ([246, 247, 249] as Rgb);
  const dark = luminance(bg) < 0.4;
  // Cards: white on a light page, a step lighter than a dark one.
  const surface: Rgb = dark ? mix(WHITE, bg, 0.06) : WHITE;
  // The host's text colour only when it reads on the cards (AA, 4.5:1); else the better of ink and white.
  const wanted = theme.text ? rgbOf(theme.text) : inkOn(surface);
  const text = contrast(wanted, surface) >= 4.5 && contrast(wanted, bg) >= 4.5 ? wanted : inkOn(surface);
  const surfaceMuted = mix(text, surface, 0.035);
  const muted = ensureContrast(mix(text, surface, 0.72), text, surfaceMuted, 4.6);
  const accent = theme.accent ? rgbOf(theme.accent) : ([79, 70, 229] as Rgb);
  // Links and focus rings in the accent where it reads on the cards; else the accent darkened (or
  // lightened) towards the text colour until it does.
  const accentText = ensureContrast(accent, text, surface, 4.5);
  const accentTextOnBg = ensureContrast(accent, text, bg, 4.5);

  props['--bg'] = theme.background ?? hexOf(bg);
  props['--surface'] = hexOf(surface);
  props['--surface-muted'] = hexOf(surfaceMuted);
  props['--border'] = hexOf(mix(text, surface, 0.13));
  props['--border-strong'] = hexOf(ensureContrast(mix(text, surface, 0.35), text, surface, 3));
  props['--text'] = hexOf(text);
  props['--text-muted'] = hexOf(muted);
  props['--text-on-bg-muted'] = hexOf(ensureContrast(mix(text, bg, 0.72), text, bg, 4.6));
  props['--accent'] = hexOf(accent);
  // Hover moves the accent away from its ink (darker under white text, lighter under dark text).
  props['--accent-hover'] = hexOf(mix(inkOn(accent) === WHITE ? [0, 0, 0] : WHITE, accent, 0.12));
  props['--accent-ink'] = hexOf(inkOn(accent));
  props['--accent-soft'] = hexOf(mix(accent, surface, 0.1));
  props['--accent-text'] = hexOf(accentText);
  props['--accent-text-on-bg'] = hexOf(accentTextOnBg);
  props['--focus'] = hexOf(accentText);
  props['--chart-bar'] = hexOf(ensureContrast(accent, text, surface, 3));
  if (dark) props['color-scheme'] = 'dark';
  return props;
}

/** Sets the theme's properties on the document's root element (CSSOM: allowed by the page's CSP). */
export function applyTheme(theme: Theme): void {
  const style = document.documentElement.style;
  for (const [name, value] of Object.entries(themeProperties(theme))) style.setProperty(name, value);
}
