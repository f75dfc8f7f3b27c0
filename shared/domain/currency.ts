// ISO 4217 currency codes. The ICU data bundled with Node (full-icu on Node 20 and Lambda's Node 22)
// already knows the list, so no table is hand-maintained here.

const codes: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

export function isCurrencyCode(value: string): boolean {
  return /^[A-Za-z]{3}$/.test(value) && codes.has(value.toUpperCase());
}
