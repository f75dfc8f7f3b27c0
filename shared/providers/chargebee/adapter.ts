// Chargebee's side of the payment-provider port (shared/billing/port.ts). STUB: being written.
import type { BillingProvider } from '../../billing/port';

export interface ChargebeeClientSettings {
  site: string;
  apiKey: string;
  /** `https://<site>.chargebee.com` or an emulator; calls go to `<apiUrl>/api/v2/…`. */
  apiUrl: string;
}

export function chargebeeProvider(_settings: ChargebeeClientSettings, _options: { timeoutMs: number }): BillingProvider {
  throw new Error('the Chargebee adapter is not written yet');
}
