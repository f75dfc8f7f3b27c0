// The dashboard's own resources (session, team, API keys, account), named from the generated schema so a
// renamed field fails the type check.
import type { ApiPaths, Schemas } from './client';

export type Session = Schemas['Session'];
export type Role = Session['role'];
export const ROLES: readonly Role[] = ['owner', 'admin', 'finance', 'viewer'];
export type TeamMember = Schemas['TeamMember'];
export type ApiKey = Schemas['ApiKey'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type Account = Schemas['Account'];
export type ProviderInput = ApiPaths['/v1/account/provider/']['post']['requestBody']['content']['application/json'];
