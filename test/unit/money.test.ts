// Decimal amounts (docs/design/api-contract.md "Request bodies"): accepted as a JSON string or number, stored as
// integer cents, written out with two decimals; DRF DecimalField(max_digits=10, decimal_places=2,
// min_value=0) messages.
import { centsToMinor, currencyExponent, minorToCents } from '../../shared/domain/currency';
import { DECIMAL_PLACES, MAX_DIGITS, formatCents, parseDecimal } from '../../shared/domain/money';

const INVALID = 'A valid number is required.';
const PLACES = 'Ensure that there are no more than 2 decimal places.';
const DIGITS = 'Ensure that there are no more than 10 digits in total.';
const WHOLE = 'Ensure that there are no more than 8 digits before the decimal point.';
const NEGATIVE = 'Ensure this value is greater than or equal to 0.';

describe('parseDecimal', () => {
  it('uses the contract limits', () => {
    expect(MAX_DIGITS).toBe(10);
    expect(DECIMAL_PLACES).toBe(2);
  });

  it.each<[string, number]>([
    ['0', 0],
    ['0.00', 0],
    ['15', 1500],
    ['15.00', 1500],
    ['15.5', 1550],
    ['15.05', 1505],
    ['0.01', 1],
    ['.5', 50],
    ['5.', 500],
    ['+7.25', 725],
    ['  12.34  ', 1234],
    ['00012.30', 1230],
    ['-0', 0],
    ['-0.00', 0],
    ['99999999.99', 9_999_999_999],
    ['12345678', 1_234_567_800],
  ])('accepts the string %j as %d cents', (input, cents) => {
    expect(parseDecimal(input)).toEqual({ ok: true, cents });
  });

  it.each<[number, number]>([
    [0, 0],
    [15, 1500],
    [15.5, 1550],
    [0.1, 10],
    [19.99, 1999],
    [99999999.99, 9_999_999_999],
    [-0, 0],
  ])('accepts the number %p as %d cents', (input, cents) => {
    expect(parseDecimal(input)).toEqual({ ok: true, cents });
  });

  it.each<[unknown]>([
    [''],
    ['   '],
    ['.'],
    ['abc'],
    ['1,50'],
    ['1.2.3'],
    ['12abc'],
    ['--1'],
    ['1 000'],
    ['NaN'],
    ['Infinity'],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    [Number.NEGATIVE_INFINITY],
    [null],
    [undefined],
    [true],
    [false],
    [[]],
    [['1.00']],
    [{}],
    [{ amount: '1.00' }],
  ])('refuses %p: a valid number is required', (input) => {
    expect(parseDecimal(input)).toEqual({ ok: false, message: INVALID });
  });

  it.each<[unknown]>([['1.234'], ['0.001'], ['15.000'], [1.234], [0.30000000000000004]])(
    'refuses %p: more than 2 decimal places',
    (input) => {
      expect(parseDecimal(input)).toEqual({ ok: false, message: PLACES });
    },
  );

  it.each<[unknown]>([['12345678901'], ['123456789.12'], ['99999999999.00'], [12345678901]])(
    'refuses %p: more than 10 digits in total',
    (input) => {
      expect(parseDecimal(input)).toEqual({ ok: false, message: DIGITS });
    },
  );

  it.each<[unknown]>([['123456789'], ['123456789.1'], ['100000000.0'], [123456789]])(
    'refuses %p: more than 8 digits before the decimal point',
    (input) => {
      expect(parseDecimal(input)).toEqual({ ok: false, message: WHOLE });
    },
  );

  it('does not count leading zeros as digits', () => {
    expect(parseDecimal('0000000012345678.00')).toEqual({ ok: true, cents: 1_234_567_800 });
  });

  it.each<[unknown]>([['-1'], ['-0.01'], ['-15.00'], [-1], [-0.5]])('refuses %p: negative', (input) => {
    expect(parseDecimal(input)).toEqual({ ok: false, message: NEGATIVE });
  });

  it('returns exact integer cents (no float drift)', () => {
    for (const [text, cents] of [
      ['0.29', 29],
      ['0.57', 57],
      ['1.15', 115],
      ['4.35', 435],
      ['1234567.89', 123456789],
    ] as const) {
      const result = parseDecimal(text);
      expect(result).toEqual({ ok: true, cents });
      expect(Number.isInteger((result as { cents: number }).cents)).toBe(true);
    }
  });
});

describe('formatCents', () => {
  it.each<[number, string]>([
    [0, '0.00'],
    [1, '0.01'],
    [10, '0.10'],
    [99, '0.99'],
    [100, '1.00'],
    [1500, '15.00'],
    [1505, '15.05'],
    [123456, '1234.56'],
    [9_999_999_999, '99999999.99'],
    [-150, '-1.50'],
    [-5, '-0.05'],
  ])('formats %d cents as %j', (cents, text) => {
    expect(formatCents(cents)).toBe(text);
  });

  it('round-trips every parsed value', () => {
    for (const text of ['0.00', '0.05', '1.10', '15.00', '1234.56', '99999999.99']) {
      const parsed = parseDecimal(text);
      if (!parsed.ok) throw new Error(`${text} did not parse: ${parsed.message}`);
      expect(formatCents(parsed.cents)).toBe(text);
    }
    const fromNumber = parseDecimal(15);
    expect(fromNumber.ok && formatCents(fromNumber.cents)).toBe('15.00');
  });
});

describe('provider minor units and Refloop hundredths (docs/design/providers.md "Ids and shapes")', () => {
  it('uses the ISO 4217 exponent: USD as is, JPY times 100, KWD rounded to hundredths, and back', () => {
    expect(currencyExponent('USD')).toBe(2);
    expect(currencyExponent('JPY')).toBe(0);
    expect(currencyExponent('KWD')).toBe(3);
    expect(minorToCents(1999, 'USD')).toBe(1999);
    expect(minorToCents(1200, 'JPY')).toBe(120000);
    expect(minorToCents(1235, 'KWD')).toBe(124);
    expect(centsToMinor(1999, 'USD')).toBe(1999);
    expect(centsToMinor(120000, 'JPY')).toBe(1200);
    expect(centsToMinor(124, 'KWD')).toBe(1240);
    for (const c of ['USD', 'EUR', 'JPY', 'KRW', 'CLP'])
      for (const minor of [0, 1, 99, 1200, 123456]) expect(centsToMinor(minorToCents(minor, c), c)).toBe(minor);
  });
});
