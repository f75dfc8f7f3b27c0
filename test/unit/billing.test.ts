// Paddle billing values: plan descriptors (docs/design/api-contract.md "Subscriptions"), Paddle
// date-times and money strings (docs/design/providers.md "Paddle Classic").
import { daysInMonth, decimalToCents, paddleDateTimeToUnixMs, planDescriptor } from '../../shared/domain/billing';

describe('planDescriptor', () => {
  it.each<[string, string, string, number | null, string]>([
    ['10.00', 'USD', 'month', 1, '$10.00 / month'],
    ['10.00', 'USD', 'month', null, '$10.00 / month'],
    ['30.00', 'USD', 'month', 3, '$30.00 / 3 months'],
    ['9.00', 'EUR', 'month', 1, '€9.00 / month'],
    ['100.00', 'GBP', 'year', 1, '£100.00 / year'],
    ['5', 'USD', 'week', 2, '$5.00 / 2 weeks'],
    ['0.99', 'USD', 'day', 1, '$0.99 / day'],
    ['0.00', 'USD', 'month', 1, '$0.00 / month'],
    ['1234.50', 'USD', 'year', 1, '$1,234.50 / year'],
    ['4.995', 'USD', 'month', 1, '$5.00 / month'],
  ])('%s %s every %s x%p is %j', (amount, currency, interval, frequency, expected) => {
    expect(planDescriptor(amount, currency, interval, frequency)).toBe(expected);
  });

  it('other currencies are written as Intl en-US writes them', () => {
    const chf = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'CHF' }).format(10);
    expect(planDescriptor('10.00', 'CHF', 'month', 1)).toBe(`${chf} / month`);
    expect(planDescriptor('10.00', 'CHF', 'month', 1)).toMatch(/^CHF\s10\.00 \/ month$/);
    expect(planDescriptor('1000.00', 'JPY', 'month', 1)).toBe('¥1,000 / month');
  });

  it('a frequency that is not an integer of 2 or more reads as 1', () => {
    expect(planDescriptor('10.00', 'USD', 'month', 0)).toBe('$10.00 / month');
    expect(planDescriptor('10.00', 'USD', 'month', -2)).toBe('$10.00 / month');
    expect(planDescriptor('10.00', 'USD', 'month', 1.5)).toBe('$10.00 / month');
  });

  it('null without an interval', () => {
    expect(planDescriptor('10.00', 'USD', null, null)).toBeNull();
    expect(planDescriptor('10.00', 'USD', null, 1)).toBeNull();
    expect(planDescriptor('10.00', 'USD', '', 1)).toBeNull();
  });

  it('null for an amount that is not a decimal string', () => {
    expect(planDescriptor('ten', 'USD', 'month', 1)).toBeNull();
    expect(planDescriptor('', 'USD', 'month', 1)).toBeNull();
  });

  it('never throws on a currency Intl cannot format', () => {
    expect(planDescriptor('10.00', 'US', 'month', 1)).toBe('10.00 US / month');
  });
});

describe('paddleDateTimeToUnixMs', () => {
  it.each<[string, string]>([
    ['2020-08-12 21:01:30', '2020-08-12T21:01:30.000Z'],
    ['2020-05-20 23:37:36', '2020-05-20T23:37:36.000Z'],
    ['2020-09-03', '2020-09-03T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29 00:00:00', '2000-02-29T00:00:00.000Z'],
    ['1999-12-31 23:59:59', '1999-12-31T23:59:59.000Z'],
    ['2023-01-01 00:00:00', '2023-01-01T00:00:00.000Z'],
  ])('%j is %s (UTC)', (input, iso) => {
    expect(paddleDateTimeToUnixMs(input)).toBe(Date.parse(iso));
  });

  it('years below 100 are not shifted to the 1900s', () => {
    expect(paddleDateTimeToUnixMs('0050-01-01')).toBe(Date.parse('0050-01-01T00:00:00Z'));
  });

  it.each([
    '2023-02-29',
    '2023-02-30',
    '2024-02-30',
    '1900-02-29',
    '2023-04-31',
    '2023-13-01',
    '2023-00-10',
    '2023-01-00',
    '2023-01-32',
    '2023-01-01 24:00:00',
    '2023-01-01 23:60:00',
    '2023-01-01 23:59:60',
    '2023-01-01T10:00:00',
    '2023-01-01 10:00:00Z',
    '2023-01-01 10:00',
    '2023-01-01 10:00:00.123',
    ' 2023-01-01',
    '2023-01-01 ',
    '2023-1-01',
    '23-01-01',
    '20230101',
    '2023/01/01',
    '',
    'yesterday',
    '1597266090',
  ])('rejects %j', (input) => {
    expect(paddleDateTimeToUnixMs(input)).toBeNull();
  });
});

describe('daysInMonth', () => {
  it.each<[number, number, number]>([
    [2024, 2, 29],
    [2023, 2, 28],
    [2000, 2, 29],
    [1900, 2, 28],
    [2023, 4, 30],
    [2023, 12, 31],
    [2023, 1, 31],
  ])('%d-%d has %d days', (year, month, days) => {
    expect(daysInMonth(year, month)).toBe(days);
  });
});

describe('decimalToCents', () => {
  it.each<[string, number]>([
    ['9.99', 999],
    ['19.980', 1998],
    ['10', 1000],
    ['0', 0],
    ['0.00', 0],
    ['-1.50', -150],
    ['-0.00', 0],
    ['952.7', 95270],
    ['0.2', 20],
    ['4.99', 499],
    ['1.005', 101],
    ['1.004', 100],
    ['1.0049999', 100],
    ['1.995', 200],
    ['-1.005', -101],
    ['-0.004', 0],
    ['-0.005', -1],
    ['0.125', 13],
    ['00012.30', 1230],
    ['99999999.99', 9_999_999_999],
    ['90071992547409.91', 9_007_199_254_740_991],
  ])('%j is %d cents', (input, cents) => {
    const result = decimalToCents(input);
    expect(result).toBe(cents);
    expect(Object.is(result, -0)).toBe(false);
  });

  it.each([
    '',
    ' ',
    '9.99 ',
    ' 9.99',
    'abc',
    '1e3',
    '1,00',
    '1.2.3',
    '.5',
    '5.',
    '+1',
    '--1',
    '-',
    '$9.99',
    'NaN',
    'Infinity',
    '0x10',
    '90071992547409.92',
  ])('rejects %j', (input) => {
    expect(decimalToCents(input)).toBeNull();
  });
});
