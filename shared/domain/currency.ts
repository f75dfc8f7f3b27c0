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
const exponents = new Map<string, number>();

export function currencyExponent(code: string): number {
  let e = exponents.get(code);
  if (e === undefined) {
    // Building an Intl.NumberFormat costs ~0.1 ms and a provider event converts several amounts: each
    // code's answer is kept. Only codes Intl accepts (three letters: a bounded set) are kept.
    try {
      e = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    } catch {
      return 2;
    }
    exponents.set(code, e);
  }
  return e;
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

// Every amount Refloop computes (a percentage commission, a clawback's share of a refund, a credit) is
// rounded at once to what the currency can actually pay: whole units in a zero-decimal currency (JPY,
// KRW, ...), so a reward, a payout total and a payout file never hold a fraction the provider or the
// payout service cannot carry (docs/rewards.md "Currencies without decimals"). The exponent is the one
// the provider port converts with (centsToMinor), so the two always agree; it covers Stripe's own list
// of zero-decimal currencies (shared/providers/stripe/wire.ts, checked by test/unit/money.test.ts).

/** Whether the currency has no minor unit (JPY, KRW, ...). */
export function isZeroDecimal(currency: string): boolean {
  return currencyExponent(currency) === 0;
}

/** Refloop's hundredths in the currency's smallest payable unit: 100 for JPY (one yen), 1 otherwise. */
export function minorUnitCents(currency: string): number {
  return 10 ** (2 - Math.min(2, currencyExponent(currency)));
}

/** `cents` rounded half away from zero to the currency's smallest unit (JPY 3996 -> 4000). */
export function roundToMinorUnit(cents: number, currency: string): number {
  const unit = minorUnitCents(currency);
  if (unit === 1) return Math.round(cents);
  return Math.sign(cents) * Math.floor((Math.abs(cents) + unit / 2) / unit) * unit;
}

/** Decimals an amount in the currency is written with outside the API (payout files): 0 for JPY, else 2. */
export function fileDecimals(currency: string): number {
  return Math.min(2, currencyExponent(currency));
}

/** Hundredths as a decimal string with the currency's decimals: "4000" -> "40" in JPY, "39.96" in USD. */
export function formatInCurrency(cents: number, currency: string): string {
  const decimals = fileDecimals(currency);
  const rounded = roundToMinorUnit(cents, currency);
  const sign = rounded < 0 ? '-' : '';
  const abs = Math.abs(rounded);
  const whole = Math.floor(abs / 100);
  return decimals === 0 ? `${sign}${whole}` : `${sign}${whole}.${String(abs % 100).padStart(2, '0')}`;
}
