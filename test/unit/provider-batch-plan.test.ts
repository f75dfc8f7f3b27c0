// The store's pure planner of provider updates (shared/store/subscriptions.ts planProviderUpdate), which the
// provider-events batch path (shared/flows/provider-batch.ts) plans every fact of a batch with: no I/O, a
// duplicate found by its marker, and a second fact of one subscription planned on the state the first one
// leaves and conditioned on the table's (a fold).
import { planProviderUpdate, providerUpdateKeys, type ProviderUpdate } from '../../shared/store/subscriptions';
import { keys } from '../../shared/store/table';

const ACCOUNT = 'acct0000000000aa';
const keyString = (k: { pk: unknown; sk: unknown }) => `${String(k.pk)}\u0000${String(k.sk)}`;
const plan = { id: 9001, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: null };

const created: ProviderUpdate = {
  subscriptionId: 70001,
  asOfMs: 1_000_000,
  alertId: 'a1',
  fields: { status: 'active', currency: 'USD', plan, unit_price: '10.00', email: 'b@example.com', next_bill_date: '2027-01-01' },
  payerIds: ['paddle-classic:customer:1'],
};
const paid: ProviderUpdate = {
  subscriptionId: 70001,
  asOfMs: 1_000_000,
  alertId: 'a2',
  fields: { status: 'active', currency: 'USD', plan, last_bill_date: '2026-12-01' },
  payment: { id: 80001, subscription_id: 70001, order_id: null, amount: 1000, currency: 'USD', paid_at: 1000, status: 'paid' },
  payerIds: ['paddle-classic:customer:2'],
};

describe('planProviderUpdate', () => {
  it('reads the subscription, the marker and the payment; a new subscription is a conditional create with its counters', () => {
    expect(providerUpdateKeys(ACCOUNT, paid).map(keyString)).toEqual(
      [keys.subscription(ACCOUNT, 70001), keys.alert(ACCOUNT, 'a2'), keys.payment(ACCOUNT, 70001, 80001)].map(keyString),
    );
    const p = planProviderUpdate(ACCOUNT, created, new Map());
    expect(p.result).toMatchObject({ duplicate: false, subscriptionWritten: true });
    expect(p.items[0]?.Put?.Item).toMatchObject({ type: 'Alert', subscription_id: 70001 });
    expect(p.items[p.subscriptionItem]?.Update?.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(p.counters).toEqual([
      ['subscriptions', 1],
      ['subscriptions#active', 1],
    ]);
  });

  it('a marker found: a duplicate, nothing to write', () => {
    const found = new Map([[keyString(keys.alert(ACCOUNT, 'a1')), { ...keys.alert(ACCOUNT, 'a1'), type: 'Alert' }]]);
    const p = planProviderUpdate(ACCOUNT, created, found);
    expect(p.result.duplicate).toBe(true);
    expect(p.items).toEqual([]);
    expect(p.duplicate).toBe(p.result);
  });

  it('a fold: the second fact, planned on the state the first leaves, is version 2 conditioned on the table (absent) and adds both payers', () => {
    const table = new Map<string, Record<string, unknown>>();
    const first = planProviderUpdate(ACCOUNT, created, table);
    const overlay = new Map(table);
    for (const item of first.stored) overlay.set(keyString(item as { pk: string; sk: string }), item);
    const second = planProviderUpdate(ACCOUNT, paid, overlay, table);
    const write = second.items[second.subscriptionItem]?.Update;
    expect(write?.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(write?.ExpressionAttributeValues?.[':pids']).toEqual(new Set(['paddle-classic:customer:1', 'paddle-classic:customer:2']));
    expect(second.result.subscription).toMatchObject({ version: 2, last_bill_date: '2026-12-01', next_bill_date: '2027-01-01' });
    // No status change: no counter; the payment is a conditional create.
    expect(second.counters).toEqual([]);
    expect(second.items.find((i) => i.Put?.Item?.type === 'Payment')?.Put?.ConditionExpression).toBe('attribute_not_exists(pk)');
    // Without the fold, the same fact after the first committed is conditioned on version 1.
    const after = planProviderUpdate(ACCOUNT, paid, overlay);
    expect(after.items[after.subscriptionItem]?.Update?.ExpressionAttributeValues?.[':version']).toBe(1);
  });

  it('an older snapshot never overwrites a newer one, but its payment is recorded', () => {
    const table = new Map<string, Record<string, unknown>>();
    const first = planProviderUpdate(ACCOUNT, { ...created, asOfMs: 2_000_000 }, table);
    for (const item of first.stored) table.set(keyString(item as { pk: string; sk: string }), item);
    const older = planProviderUpdate(ACCOUNT, { ...paid, asOfMs: 1_000_000, payerIds: [] }, table);
    expect(older.result).toMatchObject({ subscriptionWritten: false, paymentChanged: true });
    expect(older.subscriptionItem).toBe(-1);
  });
});
