// GET /docs/ - the API reference: a static HTML rendering of the OpenAPI document; no authentication.
// Compressed when the client accepts it (shared/http/compressed.ts), with a Content-Security-Policy that
// allows nothing but the page's own inline style (by its hash): no script, no other resource, no framing.
import { createHash } from 'node:crypto';
import { compressedText } from '../../shared/http/compressed';
import { publicHandler } from '../../shared/http/respond';
import { openApiDocument } from '../../shared/openapi/document';
import { renderReference } from '../../shared/openapi/html';
import { routes } from '../routes';

/** The page's CSP: each inline `<style>` element allowed by its SHA-256, everything else refused. */
export function referencePolicy(page: string): string {
  const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map(
    (m) =>
      `'sha256-${createHash('sha256')
        .update(m[1] as string, 'utf8')
        .digest('base64')}'`,
  );
  return [
    `default-src 'none'`,
    `style-src ${styles.length > 0 ? styles.join(' ') : `'none'`}`,
    `base-uri 'none'`,
    `form-action 'none'`,
    `frame-ancestors 'none'`,
  ].join('; ');
}

let respond: ReturnType<typeof compressedText> | undefined;

export const handler = publicHandler(async (event) => {
  if (!respond) {
    const page = renderReference(openApiDocument(routes));
    respond = compressedText(page, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'public, max-age=300',
      'Content-Security-Policy': referencePolicy(page),
      'X-Content-Type-Options': 'nosniff',
    });
  }
  return respond(event);
});
