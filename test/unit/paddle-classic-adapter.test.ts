import { couponAmount } from '../../shared/providers/paddle-classic/adapter';

describe('Paddle Classic adapter: coupon amounts in the vendor API form', () => {
  it.each([
    ['percentage', 1000, '10'],
    ['percentage', 1250, '12.5'],
    ['percentage', 5, '0.05'],
    ['flat', 500, '5.00'],
    ['flat', 1, '0.01'],
    ['flat', 123456, '1234.56'],
  ] as const)('%s %i -> %s', (type, amount, expected) => {
    expect(couponAmount(type, amount)).toBe(expected);
  });
});
