// An affiliate programme's settings through the real handlers and the operator CLI: the account's slug
// (derived, unique across the service, reserved words refused), attribution model and window, tax-details
// switch, affiliate email switches and theme (GET/PATCH /v1/account/), and a campaign's slug (derived,
// unique within its account, freed on delete) and sign-up settings (validation, merging PATCH).
import { adminInProcess } from '../support/admin-cli';
import { findAccountBySlug, findCampaignBySlug } from '../../shared/store/slugs';
import { getItem } from '../../shared/store/ops';
import { programmeKeys } from '../../shared/store/table';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';

const ACCOUNT = '/v1/account/';

/** The admin CLI's `main` in this process (test/support/admin-cli.ts): its exit code and its one JSON line. */
async function admin(args: string[]): Promise<{ code: number; out: Record<string, unknown> | null; err: string }> {
  const { code, stdout, stderr } = await adminInProcess(args);
  return { code: code ?? 1, out: code === 0 ? JSON.parse(stdout) : null, err: code === 0 ? '' : stderr };
}

describe('the account slug', () => {
  it('is derived from the name at creation, unique, and finds the account', async () => {
    const { accountId, apiKey } = await newAccount();
    const res = await api('GET', ACCOUNT, { key: apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      slug: expect.stringMatching(/^test-[0-9a-f]{8}$/),
      attribution_model: 'first_click',
      attribution_days: 60,
      tax_details_required: false,
      affiliate_emails: { new_referral: false, monthly_summary: false },
      theme: {},
    });
    const found = await findAccountBySlug(res.body.slug);
    expect(found?.accountId).toBe(accountId);
  });

  it('changes atomically: the old slug is freed, a taken or reserved one is refused with a field error', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const mine = `acme-${Date.now().toString(36)}`;
    const set = await api('PATCH', ACCOUNT, { key: a.apiKey, body: { slug: mine } });
    expect(set.status).toBe(200);
    expect(set.body.slug).toBe(mine);
    expect((await findAccountBySlug(mine))?.accountId).toBe(a.accountId);

    const taken = await api('PATCH', ACCOUNT, { key: b.apiKey, body: { slug: mine } });
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ slug: [expect.stringContaining('already in use')] });

    const reserved = await api('PATCH', ACCOUNT, { key: b.apiKey, body: { slug: 'v1' } });
    expect(reserved.status).toBe(400);
    expect(reserved.body).toEqual({ slug: [expect.stringContaining('reserved')] });

    const bad = await api('PATCH', ACCOUNT, { key: b.apiKey, body: { slug: 'Not A Slug' } });
    expect(bad.status).toBe(400);
    expect(bad.body.slug).toHaveLength(1);

    const moved = await api('PATCH', ACCOUNT, { key: a.apiKey, body: { slug: `${mine}-2` } });
    expect(moved.status).toBe(200);
    expect(await findAccountBySlug(mine)).toBeNull();
    expect(await getItem(programmeKeys.accountSlug(mine))).toBeUndefined();
    // The freed slug can be taken by another account.
    expect((await api('PATCH', ACCOUNT, { key: b.apiKey, body: { slug: mine } })).status).toBe(200);
  });

  it('two accounts racing for one slug: exactly one gets it', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const slug = `race-${Date.now().toString(36)}`;
    const [x, y] = await Promise.all([
      api('PATCH', ACCOUNT, { key: a.apiKey, body: { slug } }),
      api('PATCH', ACCOUNT, { key: b.apiKey, body: { slug } }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 400]);
    const winner = x.status === 200 ? a.accountId : b.accountId;
    expect((await findAccountBySlug(slug))?.accountId).toBe(winner);
  });
});

