// Applications to an affiliate programme (docs/affiliates.md "Applications"): the public form, the email
// confirmation that creates an application, the fraud seam, and the operator's decisions.
//
// The public form answers the same whatever happens (a known member, a pending application, a limit, a
// closed campaign): what differs is only which email the member-emails worker sends (shared/email/
// affiliate-emails.ts), and that worker makes the confirmation link itself (issueJoinConfirmation), so no
// queue holds a usable link. The link's page confirms with a button (a POST): a mail scanner that follows
// links confirms nothing.
import {
  APPROVE_CAMPAIGN_GONE,
  APPROVE_MEMBER_EXISTS,
  APPROVE_REJECTED,
  type Application,
  type FraudFlag,
  JOIN_LIMITS_ACCOUNT,
  JOINS_PER_EMAIL_PER_HOUR,
  JOINS_PER_IP_PER_HOUR,
  newApplicationId,
  REJECT_APPROVED,
} from '../domain/applications';
import { DetailError, NotFoundError, ServiceUnavailableError } from '../domain/errors';
import type { Campaign } from '../domain/models';
import { emailHash, looksLikeToken, newToken, tokenHash } from '../domain/team';
import { ipHash } from '../domain/visitors';
import { config } from '../config';
import { queueAffiliateEmails } from '../email/affiliate-enqueue';
import { publish } from '../queue/publish';
import type { AffiliateEmailMessage } from '../queue/queues';
import { validateApplication } from '../schemas/applications';
import { evaluateApplication } from '../domain/fraud-rules';
import { loadFraudSettings, toFraudSettings } from '../store/fraud-settings';
import type { FraudSettings } from '../domain/fraud';
import { recentApplicationFacts } from './fraud-facts';
import {
  createApplication,
  decideApplication,
  existingFor,
  getApplication,
  getJoinConfirm,
  getJoinRequest,
  joinRequestExpiry,
  putJoinConfirm,
  putJoinRequest,
  toJoinRequest,
  type ConfirmOutcome,
  type JoinRequest,
} from '../store/applications';
import { toCampaign } from '../store/campaigns';
import { batchGet, getItem, lookup } from '../store/ops';
import { consumeRateLimit } from '../store/rate-limits';
import { findAccountBySlug, findCampaignBySlug } from '../store/slugs';
import { applicationKeys, fraudKeys, keys } from '../store/table';

const HOUR = 3600;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** An account's campaign found by their slugs (open to applications or not). */
export interface Programme {
  accountId: string;
  account: Record<string, unknown>;
  campaign: Campaign;
}

/** The programme of a page's address, or null (unknown account or campaign). Four GetItems, two at a time. */
export async function findProgramme(accountSlug: string, campaignSlug: string): Promise<Programme | null> {
  const found = await findAccountBySlug(accountSlug);
  if (!found) return null;
  const campaign = await findCampaignBySlug(found.accountId, campaignSlug);
  return campaign ? { ...found, campaign } : null;
}

export const isOpen = (p: Programme | null): p is Programme => p?.campaign.signup.enabled === true;

/** The page's path, and its form's endpoint (relative: the same origin serves both). */
export const joinPagePath = (accountSlug: string, campaignSlug: string): string =>
  `/join/${encodeURIComponent(accountSlug)}/${encodeURIComponent(campaignSlug)}/`;
export const joinPostPath = (accountSlug: string, campaignSlug: string): string =>
  `/join/v1/${encodeURIComponent(accountSlug)}/${encodeURIComponent(campaignSlug)}/applications/`;

/**
 * The fraud rules an applicant raises (docs/fraud.md "When the rules run"): duplicate_ip and
 * disposable_email over the join request and the account's applications of the duplicate_ip window, the
 * rules whose action is `off` left out. The flags are stored on the application by its creation; a flagged
 * applicant waits as pending even when the campaign approves automatically, and the fraud-screen worker
 * puts the flags in the review queue when it sees `application.created`. `known`: the settings when the caller
 * read them already (the confirmation reads them in its BatchGet).
 */
