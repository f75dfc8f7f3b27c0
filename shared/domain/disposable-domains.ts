// The disposable-address domains of the disposable_email fraud rule (docs/fraud.md "The rules"): the list of
// the npm package disposable-email-domains-js (the disposable-email-domains project's list as plain JSON,
// CC0), pinned in package.json and refreshed by dependency updates. About 170 KB of JSON, so this module is
// bundled apart (infra/cloud/bundling.ts lazyModules) and required on first use by shared/domain/fraud-rules.ts:
// only a function that looks an email up reads it. It imports the package only.
import { disposableEmailBlocklist } from 'disposable-email-domains-js';

const listed: ReadonlySet<string> = new Set(disposableEmailBlocklist().map((d) => d.trim().toLowerCase()));

/** How many domains the list holds. */
export const listedCount = (): number => listed.size;

/**
 * The listed domain an email address is at: its own domain or one of its parent domains
 * (`x.mailinator.com` is at `mailinator.com`); null when none is listed or the address has no domain.
 */
export function disposableDomainOf(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at < 0) return null;
  let domain = email
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, '');
  // A parent down to the registrable part; a bare top-level domain is never on the list.
  while (domain.includes('.')) {
    if (listed.has(domain)) return domain;
    domain = domain.slice(domain.indexOf('.') + 1);
  }
  return null;
}
