// Wise's customerTransactionId is UUIDv5 of the payout id (shared/rails/wise/uuid.ts): checked against the
// RFC's own algorithm as Python's uuid.uuid5 computes it (uuid5(NAMESPACE_DNS, "python.org"), the example
// in Python's documentation) and against the `uuid` package, and stable for Refloop's namespace.
import { v5 as uuidPackageV5 } from 'uuid';
import { customerTransactionId, isUuid, uuidV5, WISE_TRANSACTION_NAMESPACE } from '../../shared/rails/wise/uuid';

const DNS = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';

describe('UUIDv5', () => {
  it('matches the known vector uuid5(NAMESPACE_DNS, "python.org")', () => {
    expect(uuidV5('python.org', DNS)).toBe('886313e1-3b8a-5372-9b90-0c9aee199e5d');
  });

  it('matches the uuid package for payout ids in Refloop namespace', () => {
    for (const id of ['po_01JABCDEFGHJKMNPQRSTVWXYZ0', 'po_1', 'po_é', `po_${'x'.repeat(60)}`])
      expect(uuidV5(id, WISE_TRANSACTION_NAMESPACE)).toBe(uuidPackageV5(id, WISE_TRANSACTION_NAMESPACE));
  });

  it('gives a payout its fixed customerTransactionId (version 5, RFC variant)', () => {
    const id = customerTransactionId('po_01JABCDEFGHJKMNPQRSTVWXYZ0');
    expect(id).toBe('4a28d12c-949c-5130-9337-aea4b3aec452');
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('5');
    expect(['8', '9', 'a', 'b']).toContain(id[19]);
    expect(customerTransactionId('po_01JABCDEFGHJKMNPQRSTVWXYZ1')).not.toBe(id);
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => uuidV5('x', 'not-a-uuid')).toThrow(/not a UUID/);
  });
});