export async function screenApplicant(accountId: string, applicant: JoinRequest, known?: FraudSettings): Promise<FraudFlag[]> {
  const settings = known ?? (await loadFraudSettings(accountId));
  if (settings.duplicate_ip.action === 'off' && settings.disposable_email.action === 'off') return [];
  const now = nowSeconds();
  const recent =
    settings.duplicate_ip.action === 'off' || !applicant.ipHash
      ? []
      : await recentApplicationFacts(accountId, now - settings.duplicate_ip.window_hours * HOUR);
  // The disposable-address list is a module of its own, loaded on first use (shared/domain/disposable-domains.ts).
  const disposable =
    settings.disposable_email.action === 'off' ? null : (await import('../domain/disposable-domains')).disposableDomainOf(applicant.email);
  const fact = {
    id: applicant.id,
    campaign_id: applicant.campaignId,
    created_at: now,
    ip_hash: applicant.ipHash || null,
    email: applicant.email,
    disposable_domain: disposable,
    member_id: null,
  };
  return evaluateApplication(settings, fact, { recent: recent.filter((a) => a.id !== applicant.id) }, now).map((f) => ({
    rule: f.rule,
    at: now,
    detail: f.detail,
  }));
}

const message = (m: Omit<AffiliateEmailMessage, 'kind'>): AffiliateEmailMessage => ({ kind: 'affiliate-email', ...m });

/**
 * The public form's request (the JSON body's object), validated: 400 for the body's fields and, when the
 * campaign is open, its terms and answers (an answer keyed `answers.<id>`), all reported at once. Nothing happens for a closed or unknown programme, nor past the limits (5 an hour per
 * address, 20 per client address, by digest); otherwise the worker is told which email to send: the
 * confirmation link (a join request is stored for 24 hours), or that the address is already a member or has
 * an application pending. The caller answers the same in every case.
 */
export async function submitApplication(programme: Programme | null, raw: Record<string, unknown>, clientIp: string): Promise<void> {
  const open = isOpen(programme);
  const { input, answers } = validateApplication(open ? programme.campaign.signup : null, raw);
  if (!open) return;
  const { accountId, campaign } = programme;
  const hour = { limit: 0, windowSeconds: HOUR };
  const ip = ipHash(clientIp);
  const [byEmail, byIp, existing] = await Promise.all([
    consumeRateLimit(JOIN_LIMITS_ACCOUNT, `join-email#${emailHash(input.email)}`, { ...hour, limit: JOINS_PER_EMAIL_PER_HOUR }),
    consumeRateLimit(JOIN_LIMITS_ACCOUNT, `join-ip#${ip}`, { ...hour, limit: JOINS_PER_IP_PER_HOUR }),
    existingFor(accountId, input.email),
  ]);
  if (!byEmail.allowed || !byIp.allowed) return; // dropped silently: the answer is the same
  const common = { account_id: accountId, campaign_id: campaign.id, email: input.email };
  if (existing.memberId) {
    await publish('member-emails', message({ template: 'member-exists', ...common }));
    return;
  }
  if (existing.applicationId) {
    await publish('member-emails', message({ template: 'application-exists', ...common, application_id: existing.applicationId }));
    return;
  }
  const now = nowSeconds();
  const request: JoinRequest = {
    id: newApplicationId(),
    accountId,
    campaignId: campaign.id,
    email: input.email,
    name: input.name,
    country: input.country,
    payoutEmail: input.payout_email,
    answers,
    ipHash: ip,
    createdAt: now,
    expiresAt: joinRequestExpiry(now),
  };
  await putJoinRequest(request);
  await publish('member-emails', message({ template: 'application-confirm', ...common, join_request_id: request.id }));
}

/** The confirmation page of a token: `/join/confirm/<token>/`. */
export const confirmationUrl = (token: string): string => `${config().publicBaseUrl}/join/confirm/${token}/`;

