// The admin CLI's fraud commands (infra/admin.ts; docs/operations.md): the rules shown and set, the review
// queue listed with its filters, a flag released, voided or reviewed, a held reward released; the same flows
// and messages as the API, run in process (test/support/admin-cli.ts).
import { randomBytes } from 'node:crypto';
import { DEFAULT_FRAUD_SETTINGS, type FraudFinding } from '../../shared/domain/fraud';
import { recordFinding } from '../../shared/flows/fraud-flags';
import { adminInProcess } from '../support/admin-cli';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';

const run = randomBytes(3).toString('hex');
let serial = 0;

const admin = async (args: string[]) => {
  const out = await adminInProcess(args);
  return { ...out, json: out.code === 0 ? JSON.parse(out.stdout) : null };
};

async function flagged(accountId: string, key: string) {
  const n = `${run}-${++serial}`;
  const m = (await api('POST', '/v1/members/', { key, body: { identifier: `m-${n}`, email: `m-${n}@example.com` } })).body;
  const r = (await api('POST', '/v1/referrals/', { key, body: { user_identifier: `u-${n}`, member_code: m.code } })).body;
  const finding: FraudFinding = {
    rule: 'duplicate_ip',
    subject: { type: 'referral', id: r.id },
    member_id: m.id,
    detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
    evidence: { referral_ids: [r.id] },
    dedupe_key: `duplicate_ip#referral#${r.id}`,
  };
  const flag = await recordFinding(accountId, finding, DEFAULT_FRAUD_SETTINGS);
  return { member: m.id as string, flag: flag?.id as string };
}

describe('admin fraud', () => {
  it('shows the rules and sets one (its thresholds checked as the API checks them)', async () => {
    const { accountId, apiKey } = await newAccount();
    const shown = await admin(['fraud', 'rules', '--account', accountId]);
    expect(shown).toMatchObject({ code: 0, json: { account_id: accountId, rules: DEFAULT_FRAUD_SETTINGS } });

    const set = await admin(['fraud', 'rules', 'set', 'duplicate_ip', 'hold', 'max_referrals=5', '--account', accountId]);
    expect(set.code).toBe(0);
    expect(set.json.rules.duplicate_ip).toEqual({ action: 'hold', max_referrals: 5, window_hours: 24 });
    expect((await api('GET', '/v1/fraud-rules/', { key: apiKey })).body.duplicate_ip).toEqual(set.json.rules.duplicate_ip);

    const bad = [
      [['fraud', 'rules', 'set', 'nope', 'hold'], 2, /the rule must be one of self_referral/],
      [['fraud', 'rules', 'set', 'velocity', 'maybe'], 2, /the action must be one of off, flag, hold/],
      [['fraud', 'rules', 'set', 'velocity', 'flag', 'multiple'], 2, /a threshold is <name>=<whole number>/],
      [['fraud', 'rules', 'set', 'velocity', 'flag', 'multiple=1'], 1, /multiple: must be between 2 and 1000/],
      [['fraud', 'rules', 'set', 'self_referral', 'flag', 'ratio=3'], 1, /self_referral takes only an action/],
    ] as const;
    for (const [args, code, message] of bad) {
      const out = await admin([...args, '--account', accountId]);
      expect({ args, code: out.code }).toEqual({ args, code });
      expect(out.stderr).toMatch(message);
    }
    // Nothing changed by the refused ones.
    expect((await admin(['fraud', 'rules', '--account', accountId])).json.rules.velocity).toEqual(DEFAULT_FRAUD_SETTINGS.velocity);
  });

  it('lists the queue with its filters and resolves a flag as the API does', async () => {
    const { accountId, apiKey } = await newAccount();
    const a = await flagged(accountId, apiKey);
    const b = await flagged(accountId, apiKey);

    const all = await admin(['fraud', 'flags', '--account', accountId]);
    expect(all.json).toMatchObject({ account_id: accountId, count: 2, results: [{ id: b.flag }, { id: a.flag }] });
    const mine = await admin([
      'fraud',
      'flags',
      '--account',
      accountId,
      '--member',
      a.member,
      '--status',
      'open',
      '--rule',
      'duplicate_ip',
    ]);
    expect(mine.json).toMatchObject({ count: 1, results: [{ id: a.flag, status: 'open' }] });
    expect((await admin(['fraud', 'flags', '--account', accountId, '--status', 'closed'])).code).toBe(2);

    const reviewed = await admin(['fraud', 'review', a.flag, '--account', accountId, '--note', 'Same office.']);
    expect(reviewed.json).toMatchObject({ id: a.flag, status: 'reviewed', note: 'Same office.' });
    expect((await api('GET', `/v1/fraud-flags/${a.flag}/`, { key: apiKey })).body).toEqual(reviewed.json);
    const again = await admin(['fraud', 'review', a.flag, '--account', accountId]);
    expect(again.json).toEqual(reviewed.json);
    const refused = await admin(['fraud', 'release', a.flag, '--account', accountId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/This flag is reviewed already/);
    expect((await admin(['fraud', 'void', b.flag, '--account', accountId])).json).toMatchObject({ id: b.flag, status: 'voided' });

    const unknown = await admin(['fraud', 'release', `ff_${'0'.repeat(32)}`, '--account', accountId]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/has no fraud flag/);
    expect((await admin(['fraud', 'release', '--account', accountId])).code).toBe(2);
    expect((await admin(['rewards', 'release', '0190a3c1e2f37b4c8d9e0f1a2b3c4d5e', '--account', accountId])).stderr).toMatch(
      /has no reward/,
    );
  });
});
