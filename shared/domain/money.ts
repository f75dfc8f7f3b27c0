// Decimal amounts. Stored as integer cents (so DynamoDB can ADD them atomically), accepted as a JSON
// string or number, always written out as a string with two decimals ("15.00"). The checks and their
// messages are Django REST Framework's DecimalField(max_digits=10, decimal_places=2, min_value=0).

export const MAX_DIGITS = 10;
export const DECIMAL_PLACES = 2;

export type DecimalResult = { ok: true; cents: number } | { ok: false; message: string };

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

export function parseDecimal(input: unknown): DecimalResult {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return { ok: false, message: 'A valid number is required.' };
    text = String(input);
  } else if (typeof input === 'string') {
    text = input.trim();
  } else {
    return { ok: false, message: 'A valid number is required.' };
  }
  const m = DECIMAL.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return { ok: false, message: 'A valid number is required.' };
  const sign = m[1] ?? '';
  const whole = (m[2] ?? '').replace(/^0+/, '');
  const fraction = m[3] ?? '';
  if (fraction.length > DECIMAL_PLACES) {
    return { ok: false, message: `Ensure that there are no more than ${DECIMAL_PLACES} decimal places.` };
  }
  if (whole.length + fraction.length > MAX_DIGITS) {
    return { ok: false, message: `Ensure that there are no more than ${MAX_DIGITS} digits in total.` };
  }
  if (whole.length > MAX_DIGITS - DECIMAL_PLACES) {
    return {
      ok: false,
      message: `Ensure that there are no more than ${MAX_DIGITS - DECIMAL_PLACES} digits before the decimal point.`,
    };
  }
  const cents = Number(whole || '0') * 100 + Number(fraction.padEnd(DECIMAL_PLACES, '0'));
  if (sign === '-' && cents !== 0) return { ok: false, message: 'Ensure this value is greater than or equal to 0.' };
  return { ok: true, cents };
}

export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(cents));
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
