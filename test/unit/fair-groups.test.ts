// Fair queues (issue 29): the MessageGroupId every message is sent with comes from one place,
// shared/queue/queues.ts messageGroupId. Every message kind of every per-tenant queue gets its account;
// the queue that is no tenant's (SES events) and a message that names no account get none. The samples
// below are typed per kind: a new message kind does not compile until it has one here.
import { redriveGroup } from '../../infra/ops';
import { messageGroupId, QUEUE_NAMES, type QueueMessages, type QueueName, SHARED_QUEUES } from '../../shared/queue/queues';

type PerTenantQueue = Exclude<QueueName, 'email-events'>;
type KindsOf<Q extends PerTenantQueue> = Extract<QueueMessages[Q], { kind: string }>['kind'];
/** One sample per message kind of each per-tenant queue, for the account `acct_1` where the kind names one. */
type Samples = { [Q in PerTenantQueue]: { [K in KindsOf<Q>]: Extract<QueueMessages[Q], { kind: K }> } };

const A = 'acct_1';
const samples: Samples = {
  'provider-events': {
    'paddle-alert': { kind: 'paddle-alert', account_id: A, fields: {}, received_at: 1 },
    'provider-webhook': { kind: 'provider-webhook', provider: 'stripe', account_id: A, headers: {}, raw_body: '{}', received_at: 1 },
    'sync-account': { kind: 'sync-account', account_id: A, state: 'live', page: 1, started_at: 1 },
  },
  rewards: {
    'evaluate-referral': { kind: 'evaluate-referral', account_id: A, referral_id: 'r' },
    'apply-member-credits': { kind: 'apply-member-credits', account_id: A, member_id: 'm' },
    'create-coupon': { kind: 'create-coupon', account_id: A, referral_id: 'r' },
    'approve-due': { kind: 'approve-due', account_id: A },
  },
  'member-emails': {
    'member-email': { kind: 'member-email', account_id: A, template: 'conversion', referral_id: 'r', member_id: 'm' },
    // An invitation names its team.
    'login-link': { kind: 'login-link', email: 'a@example.com', base_url: 'https://x', account_id: A, invited_by: 'u' },
    'affiliate-email': { kind: 'affiliate-email', template: 'payout-sent', account_id: A, member_id: 'm', payout_id: 'p' },
  },
  'webhook-events': {
    'dispatch-event': { kind: 'dispatch-event', account_id: A, event_id: 'e' },
    'purge-endpoint': { kind: 'purge-endpoint', account_id: A, endpoint_id: 'ep' },
  },
  'webhook-deliveries': {
    deliver: { kind: 'deliver', account_id: A, endpoint_id: 'ep', delivery: '1#e' },
  },
  'payout-rails': {
    'send-rail-batch': { kind: 'send-rail-batch', account_id: A, batch_id: 'b' },
    'rail-webhook': {
      kind: 'rail-webhook',
      account_id: A,
      rail: 'paypal',
      delivery_id: 'd',
      outcomes: [],
      account_updates: [],
      received_at: 1,
    },
    'reconcile-rail-batch': { kind: 'reconcile-rail-batch', account_id: A, batch_id: 'b' },
    'resend-rail-payout': { kind: 'resend-rail-payout', account_id: A, payout_id: 'p', attempt: 2 },
  },
  fraud: {
    screen: { kind: 'screen', account_id: A, event_type: 'referral.created', subject_id: 'r' },
  },
};

describe('fair-queue groups (MessageGroupId = account_id)', () => {
  it('gives every message kind of every per-tenant queue its account as group', () => {
    expect(Object.keys(samples).sort()).toEqual(QUEUE_NAMES.filter((q) => !SHARED_QUEUES.includes(q)).sort());
    for (const [queue, kinds] of Object.entries(samples) as [PerTenantQueue, Record<string, QueueMessages[PerTenantQueue]>][]) {
      for (const [kind, message] of Object.entries(kinds)) {
        expect({ queue, kind, group: messageGroupId(queue, message) }).toEqual({ queue, kind, group: A });
      }
    }
  });

  it('gives none on the queue that is no tenant’s (SES events from EventBridge), nor to a message naming no account', () => {
    expect(SHARED_QUEUES).toEqual(['email-events']);
    const bounce: QueueMessages['email-events'] = {
      source: 'aws.ses',
      'detail-type': 'Email Bounced',
      detail: { eventType: 'Bounce', mail: { tags: { account_id: [A] } } },
    };
    expect(messageGroupId('email-events', bounce)).toBeUndefined();
    // A login link asked for by address may mail several teams: no account, no group (SQS: a tenant of its own).
    expect(messageGroupId('member-emails', { kind: 'login-link', email: 'a@example.com', base_url: 'https://x' })).toBeUndefined();
    expect(messageGroupId('rewards', { kind: 'approve-due', account_id: '' })).toBeUndefined();
  });

  it("redrives a dead letter with the group it was sent with, else its account's (a message sent before the groups)", () => {
    const body = JSON.stringify(samples.rewards['approve-due']);
    expect(redriveGroup('rewards', body, 'acct_sent')).toBe('acct_sent');
    expect(redriveGroup('rewards', body, undefined)).toBe(A);
    expect(redriveGroup('email-events', JSON.stringify({ source: 'aws.ses' }), undefined)).toBeUndefined();
    expect(redriveGroup('rewards', 'not json {', undefined)).toBeUndefined();
  });
});
