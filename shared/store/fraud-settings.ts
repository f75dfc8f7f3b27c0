// The account's fraud rule settings (docs/fraud.md "The rules"): one item, fraudKeys.settings, holding only
// what the account changed, one attribute per rule and setting (`duplicate_ip#max_referrals`); whatever is
// absent is the default (domain/fraud.ts DEFAULT_FRAUD_SETTINGS), so a default changed later reaches every
// account that never chose otherwise.
//
// A change is one UpdateItem that SETs only the attributes given: two concurrent PATCHes of different
// settings both land (neither rewrites what the other wrote), and the answer is the item as that update
// left it (ALL_NEW), in the same round trip.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_FRAUD_SETTINGS, FRAUD_ACTIONS, FRAUD_RULES, type FraudSettings } from '../domain/fraud';
import { db, tableName } from './client';
import { getItem } from './ops';
import { fraudKeys } from './table';

export type FraudSettingsPatch = { [R in keyof FraudSettings]?: Partial<FraudSettings[R]> };

const attribute = (rule: string, setting: string) => `${rule}#${setting}`;

/** The settings an item holds, over the defaults (a stored value of the wrong kind reads as the default). */
export function toFraudSettings(item: Record<string, unknown> | undefined): FraudSettings {
  const out = structuredClone(DEFAULT_FRAUD_SETTINGS) as FraudSettings;
  if (!item) return out;
  for (const rule of FRAUD_RULES) {
    const settings = out[rule] as unknown as Record<string, unknown>;
    for (const name of Object.keys(settings)) {
      const stored = item[attribute(rule, name)];
      if (name === 'action') {
        if (typeof stored === 'string' && (FRAUD_ACTIONS as readonly string[]).includes(stored)) settings.action = stored;
      } else if (typeof stored === 'number' && Number.isFinite(stored)) {
        settings[name] = stored;
      }
    }
  }
  return out;
}

export async function loadFraudSettings(accountId: string): Promise<FraudSettings> {
  return toFraudSettings(await getItem(fraudKeys.settings(accountId)));
}

/** Sets the given settings only (the others stay as stored), and answers every rule's settings after it. */
export async function saveFraudSettings(accountId: string, patch: FraudSettingsPatch): Promise<FraudSettings> {
  const names: Record<string, string> = { '#type': 'type' };
  const values: Record<string, unknown> = { ':type': 'FraudRules' };
  const sets = ['#type = :type'];
  let i = 0;
  for (const rule of FRAUD_RULES) {
    for (const [name, value] of Object.entries(patch[rule] ?? {})) {
      if (value === undefined) continue;
      names[`#a${i}`] = attribute(rule, name);
      values[`:v${i}`] = value;
      sets.push(`#a${i} = :v${i}`);
      i++;
    }
  }
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: fraudKeys.settings(accountId),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }),
  );
  return toFraudSettings(out.Attributes);
}
