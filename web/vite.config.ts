// The operator dashboard's build (web/build.ts runs it after generating the API types and type-checking),
// and the member portal's page (portal.html, served by functions/portal/page.ts under /portal/<account_id>/).
// JSX goes through Vite's own oxc transform with Preact's automatic runtime: no Babel, no plugin.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/app/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    // Every page is same-origin and the app targets current browsers: no preload polyfill.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // Two pages: the dashboard (index.html, /app/) and the member portal (portal.html). Shared modules
    // (Preact, the formatters) become shared chunks; each page loads only what it imports.
    rolldownOptions: {
      input: {
        index: fileURLToPath(new URL('./index.html', import.meta.url)),
        portal: fileURLToPath(new URL('./portal.html', import.meta.url)),
      },
    },
  },
});
