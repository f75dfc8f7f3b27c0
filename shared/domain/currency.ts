// ISO 4217 currency codes. The ICU data bundled with Node (full-icu on Node 20 and Lambda's Node 22)
// already knows the list, so no table is hand-maintained here.

const codes: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

export function isCurrencyCode(value: string): boolean {
  return /^[A-Za-z]{3}$/.test(value) && codes.has(value.toUpperCase());
}

/**
 * The currency's ISO 4217 exponent (digits after the decimal point): 2 for USD, 0 for JPY, 3 for KWD.
 * From the same ICU data; unknown codes count as 2.
 */
export function currencyExponent(code: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

// Refloop's amounts are hundredths of the currency's major unit in every currency (its "cents": "1000.00"
// JPY is 100000), as the API shows them with two decimals. The payment-provider port speaks ISO 4217 minor
// units (JPY 1000 is 1000). These two convert at the port's edge, in the flows. A 3-decimal currency loses
// its last digit (rounded half up).

/** A provider's minor units as Refloop's hundredths. */
export function minorToCents(minor: number, currency: string): number {
  const e = currencyExponent(currency);
  return e === 2 ? minor : e < 2 ? minor * 10 ** (2 - e) : Math.round(minor / 10 ** (e - 2));
}

/** Refloop's hundredths as the provider's minor units (a fraction a zero-decimal currency cannot hold is rounded). */
export function centsToMinor(cents: number, currency: string): number {
  const e = currencyExponent(currency);
  return e === 2 ? cents : e < 2 ? Math.round(cents / 10 ** (2 - e)) : cents * 10 ** (e - 2);
}
