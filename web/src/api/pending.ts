// The dashboard's own endpoints (login, session, team, API keys, account), written from the backend's
// announced shapes. They stand in only for the paths the generated schema does not have yet: client.ts
// merges them as `Omit<PendingPaths, keyof paths>`, so once a route is in functions/routes.ts its
// generated type wins and a difference from what the pages use fails the type check.

export type Role = 'owner' | 'admin' | 'finance' | 'viewer';
export const ROLES: readonly Role[] = ['owner', 'admin', 'finance', 'viewer'];

export interface Session {
  account_id: string;
  account_name: string;
  email: string;
  role: Role;
  expires_at: number;
}

export interface TeamMember {
  id: string;
  email: string;
  role: Role;
  created_at: number;
  last_login_at: number | null;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
}

export type ProviderKind = 'paddle-classic' | 'paddle-billing' | 'stripe';

export interface ProviderConnection {
  kind: ProviderKind | null;
  connected: boolean;
  webhook_url: string | null;
  vendor_id: number | null;
  api_url: string | null;
}

export interface EmailSender {
  address: string;
  name: string;
}

export type JsReferrals = 'open' | 'confirm' | 'off';

export interface Account {
  id: string;
  name: string;
  plan: string;
  publishable_key: string;
  script_tag: string;
  js_referrals: JsReferrals;
  email_sender: EmailSender | null;
  embed_origins: string[];
  provider: ProviderConnection;
}

export type ProviderInput =
  | { kind: 'paddle-classic'; vendor_id: number; auth_code: string; public_key: string }
  | { kind: 'paddle-billing'; api_key: string; webhook_secret: string }
  | { kind: 'stripe'; secret_key: string; webhook_secret: string };

interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

type Json<T> = { headers: { [name: string]: unknown }; content: { 'application/json': T } };
type Empty = { headers: { [name: string]: unknown }; content?: never };
type Problem = Json<{ detail: string }>;
type Invalid = Json<{ [field: string]: string[] }>;

type Op<Responses, Body = never, PathParams = never, Query = never> = {
  parameters: { query?: [Query] extends [never] ? never : Query; header?: never; cookie?: never } & ([PathParams] extends [never]
    ? { path?: never }
    : { path: PathParams });
  responses: Responses;
} & ([Body] extends [never] ? { requestBody?: never } : { requestBody: { content: { 'application/json': Body } } });

interface Item {
  parameters: { query?: never; header?: never; path?: never; cookie?: never };
  get?: never;
  put?: never;
  post?: never;
  delete?: never;
  options?: never;
  head?: never;
  patch?: never;
  trace?: never;
}

type Path<Methods> = Omit<Item, keyof Methods> & Methods;
type Id = { id: string };
type PageQuery = { page_size?: number; cursor?: string };

export interface PendingPaths {
  '/auth/login-links/': Path<{ post: Op<{ 202: Json<{ detail: string }>; 400: Invalid; 429: Problem }, { email: string }> }>;
  '/auth/sessions/': Path<{ post: Op<{ 201: Json<Session>; 400: Invalid; 401: Problem; 429: Problem }, { token: string }> }>;
  '/auth/sessions/current/': Path<{
    get: Op<{ 200: Json<Session>; 401: Problem }>;
    delete: Op<{ 204: Empty; 401: Problem }>;
  }>;
  '/v1/team/': Path<{
    get: Op<{ 200: Json<Page<TeamMember>>; 400: Invalid; 401: Problem; 403: Problem }, never, never, PageQuery>;
    post: Op<{ 201: Json<TeamMember>; 400: Invalid; 401: Problem; 403: Problem }, { email: string; role: Role }>;
  }>;
  '/v1/team/{id}/': Path<{
    patch: Op<{ 200: Json<TeamMember>; 400: Invalid; 401: Problem; 403: Problem; 404: Problem }, { role: Role }, Id>;
    delete: Op<{ 204: Empty; 400: Invalid; 401: Problem; 403: Problem; 404: Problem }, never, Id>;
  }>;
  '/v1/api-keys/': Path<{
    get: Op<{ 200: Json<Page<ApiKey>>; 400: Invalid; 401: Problem; 403: Problem }, never, never, PageQuery>;
    post: Op<{ 201: Json<ApiKey & { key: string }>; 400: Invalid; 401: Problem; 403: Problem }, { name: string }>;
  }>;
  '/v1/api-keys/{id}/': Path<{ delete: Op<{ 204: Empty; 401: Problem; 403: Problem; 404: Problem }, never, Id> }>;
  '/v1/account/': Path<{
    get: Op<{ 200: Json<Account>; 401: Problem }>;
    patch: Op<
      { 200: Json<Account>; 400: Invalid; 401: Problem; 403: Problem },
      { name?: string; email_sender?: EmailSender | null; embed_origins?: string[]; js_referrals?: JsReferrals }
    >;
  }>;
  '/v1/account/provider/': Path<{ post: Op<{ 200: Json<ProviderConnection>; 400: Invalid; 401: Problem; 403: Problem }, ProviderInput> }>;
}
