// The customer-managed KMS key the application encrypts secrets with (shared/secrets/): provider secrets
// (Classic auth code, Paddle Billing and Stripe API keys, their webhook secrets) and the outgoing webhooks'
// signing secrets. The table holds only `kms:v1:<ciphertext>`, so a table export or a backup reveals nothing;
// each ciphertext is bound to its account by the encryption context `account_id`.
//
// Who may use the key is decided here, from the secret flags of functions/routes.ts and functions/workers.ts:
// - decrypt: the functions that read a provider secret (`providerSecrets`, `providerWebhookSecrets`, but not
//   the writers below, which only encrypt what the request brings) and the worker that signs deliveries (a
//   worker with `webhookSecrets`);
// - encrypt: the routes that write a secret (SECRET_WRITERS).
// Every other function gets neither the permission nor SECRETS_KMS_KEY_ID (without which shared/secrets/
// refuses to run in Lambda), so a bug elsewhere cannot turn a stored ciphertext back into a key.
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, type IKey } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { routes } from '../../functions/routes';
import { scheduledJobs, workers } from '../../functions/workers';
import type { RefloopFunction } from './function';

/** The environment variable shared/secrets/ reads the key ARN from. */
export const SECRETS_KEY_ENV = 'SECRETS_KMS_KEY_ID';

/** The one encryption context key every secret is encrypted under (its value: the account id). */
export const ENCRYPTION_CONTEXT_KEY = 'account_id';

/**
 * The routes that write a secret: the provider connection (the API key and the webhook secret), the
 * webhook endpoint's create (its signing secret, generated there and shown once), a member's tax details and a
 * payout rail's connection (SetPayoutRail). DeleteWebhookEndpoint and DeletePayoutRail touch their secret items
 * too, but only delete them: they need no key. The other holders of `railSecrets` (the PayoutRails worker that
 * sends money, the three rail webhook intakes that verify with the connection, the portal's Stripe account
 * link) decrypt the rail's connection: see secretsKeyUses.
 */
export const SECRET_WRITERS: readonly string[] = ['SetProviderConnection', 'CreateWebhookEndpoint', 'PutPortalTaxDetails', 'SetPayoutRail'];

/**
 * Rotation on (yearly; old material is kept, so old ciphertexts still decrypt). Retained like the table: the
 * ciphertexts in the table and in its backups are useless without it. A key scheduled for deletion waits 30
 * days, the longest KMS allows, so a mistaken deletion can be cancelled.
 */
export function createSecretsKey(scope: Construct, id: string): Key {
  return new Key(scope, id, {
    description: 'Refloop: provider and webhook signing secrets, encrypted by the application (encryption context account_id)',
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
    pendingWindow: Duration.days(30),
  });
}

/** What a function of the route or worker tables may do with the key. */
export interface SecretsKeyUse {
  decrypt: boolean;
  encrypt: boolean;
}

/** The routes that only delete their rail secret item: they need no key. */
const RAIL_SECRET_DELETERS: readonly string[] = ['DeletePayoutRail'];
const railReader = (r: { name: string; railSecrets?: boolean }) => r.railSecrets === true && !RAIL_SECRET_DELETERS.includes(r.name);

/** By function name (route, worker, job); a name not in the map uses the key for nothing. */
export function secretsKeyUses(): Map<string, SecretsKeyUse> {
  const uses = new Map<string, SecretsKeyUse>();
  const set = (name: string, decrypt: boolean) => {
    const encrypt = SECRET_WRITERS.includes(name);
    if (decrypt || encrypt) uses.set(name, { decrypt, encrypt });
  };
  // The writers hold the secret flags to reach the secret items, but they take the plaintext from the
  // request (and check it at the provider with that): they never decrypt a stored one.
  // The tax-details readers (the portal's GET, the tax export) decrypt members' tax details; their writer encrypts.
  // The rail connection's readers (`railSecrets` but not the writer; DeletePayoutRail only deletes) decrypt it.
  for (const r of routes)
    set(
      r.name,
      (r.providerSecrets === true || r.providerWebhookSecrets === true || r.taxDetails === true || railReader(r)) &&
        !SECRET_WRITERS.includes(r.name),
    );
  for (const w of workers) set(w.name, w.providerSecrets || w.webhookSecrets === true || w.railSecrets === true);
  for (const j of scheduledJobs) set(j.name, j.providerSecrets);
  for (const name of SECRET_WRITERS) {
    if (!routes.some((r) => r.name === name)) throw new Error(`SECRET_WRITERS names ${name}, which is not a route of functions/routes.ts`);
  }
  return uses;
}

/**
 * The key condition of every statement: the request's encryption context has exactly the key `account_id`.
 * ForAllValues alone is true of a request without any context, so `Null: false` requires one: a secret
 * cannot be encrypted unbound to its account, nor decrypted without naming the account it belongs to.
 */
export const ENCRYPTION_CONTEXT_CONDITION = {
  'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [ENCRYPTION_CONTEXT_KEY] },
  Null: { 'kms:EncryptionContextKeys': 'false' },
};

/**
 * Grants a function exactly its use of the key and names the key in SECRETS_KMS_KEY_ID. The statements go
 * on the function's role (the key policy leaves IAM in charge: CDK's default key policy trusts the account),
 * so the stateful stack that owns the key needs no change when a function is added.
 */
export function grantSecretsKey(fn: RefloopFunction, key: IKey, use: SecretsKeyUse): void {
  if (!use.decrypt && !use.encrypt) return;
  fn.addEnvironment(SECRETS_KEY_ENV, key.keyArn);
  if (use.decrypt) {
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'DecryptSecrets',
        actions: ['kms:Decrypt'],
        resources: [key.keyArn],
        conditions: ENCRYPTION_CONTEXT_CONDITION,
      }),
    );
  }
  if (use.encrypt) {
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'EncryptSecrets',
        actions: ['kms:Encrypt'],
        resources: [key.keyArn],
        conditions: ENCRYPTION_CONTEXT_CONDITION,
      }),
    );
  }
}
