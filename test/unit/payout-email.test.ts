// Payout emails (shared/domain/payout-email.ts, issue 23 #29): a plain mailbox, never a formula.
import { payoutEmailProblem } from '../../shared/domain/payout-email';

describe('payoutEmailProblem', () => {
  it.each([
    'jo@example.com',
    'jo.smith+refloop@pay.example.co.uk',
    "o'brien@example.ie",
    'j_o%x-y@sub-1.example.com',
    '1jo@example.com',
    'jo@xn--bcher-kva.example',
  ])('accepts %s', (email) => {
    expect(payoutEmailProblem(email)).toBeNull();
  });

  it.each(["=cmd|'/Ccalc'!A0@example.com", '+1@example.com', '-x@example.com', '@example.com', '\t=1@example.com'])(
    'refuses %j as a formula',
    (email) => {
      expect(payoutEmailProblem(email)).toMatch(/cannot start with =, \+, - or @/);
    },
  );

  it.each([
    'jo',
    'jo@',
    'jo@example',
    'jo@@example.com',
    'a@b@example.com',
    '.jo@example.com',
    'jo.@example.com',
    'j..o@example.com',
    'jo|x@example.com',
    'jo!x@example.com',
    'jo=1@example.com',
    'jo x@example.com',
    '"jo"@example.com',
    'jo@-example.com',
    'jo@example.c',
    'jo@example.123',
    'jo@exa_mple.com',
    `${'a'.repeat(65)}@example.com`,
    `jo@${'a'.repeat(250)}.com`,
    'jö@example.com',
  ])('refuses %j', (email) => {
    expect(payoutEmailProblem(email)).toBe('Enter a valid email address.');
  });
});
