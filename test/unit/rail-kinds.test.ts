// shared/rails/kinds.ts (the rails' kinds as plain data) agrees with the registry of rail definitions.
import { BATCH_RAILS, paysConnectedAccount, RAIL_KINDS, RAIL_NAMES } from '../../shared/rails/kinds';
import { RAIL_DEFINITIONS } from '../../shared/rails/registry';

describe('rail kinds', () => {
  it('are the registry’s, with its names and destinations', () => {
    expect([...RAIL_KINDS]).toEqual(RAIL_DEFINITIONS.map((d) => d.kind));
    expect(BATCH_RAILS).toEqual(['file', ...RAIL_KINDS]);
    for (const d of RAIL_DEFINITIONS) {
      expect(RAIL_NAMES[d.kind]).toBe(d.name);
      expect(paysConnectedAccount(d.kind)).toBe(d.destination === 'connected-account');
    }
    expect(paysConnectedAccount('file')).toBe(false);
  });
});
