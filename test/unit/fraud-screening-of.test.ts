// Which outbox events the webhook fan-out hands to the fraud screening (shared/webhooks/fanout.ts
// screeningOf; docs/fraud.md "When the rules run"), with the ids read from the event's data.
import { screeningOf } from '../../shared/webhooks/fanout';

const payload = (type: string, data: Record<string, unknown>) => JSON.stringify({ id: 'evt', type, created_at: 1, data });
const R = '0190a3c1e2f37b4c8d9e0f1a2b3c4d5e';
const M = '0190a3c1e2f37b4c8d9e0f1a2b3c4d5f';

describe('screeningOf', () => {
  it('hands on new referrals, conversions and applications with their ids', () => {
    expect(screeningOf('acct', 'referral.created', payload('referral.created', { id: R, member_id: M }))).toEqual({
      kind: 'screen',
      account_id: 'acct',
      event_type: 'referral.created',
      subject_id: R,
      member_id: M,
    });
    expect(screeningOf('acct', 'referral.converted', payload('referral.converted', { id: R, member_id: M }))).toMatchObject({
      event_type: 'referral.converted',
      subject_id: R,
    });
    expect(screeningOf('acct', 'application.created', payload('application.created', { id: 'app_1', member_id: null }))).toEqual({
      kind: 'screen',
      account_id: 'acct',
      event_type: 'application.created',
      subject_id: 'app_1',
    });
  });

  it('hands on clawbacks and refunded voids only', () => {
    const reward = { id: R, member_id: M, amount: '2.50', void_reason: null };
    expect(screeningOf('acct', 'reward.created', payload('reward.created', reward))).toBeNull();
    expect(screeningOf('acct', 'reward.created', payload('reward.created', { ...reward, amount: '-2.50' }))).toMatchObject({
      member_id: M,
    });
    expect(screeningOf('acct', 'reward.voided', payload('reward.voided', { ...reward, void_reason: 'manual' }))).toBeNull();
    expect(screeningOf('acct', 'reward.voided', payload('reward.voided', { ...reward, void_reason: 'fraud' }))).toBeNull();
    expect(screeningOf('acct', 'reward.voided', payload('reward.voided', { ...reward, void_reason: 'refunded' }))).toMatchObject({
      event_type: 'reward.voided',
      subject_id: R,
      member_id: M,
    });
  });

  it('ignores other events and payloads it cannot read', () => {
    expect(screeningOf('acct', 'member.created', payload('member.created', { id: M }))).toBeNull();
    expect(screeningOf('acct', 'fraud.flagged', payload('fraud.flagged', { id: 'ff_1' }))).toBeNull();
    expect(screeningOf('acct', 'referral.created', '{not json')).toBeNull();
    expect(screeningOf('acct', 'referral.created', undefined)).toBeNull();
    expect(screeningOf('acct', 'referral.created', payload('referral.created', {}))).toBeNull();
  });
});
