// The account's PATCH, shared by the sections that edit a setting of the account.
import { api } from '../../api';
import { idempotencyKey, unwrap, type ApiPaths } from '../../../api/client';
import type { Account } from '../../../api/types';

export type AccountPatch = ApiPaths['/v1/account/']['patch']['requestBody']['content']['application/json'];

export function patchAccount(body: AccountPatch): Promise<Account> {
  return unwrap(api.PATCH('/v1/account/', { params: { header: { 'Idempotency-Key': idempotencyKey() } }, body }));
}
