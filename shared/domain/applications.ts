// Applications to an affiliate programme (docs/affiliates.md "Applications"), as pure rules: their ids,
// states and API object, the limits of the public form, the countries it offers, and what a decision may
// change. No I/O.
//
// An outsider's path: the public form (POST /join/v1/<account>/<campaign>/applications/) stores a join
// request, never an application; the email's confirmation link turns it into one (pending, or approved at
// once when the campaign approves automatically and nothing flags the applicant). An operator then
// approves (which creates the member) or rejects it. pending -> approved | rejected; a decision is final.
import { v7 } from 'uuid';

export const APPLICATION_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ApplicationStatus = (typeof APPLICATION_STATUSES)[number];

import type { FraudFlag } from './fraud';
export type { FraudFlag } from './fraud';

export interface Application {
  id: string;
  campaign_id: string;
  email: string;
  name: string;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
  payout_email: string | null;
  /** Question id -> answer (only the campaign's questions at the time of applying). */
  answers: Record<string, string>;
  status: ApplicationStatus;
  /** The member an approval created. */
  member_id: string | null;
  /** Unix seconds. */
  created_at: number;
  decided_at: number | null;
  /** Why it was rejected (the operator's words, internal: never in the applicant's email). */
  reason: string | null;
  fraud_flags: FraudFlag[];
}

/** `app_` + a UUIDv7 without dashes: time-ordered, so a descending Query lists newest first. */
export const newApplicationId = (): string => `app_${v7().replace(/-/g, '')}`;
export const isApplicationId = (value: unknown): value is string => typeof value === 'string' && /^app_[0-9a-f]{32}$/.test(value);

/** The API object (GET /v1/applications/{id}/ and the `application.*` events). */
export function applicationView(a: Application) {
  return {
    id: a.id,
    campaign_id: a.campaign_id,
    email: a.email,
    name: a.name,
    country: a.country,
    payout_email: a.payout_email,
    answers: a.answers,
    status: a.status,
    member_id: a.member_id,
    created_at: a.created_at,
    decided_at: a.decided_at,
    reason: a.reason,
    fraud_flags: a.fraud_flags,
  };
}

/**
 * The member an approval creates: its user identifier (members created by the app carry the app's own user
 * id; an affiliate is no user of the app, so the application names it, unique by construction), and the
 * name split at the first space into first and last name.
 */
export const signupIdentifier = (applicationId: string): string => `signup:${applicationId}`;

export function splitName(name: string): { first_name: string | null; last_name: string | null } {
  const t = name.trim().replace(/\s+/g, ' ');
  if (t === '') return { first_name: null, last_name: null };
  const space = t.indexOf(' ');
  if (space < 0) return { first_name: t, last_name: null };
  return { first_name: t.slice(0, space), last_name: t.slice(space + 1) };
}

// ---- the public form ----

/** The one answer of the public endpoint, whatever happened (known member, pending application, limit, closed campaign). */
export const JOIN_ACCEPTED = 'Check your email to continue.';

/** Requests one address may make per hour, and one client address (by digest): over them, dropped silently. */
export const JOINS_PER_EMAIL_PER_HOUR = 5;
export const JOINS_PER_IP_PER_HOUR = 20;
/** The rate-limit windows of the public form live under this pseudo-account (they count across accounts). */
export const JOIN_LIMITS_ACCOUNT = 'join';

/** A join request waits this long for its email to be confirmed; the confirmation link lives as long. */
export const JOIN_REQUEST_SECONDS = 24 * 3600;

export const MAX_NAME = 200;
export const MAX_ANSWER = 1000;
export const MAX_URL_ANSWER = 500;

/** ISO 3166-1 alpha-2 codes, two letters each (their names come from Intl.DisplayNames where shown). */
const COUNTRY_CODES =
  'ADAEAFAGAIALAMAOAQARASATAUAWAXAZBABBBDBEBFBGBHBIBJBLBMBNBOBQBRBSBTBVBWBYBZCACCCDCFCGCHCICKCLCMCNCOCRCUCVCWCXCYCZDEDJDKDMDODZECEEEGEHERESETFIFJFKFMFOFRGAGBGDGEGFGGGHGIGLGMGNGPGQGRGSGTGUGWGYHKHMHNHRHTHUIDIEILIMINIOIQIRISITJEJMJOJPKEKGKHKIKMKNKPKRKWKYKZLALBLCLILKLRLSLTLULVLYMAMCMDMEMFMGMHMKMLMMMNMOMPMQMRMSMTMUMVMWMXMYMZNANCNENFNGNINLNONPNRNUNZOMPAPEPFPGPHPKPLPMPNPRPSPTPWPYQARERORSRURWSASBSCSDSESGSHSISJSKSLSMSNSOSRSSSTSVSXSYSZTCTDTFTGTHTJTKTLTMTNTOTRTTTVTWTZUAUGUMUSUYUZVAVCVEVGVIVNVUWFWSYEYTZAZMZW';
export const COUNTRIES: readonly string[] = COUNTRY_CODES.match(/../g) ?? [];
const COUNTRY_SET = new Set(COUNTRIES);
export const isCountry = (value: unknown): value is string => typeof value === 'string' && COUNTRY_SET.has(value);

/** The countries with their English names, sorted by name (the form's select). */
export function countryOptions(): { code: string; name: string }[] {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });
  return COUNTRIES.map((code) => ({ code, name: names.of(code) ?? code })).sort((a, b) => a.name.localeCompare(b.name, 'en'));
}

// ---- decisions ----

export const APPROVE_REJECTED = 'This application was rejected; a rejected application cannot be approved.';
export const REJECT_APPROVED = 'This application was approved and its member created; delete the member instead.';
export const APPROVE_MEMBER_EXISTS = (email: string) =>
  `The email address ${email} already belongs to a member of this account; reject the application or change that member's email first.`;
export const APPROVE_CAMPAIGN_GONE = 'The campaign of this application was deleted; the application cannot be approved.';
