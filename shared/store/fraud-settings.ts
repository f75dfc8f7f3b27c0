// STUB (issue 27 seam; the rules helper implements): the account's fraud rule settings (fraudKeys.settings),
// the defaults where unset.
import { DEFAULT_FRAUD_SETTINGS, type FraudSettings } from '../domain/fraud';

export async function loadFraudSettings(_accountId: string): Promise<FraudSettings> {
  return DEFAULT_FRAUD_SETTINGS;
}
