// The shell of the service's own public pages for affiliate programmes (the sign-up page, its confirmation
// page): one HTML document with its style and, optionally, one script inline, so a page is one request.
//
// The Content-Security-Policy allows exactly that style and that script by their SHA-256 (no
// 'unsafe-inline', nothing from elsewhere), forms post only to this site, and nobody may frame the page.
// The account's theme (shared/domain/affiliates.ts storedTheme: every value already checked against a
// narrow pattern) becomes CSS custom properties in a second inline style, hashed the same way. Pages work
// without their script: it only enhances (docs/affiliates.md "The sign-up page").
import { createHash } from 'node:crypto';
import type { Theme } from '../domain/affiliates';

export const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

/** The base style: system fonts, one centred card, WCAG AA colours (the theme may change them). */
export const BASE_STYLE = `
:root{--accent:#1a56db;--bg:#f6f7f9;--text:#1f2328;--muted:#57606a;--card:#fff;--border:#d0d7de;--radius:10px;--font:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;--danger:#b42318}
*{box-sizing:border-box}
html{background:var(--bg);color:var(--text);font-family:var(--font);line-height:1.5}
body{margin:0;padding:2rem 1rem}
main{max-width:40rem;margin:0 auto;background:var(--card);border:1px solid var(--border);border-radius:var(--radius);padding:2rem}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 .5rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
p{margin:.5rem 0}
.muted{color:var(--muted)}
.terms{background:var(--bg);border-radius:var(--radius);padding:.75rem 1rem;margin:1rem 0}
form{display:grid;gap:1rem;margin-top:1.25rem}
label{font-weight:600;display:block;margin-bottom:.25rem}
.hint{font-weight:400;color:var(--muted);font-size:.9rem}
input,select,textarea{width:100%;font:inherit;color:inherit;background:#fff;border:1px solid var(--border);border-radius:calc(var(--radius) / 2);padding:.55rem .7rem}
input:focus-visible,select:focus-visible,textarea:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.check{display:flex;gap:.6rem;align-items:flex-start}
.check input{width:auto;margin-top:.3rem}
.check label{font-weight:400;margin:0}
button{font:inherit;font-weight:600;color:#fff;background:var(--accent);border:0;border-radius:calc(var(--radius) / 2);padding:.7rem 1.2rem;cursor:pointer;justify-self:start}
button[disabled]{opacity:.6;cursor:progress}
a{color:var(--accent)}
.error{color:var(--danger);font-size:.9rem;margin:.25rem 0 0}
[aria-invalid="true"]{border-color:var(--danger)}
.notice{border-left:4px solid var(--accent);background:var(--bg);padding:.75rem 1rem;border-radius:calc(var(--radius) / 2)}
footer{max-width:40rem;margin:1rem auto 0;font-size:.85rem;color:var(--muted);text-align:center}
@media (max-width:30rem){main{padding:1.25rem}body{padding:1rem .5rem}}
`.trim();

type Rgb = [number, number, number];
const rgbOf = (hex: string): Rgb => {
  let h = hex.slice(1);
  if (h.length === 3) h = h.replace(/./g, (c) => c + c);
  return [0, 2, 4].map((i) => Number.parseInt(h.slice(i, i + 2), 16)) as Rgb;
};
const luminance = ([r, g, b]: Rgb) => {
  const lin = (v: number) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
};
export const contrast = (a: string, b: string): number => {
  const [hi, lo] = [luminance(rgbOf(a)), luminance(rgbOf(b))].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
};

/**
 * The theme as CSS custom properties. A colour pair that would fall under WCAG AA (4.5:1) is not applied:
 * the page keeps its default for it rather than become unreadable (the operator sees the same in the
 * dashboard's preview).
 */
export function themeStyle(theme: Theme): string {
  const vars: string[] = [];
  const bg = theme.background ?? '#f6f7f9';
  const text = theme.text && contrast(theme.text, '#ffffff') >= 4.5 && contrast(theme.text, bg) >= 4.5 ? theme.text : null;
  if (theme.background && contrast(text ?? '#1f2328', theme.background) >= 4.5) vars.push(`--bg:${theme.background}`);
  if (text) vars.push(`--text:${text}`);
  // The accent carries white button text and is the link colour on white cards.
  if (theme.accent && contrast(theme.accent, '#ffffff') >= 4.5) vars.push(`--accent:${theme.accent}`);
  if (theme.radius) vars.push(`--radius:${theme.radius}`);
  if (theme.font) vars.push(`--font:${theme.font},system-ui,sans-serif`);
  return vars.length > 0 ? `:root{${vars.join(';')}}` : '';
}

export interface PublicPage {
  title: string;
  /** The <main> element's content (already escaped by the caller). */
  body: string;
  theme?: Theme;
  /** One inline script (progressive enhancement); allowed by its hash. */
  script?: string;
  /** The HTML lang (default en). */
  lang?: string;
  /** Below the card, e.g. "Powered by Refloop". */
  footer?: string;
  status?: number;
}

export interface PageResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** The page and its headers (no cache, no Referer: some of these addresses carry a token). */
export function publicPage(p: PublicPage): PageResult {
  const theme = themeStyle(p.theme ?? {});
  const styles = [BASE_STYLE, ...(theme ? [theme] : [])];
  const csp = [
    "default-src 'none'",
    `style-src ${styles.map(sha256).join(' ')}`,
    `script-src ${p.script ? sha256(p.script) : "'none'"}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  const body = [
    '<!doctype html>',
    `<html lang="${escapeHtml(p.lang ?? 'en')}"><head><meta charset="utf-8">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex">',
    `<title>${escapeHtml(p.title)}</title>`,
    ...styles.map((s) => `<style>${s}</style>`),
    '</head><body>',
    `<main>${p.body}</main>`,
    ...(p.footer ? [`<footer>${p.footer}</footer>`] : []),
    ...(p.script ? [`<script>${p.script}</script>`] : []),
    '</body></html>',
    '',
  ].join('\n');
  return {
    statusCode: p.status ?? 200,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': csp,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
      'X-Frame-Options': 'DENY',
    },
    body,
  };
}