/**
 * For the member-emails worker: a new single-use confirmation link for a join request (its token stored
 * only as SHA-256, valid while the request is), or null when the request is gone (expired or confirmed).
 */
export async function issueJoinConfirmation(accountId: string, joinRequestId: string): Promise<string | null> {
  const request = await getJoinRequest(accountId, joinRequestId, nowSeconds());
  if (!request) return null;
  const token = newToken();
  await putJoinConfirm(tokenHash(token), {
    accountId,
    joinRequestId,
    campaignId: request.campaignId,
    expiresAt: request.expiresAt,
  });
  return confirmationUrl(token);
}

/** What a confirmation link's page shows. */
export type ConfirmState =
  /** GET: the button. */
  | { kind: 'ask' }
  /** The application exists (created now or by an earlier click). */
  | { kind: 'pending' }
  | { kind: 'approved' }
  | { kind: 'rejected' }
  | { kind: 'already-pending' }
  | { kind: 'already-member' }
  | { kind: 'closed' }
  /** Unknown, expired, or its request gone. */
  | { kind: 'unknown' };

export interface ConfirmPage {
  state: ConfirmState;
  /** The account (its theme and slug), when the token named one. */
  account: Record<string, unknown> | null;
  campaign: Campaign | null;
}

const UNKNOWN: ConfirmPage = { state: { kind: 'unknown' }, account: null, campaign: null };

/** GET /join/confirm/<token>/: whether the link works (nothing changes). */
export async function confirmationPage(token: string): Promise<ConfirmPage> {
  if (!looksLikeToken(token)) return UNKNOWN;
  const link = await getJoinConfirm(tokenHash(token), nowSeconds());
  if (!link) return UNKNOWN;
  const found = await batchGet([keys.account(link.accountId), keys.campaign(link.accountId, link.campaignId)]);
  const account = lookup(found, keys.account(link.accountId)) ?? null;
  const campaign = toCampaign(lookup(found, keys.campaign(link.accountId, link.campaignId)));
  if (!account) return UNKNOWN;
  return { state: link.applicationId ? await appliedState(link.accountId, link.applicationId) : { kind: 'ask' }, account, campaign };
}

async function appliedState(accountId: string, applicationId: string): Promise<ConfirmState> {
  const application = await getApplication(accountId, applicationId);
  return application ? { kind: application.status } : { kind: 'unknown' };
}

/**
 * POST /join/confirm/<token>/: creates the application of the link's join request, once. A replay (or a
 * second tab) shows what the first created and writes nothing. With `approval: "auto"` and no fraud flag
 * the application is approved at once, its member created in the same transaction, and the approval email
 * (with the login link) queued.
 */
export async function confirmApplication(token: string): Promise<ConfirmPage> {
  if (!looksLikeToken(token)) return UNKNOWN;
  const hash = tokenHash(token);
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = Date.now();
    const link = await getJoinConfirm(hash, Math.floor(now / 1000));
    if (!link) return UNKNOWN;
    const { accountId } = link;
    const requestKey = applicationKeys.joinRequest(accountId, link.joinRequestId);
    // The fraud rules' settings beside: the applicant is screened before the application is created.
    const found = await batchGet([
      keys.account(accountId),
      keys.campaign(accountId, link.campaignId),
      requestKey,
      fraudKeys.settings(accountId),
    ]);
    const account = lookup(found, keys.account(accountId)) ?? null;
    const campaign = toCampaign(lookup(found, keys.campaign(accountId, link.campaignId)));
    if (!account) return UNKNOWN;
    const page = (state: ConfirmState): ConfirmPage => ({ state, account, campaign });
    if (link.applicationId) return page(await appliedState(accountId, link.applicationId));
    if (!campaign?.signup.enabled) return page({ kind: 'closed' });
    const request = toJoinRequest(lookup(found, requestKey), Math.floor(now / 1000));
    if (!request) return page({ kind: 'unknown' });
    const flags = await screenApplicant(accountId, request, toFraudSettings(lookup(found, fraudKeys.settings(accountId))));
    const approve = campaign.signup.approval === 'auto' && flags.length === 0;
    const outcome: ConfirmOutcome = await createApplication(request, hash, campaign, { approve, flags, nowMs: now });
    switch (outcome.kind) {
      case 'created':
        if (outcome.application.status === 'approved') await announceApproval(accountId, outcome.application);
        return page({ kind: outcome.application.status });
      case 'used':
        continue; // read the link again: it names the application now
      case 'retry':
        continue;
      default:
        return page({ kind: outcome.kind });
    }
  }
  throw new ServiceUnavailableError();
}

