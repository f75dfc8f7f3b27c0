// The documentation says what the code does (issue 23, item 20): docs/webhooks.md lists exactly the event
// types the service sends, every API path the README and the API tour show is a path of the OpenAPI
// document as written there (trailing slash included), and every frequency the docs give for the
// background sync (the backfill) is the schedule's own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { routes } from '../../functions/routes';
import { scheduledJobs } from '../../functions/workers';
import { PROVIDER_DEFINITIONS } from '../../shared/billing/registry';
import { EVENT_TYPES } from '../../shared/domain/events';
import { batchView } from '../../shared/domain/payout-views';
import { PAYOUT_BATCH } from '../../shared/openapi/examples';
import { buildOpenApi } from '../../shared/openapi/document';

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('docs/webhooks.md', () => {
  it('lists exactly the event types the service sends', () => {
    const text = read('docs/webhooks.md');
    // The events table: rows whose first cell is a backticked `noun.verb`.
    const listed = [...text.matchAll(/^\s*\|\s*`([a-z_]+\.[a-z_]+)`\s*\|/gm)].map((m) => m[1] as string);
    expect(listed.length).toBe(new Set(listed).size);
    expect([...listed].sort()).toEqual([...EVENT_TYPES].sort());
  });
});

/** The API paths (`/v1/`, `/js/v1/`, `/portal/v1/`, `/join/v1/`) written in a Markdown text: placeholders kept as one segment, queries dropped, brace lists expanded. */
export function documentedPaths(text: string): string[] {
  const found = new Set<string>();
  // A path runs until whitespace, a quote, a backtick, a bracket or a query; `<...>`, `${...}` and `{...}` are one piece each.
  const pattern = /(?:\/js|\/portal|\/join)?\/v1\/(?:<[^>\n]*>|\$\{[^}\n]*\}|\{[^}\n]*\}|[^\s`"'()<>[\]{}?#|\\,;])*/g;
  for (const [raw] of text.matchAll(pattern)) {
    const path = raw.replace(/[.:]+$/, (tail) => (raw.endsWith('.json') ? tail : ''));
    const lists = [...path.matchAll(/\{([^}]*,[^}]*)\}/g)];
    if (lists.length === 0) {
      found.add(path);
      continue;
    }
    // `/v1/exports/{members,referrals}.csv/`: one path per choice.
    const [first] = lists;
    for (const choice of (first?.[1] ?? '').split(',')) found.add(path.replace(first?.[0] ?? '', choice.trim()));
  }
  return [...found];
}

describe('paths in the README and the API tour', () => {
  const doc = buildOpenApi(routes) as { paths: Record<string, unknown> };
  // `{name}` matches one segment, as the gateway routes it.
  const templates = Object.keys(doc.paths).map((p) => ({
    p,
    re: new RegExp(`^${p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  // A placeholder in the text (`<bob's referral id>`, `$MEMBER`, `${memberId}`, `{id}`) stands for one segment.
  const concrete = (path: string) => path.replace(/<[^>]*>|\$\{[^}]*\}|\$[A-Z_]+|\{[^}]*\}/g, 'x');

  it.each(['README.md', 'docs/api-tour.md'])('every API path in %s is in the OpenAPI document as written', (file) => {
    const paths = documentedPaths(read(file));
    expect(paths.length).toBeGreaterThan(5);
    // The JSON document itself is served beside the API, not one of its operations.
    const unknown = paths.filter((p) => p !== '/v1/openapi.json' && !templates.some((t) => t.re.test(concrete(p))));
    expect({ file, unknown }).toEqual({ file, unknown: [] });
  });

  it("a payout batch's file_url (the view and the document's example) is the route as the document writes it", () => {
    const urls = [
      batchView(
        { id: 'pb_1', format: 'wise', currency: 'USD', status: 'processing', payout_ids: [], amount: 0, created_at: 0 },
        'https://api.example.com',
      ).file_url ?? 'no file_url',
      PAYOUT_BATCH.file_url,
    ];
    for (const url of urls) expect({ url, known: templates.some((t) => t.re.test(new URL(url).pathname)) }).toEqual({ url, known: true });
  });

  it('the check does catch a path without its trailing slash, and expands brace lists', () => {
    expect(documentedPaths('GET `/v1/exports/{members,rewards}.csv/` and $API/v1/payout-batches/<wise batch>/file -H')).toEqual([
      '/v1/exports/members.csv/',
      '/v1/exports/rewards.csv/',
      '/v1/payout-batches/<wise batch>/file',
    ]);
    expect(templates.some((t) => t.re.test(concrete('/v1/payout-batches/<wise batch>/file')))).toBe(false);
    expect(templates.some((t) => t.re.test(concrete('/v1/payout-batches/<wise batch>/file/')))).toBe(true);
  });
});

describe('the background sync schedule', () => {
  it('every frequency the docs give for the backfill is the schedule of the ProviderBackfill job', () => {
    const job = scheduledJobs.find((j) => j.name === 'ProviderBackfill');
    if (!job) throw new Error('no ProviderBackfill job in functions/workers.ts');
    const files = [
      'README.md',
      'docs/api.md',
      'docs/operations.md',
      'docs/rewards.md',
      // Every provider's page (shared/billing/registry.ts).
      ...PROVIDER_DEFINITIONS.map((d) => d.docsPage),
    ];
    const minutes = (f: string) => {
      if (/^hourly$/i.test(f)) return 60;
      const m = /every\s+(\d+)\s*(h|hours?|minutes?)\b/i.exec(f);
      return m ? Number(m[1]) * (m[2]?.toLowerCase().startsWith('h') ? 60 : 1) : NaN;
    };
    const said: { file: string; text: string; minutes: number }[] = [];
    for (const file of files) {
      const text = read(file).replace(/\s+/g, ' ');
      const near =
        /(?:(hourly|every \d+ ?(?:h|hours?|minutes?)\b)[^.|;]{0,15}?(?:backfill|background[- ]sync))|(?:(?:backfill|background[- ]sync)[^.|;]{0,25}?(hourly|every \d+ ?(?:h|hours?|minutes?)\b))/gi;
      for (const m of text.matchAll(near)) said.push({ file, text: m[0], minutes: minutes((m[1] ?? m[2]) as string) });
    }
    expect(said.length).toBeGreaterThanOrEqual(3);
    expect(said.filter((s) => s.minutes !== job.everyMinutes)).toEqual([]);
  });
});