describe('attribution, tax details, emails and theme', () => {
  it('are saved and validated', async () => {
    const { apiKey } = await newAccount();
    const ok = await api('PATCH', ACCOUNT, {
      key: apiKey,
      body: {
        attribution_model: 'last_click',
        attribution_days: 90,
        tax_details_required: true,
        affiliate_emails: { monthly_summary: true },
        theme: { accent: '#0B5FFF', radius: '4px', font: 'Inter' },
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      attribution_model: 'last_click',
      attribution_days: 90,
      tax_details_required: true,
      affiliate_emails: { new_referral: false, monthly_summary: true },
      theme: { accent: '#0b5fff', radius: '4px', font: 'Inter' },
    });
    // The switches merge: one given, the other kept.
    const merged = await api('PATCH', ACCOUNT, { key: apiKey, body: { affiliate_emails: { new_referral: true } } });
    expect(merged.body.affiliate_emails).toEqual({ new_referral: true, monthly_summary: true });

    for (const body of [
      { attribution_days: 0 },
      { attribution_days: 366 },
      { attribution_model: 'linear' },
      { tax_details_required: 'maybe' },
      { affiliate_emails: { weekly: true } },
      { theme: { accent: 'red' } },
      { theme: { radius: '100px' } },
    ]) {
      const res = await api('PATCH', ACCOUNT, { key: apiKey, body });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(Object.keys(body));
    }
  });

  it('the monthly summary switch keeps its registry item in step', async () => {
    const { accountId, apiKey } = await newAccount();
    await api('PATCH', ACCOUNT, { key: apiKey, body: { affiliate_emails: { monthly_summary: true } } });
    expect(await getItem(programmeKeys.summaryAccount(accountId))).toMatchObject({ account_id: accountId });
    await api('PATCH', ACCOUNT, { key: apiKey, body: { affiliate_emails: { monthly_summary: false } } });
    expect(await getItem(programmeKeys.summaryAccount(accountId))).toBeUndefined();
  });
});

describe('a campaign slug and sign-up settings', () => {
  it('derive the slug from the name, keep it unique within the account, and free it on delete', async () => {
    const { accountId, apiKey } = await newAccount();
    const first = await api('POST', '/v1/campaigns/', { key: apiKey, body: { name: 'Spring Partners' } });
    expect(first.status).toBe(201);
    expect(first.body.slug).toBe('spring-partners');
    expect(first.body.signup).toEqual({ enabled: false, approval: 'manual', terms_url: null, questions: [] });
    // Another name that slugifies the same gets the next free slug.
    const second = await api('POST', '/v1/campaigns/', { key: apiKey, body: { name: 'Spring  partners!' } });
    expect(second.body.slug).toBe('spring-partners-2');
    const clash = await api('PATCH', `/v1/campaigns/${second.body.id}/`, { key: apiKey, body: { slug: 'spring-partners' } });
    expect(clash.status).toBe(400);
    expect(clash.body).toEqual({ slug: [expect.stringContaining('already in use')] });
    expect((await findCampaignBySlug(accountId, 'spring-partners'))?.id).toBe(first.body.id);

    // Another account may use the same campaign slug.
    const other = await newAccount();
    expect((await api('POST', '/v1/campaigns/', { key: other.apiKey, body: { name: 'Spring Partners' } })).body.slug).toBe(
      'spring-partners',
    );

    expect((await api('DELETE', `/v1/campaigns/${first.body.id}/`, { key: apiKey })).status).toBe(204);
    expect(await findCampaignBySlug(accountId, 'spring-partners')).toBeNull();
    expect((await api('PATCH', `/v1/campaigns/${second.body.id}/`, { key: apiKey, body: { slug: 'spring-partners' } })).status).toBe(200);
  });

  it('validates the sign-up settings and merges a PATCH over them', async () => {
    const { apiKey } = await newAccount();
    const question = (i: number) => ({ id: `q${i}`, label: `Question ${i}`, type: 'text', required: false });
    const created = await api('POST', '/v1/campaigns/', {
      key: apiKey,
      body: {
        name: 'Creators',
        signup: {
          enabled: true,
          approval: 'auto',
          terms_url: 'https://acme.example/terms',
          questions: [
            { id: 'audience', label: 'Where is your audience?', type: 'choice', required: true, options: ['YouTube', 'Blog'] },
            { id: 'site', label: 'Your website', type: 'url' },
          ],
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.signup).toEqual({
      enabled: true,
      approval: 'auto',
      terms_url: 'https://acme.example/terms',
      questions: [
        { id: 'audience', label: 'Where is your audience?', type: 'choice', required: true, options: ['YouTube', 'Blog'] },
        { id: 'site', label: 'Your website', type: 'url', required: false, options: null },
      ],
    });
    const patched = await api('PATCH', `/v1/campaigns/${created.body.id}/`, { key: apiKey, body: { signup: { approval: 'manual' } } });
    expect(patched.status).toBe(200);
    expect(patched.body.signup).toMatchObject({ enabled: true, approval: 'manual', terms_url: 'https://acme.example/terms' });
    expect(patched.body.signup.questions).toHaveLength(2);

    for (const signup of [
      { questions: Array.from({ length: 11 }, (_, i) => question(i)) },
      { questions: [question(1), question(1)] },
      { questions: [{ id: 'x', label: 'Pick', type: 'choice', options: ['only one'] }] },
      { questions: [{ id: 'Bad Id', label: 'x' }] },
      { approval: 'sometimes' },
      { terms_url: 'javascript:alert(1)' },
      { enabled: 'yes' },
      { colour: 'blue' },
      'open',
    ]) {
      const res = await api('PATCH', `/v1/campaigns/${created.body.id}/`, { key: apiKey, body: { signup } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ signup: [expect.any(String)] });
    }
  });
});

describe('the operator CLI', () => {
  it('sets the programme and opens a campaign, printing its page', async () => {
    const { accountId, apiKey } = await newAccount();
    const campaign = await api('POST', '/v1/campaigns/', { key: apiKey, body: { name: 'CLI Partners' } });
    const slug = `cli-${Date.now().toString(36)}`;
    const programme = await admin([
      'account',
      'set-programme',
      '--account',
      accountId,
      '--slug',
      slug,
      '--attribution',
      'last_click',
      '--attribution-days',
      '30',
    ]);
    expect(programme).toMatchObject({
      code: 0,
      out: { slug, attribution_model: 'last_click', attribution_days: 30, tax_details_required: false },
    });
    const opened = await admin([
      'campaign',
      'set-signup',
      '--account',
      accountId,
      '--campaign',
      campaign.body.id,
      '--enabled',
      'on',
      '--approval',
      'auto',
      '--api-url',
      'http://localhost:3000',
    ]);
    expect(opened.code).toBe(0);
    expect(opened.out).toMatchObject({
      slug: 'cli-partners',
      signup: { enabled: true, approval: 'auto' },
      join_url: `http://localhost:3000/join/${slug}/cli-partners/`,
    });
    const bad = await admin(['account', 'set-programme', '--account', accountId, '--attribution-days', '0']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('attribution_days');
  });
});