// ---- the operator's decisions ----

/**
 * The decision's email, after its transaction committed: never fails the decision (the worker sends it once
 * per key; a lost approval email is sent again by approving again, and the portal's login page sends links).
 */
async function announceApproval(accountId: string, a: Application): Promise<void> {
  await queueAffiliateEmails([
    message({
      template: 'application-approved',
      account_id: accountId,
      key: `approved-${a.id}`,
      campaign_id: a.campaign_id,
      application_id: a.id,
      ...(a.member_id ? { member_id: a.member_id } : {}),
    }),
  ]);
}

async function announceRejection(accountId: string, a: Application): Promise<void> {
  await queueAffiliateEmails([
    message({
      template: 'application-rejected',
      account_id: accountId,
      key: `rejected-${a.id}`,
      campaign_id: a.campaign_id,
      application_id: a.id,
      email: a.email,
    }),
  ]);
}

export async function getApplicationOrThrow(accountId: string, id: string): Promise<Application> {
  const application = await getApplication(accountId, id);
  if (!application) throw new NotFoundError();
  return application;
}

const conflict = (detail: string) => new DetailError(409, detail);

/**
 * Approves a pending application: its member is created in the campaign (code generated, `source:
 * "signup"`) in the same transaction, and the approval email (with a login link) is queued. An approved one
 * answers as it is (its email queued again: the worker sends it once per application); a rejected one 409.
 */
export async function approveApplication(accountId: string, id: string): Promise<Application> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const current = await getApplicationOrThrow(accountId, id);
    if (current.status === 'approved') {
      await announceApproval(accountId, current);
      return current;
    }
    if (current.status === 'rejected') throw conflict(APPROVE_REJECTED);
    const campaign = toCampaign(await getItem(keys.campaign(accountId, current.campaign_id)));
    if (!campaign) throw conflict(APPROVE_CAMPAIGN_GONE);
    const outcome = await decideApplication(accountId, current, { to: 'approved', campaign }, Date.now());
    switch (outcome.kind) {
      case 'decided':
        await announceApproval(accountId, outcome.application);
        return outcome.application;
      case 'member-exists':
        throw conflict(APPROVE_MEMBER_EXISTS(current.email));
      case 'campaign-gone':
        throw conflict(APPROVE_CAMPAIGN_GONE);
      default:
        continue; // a concurrent decision (read it again) or a generated code taken (draw another)
    }
  }
  throw new ServiceUnavailableError();
}

/**
 * Rejects a pending application with an internal reason; the applicant gets a neutral email. A rejected one
 * answers as it is; an approved one 409 (its member exists).
 */
export async function rejectApplication(accountId: string, id: string, reason: string | null): Promise<Application> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await getApplicationOrThrow(accountId, id);
    if (current.status === 'rejected') {
      await announceRejection(accountId, current);
      return current;
    }
    if (current.status === 'approved') throw conflict(REJECT_APPROVED);
    const outcome = await decideApplication(accountId, current, { to: 'rejected', reason }, Date.now());
    if (outcome.kind === 'decided') {
      await announceRejection(accountId, outcome.application);
      return outcome.application;
    }
  }
  throw new ServiceUnavailableError();
}
