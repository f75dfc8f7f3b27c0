// The API's resources by name, from the generated schema, so a renamed field fails the type check: the
// dashboard's own (session, team, API keys, account) and those its pages and tables list.
import type { ApiPaths, Schemas } from './client';

export type Session = Schemas['Session'];
export type Role = Session['role'];
export const ROLES: readonly Role[] = ['owner', 'admin', 'finance', 'viewer'];
export type TeamMember = Schemas['TeamMember'];
export type ApiKey = Schemas['ApiKey'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type Account = Schemas['Account'];
export type ProviderInput = ApiPaths['/v1/account/provider/']['post']['requestBody']['content']['application/json'];
export type Campaign = Schemas['Campaign'];
export type Member = Schemas['Member'];
export type Referral = Schemas['Referral'];
export type LedgerReward = Schemas['LedgerReward'];
export type Payout = Schemas['Payout'];
