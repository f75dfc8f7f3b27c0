// The member-emails worker's logic: one conversion or reward notice to the referring member, exactly
// once per message key, honouring the member's opt-out and a bounce or complaint on their address.
//
// Exactly once: the worker reads what the email needs (account, referral, member; one BatchGet for all the
// emails of a worker batch, ../store/prefetch.ts), then claims the
// message's marker item (a 60 s lease; the email's unsubscribe token is stored in the same transaction)
// before calling the sender, and marks it `sent` after: 2 writes per email sent. In a worker batch the claims
// of all its emails go out in one transaction and their completions in another (./email-writes.ts; each claim
// keeps its own condition). A duplicate message finds `sent` (or `skipped`) and is acknowledged; one that
// finds a live lease waits up to 5 s for that attempt to end (./email-lease.ts claimOrWait), then fails its
// record (SQS retries it after the visibility timeout,
// when the lease is over). A sender error means nothing was sent: the claim is released and the record
// fails, so SQS retries it and, after maxReceiveCount receives, moves it to the DLQ (alarmed).
//
// The crash window: SES has no idempotency token, so if the function dies (or its SES call times out)
// after SES accepted the message and before the marker says `sent`, the lease runs out and the retry
// sends the email again. We accept that rare duplicate rather than the alternative (never retrying an
// expired lease), which would silently lose every email whose attempt died before SES answered. The
// window is the time between SES's answer and one UpdateItem: milliseconds. Locally the outbox file
// is named after the message key, so a re-send rewrites the same file.
import { config } from '../config';
import type { Reward } from '../domain/models';
import type { AffiliateEmailMessage, LoginLinkMessage, MemberEmailMessage } from '../queue/queues';
import { sendLoginLinks } from './login-links';
import { sendAffiliateEmail } from './affiliate-emails';
import { PoisonMessageError, sqsWorker } from '../queue/worker';
import { type ClaimResult, emailContext, emailContextKeys, releaseEmail, senderOf, suppressedAddress } from '../store/emails';
import { parsedBodies, prefetch, type Prefetched } from '../store/prefetch';
import { directEmailWrites, emailBatchWrites, type EmailWrites } from './email-writes';
import { toMember } from '../store/members';
import { toReferral } from '../store/referrals';
import type { EmailSender, Mailbox } from './sender';
import { conversionEmail, rewardEmail, type RenderedEmail } from './templates';
import { unsubscribeHeaders, unsubscribeUrl } from './unsubscribe';
import { unsubscribeTokenPut } from '../store/unsubscribe';
import type { Context, SQSEvent } from 'aws-lambda';
import { log } from '../log';
import { claimOrWait, EmailInFlightError, LEASE_SECONDS } from './email-lease';

// The marker's lease and in-flight error live in ./email-lease.ts (the affiliate emails share them).
export { EmailInFlightError, LEASE_SECONDS };

export const messageKey = (m: Pick<MemberEmailMessage, 'template' | 'referral_id' | 'reward_id'>) =>
  m.template === 'conversion' ? `conversion-${m.referral_id}` : `reward-${m.reward_id ?? ''}`;

export type EmailOutcome = 'sent' | 'skipped' | 'duplicate';

/** `pre`: the worker batch's prefetch of every email's context (../store/prefetch.ts). */
export async function sendMemberEmail(
  m: MemberEmailMessage,
  sender: EmailSender,
  writes: EmailWrites = directEmailWrites,
  pre?: Prefetched,
): Promise<EmailOutcome> {
  if (
    m.kind !== 'member-email' ||
    (m.template !== 'conversion' && m.template !== 'reward') ||
    !m.account_id ||
    !m.referral_id ||
    !m.member_id
  ) {
    throw new PoisonMessageError('Not a member-email message');
  }
  const key = messageKey(m);
  const context = { account_id: m.account_id, referral_id: m.referral_id, member_id: m.member_id, key };
  const duplicate = (claim: ClaimResult & { claimed: false }): EmailOutcome => {
    if (claim.state === 'sending') throw new EmailInFlightError(`email ${key} is being sent by another attempt`);
    log('info', 'member email already handled', { ...context, state: claim.state });
    return 'duplicate';
  };

  // What the email needs is read before the claim: the claim then stores the email's unsubscribe token in the
  // same transaction (one write for both). A duplicate pays one read for nothing.
  const { account, referral: referralItem, member: memberItem } = await emailContext(m.account_id, m.referral_id, m.member_id, pre);
  const member = toMember(memberItem);
  const referral = toReferral(referralItem);
  const reward = m.template === 'reward' ? referral?.rewards.find((r: Reward) => r.id === m.reward_id) : undefined;
  const skipReason = !member
    ? 'member deleted'
    : !referral || referral.member_id !== member.id
      ? 'referral deleted'
      : member.email_opt_out
        ? 'member opted out'
        : suppressedAddress(memberItem) === member.email.toLowerCase()
          ? 'address bounced or complained'
          : m.template === 'reward' && (!reward || reward.amount <= 0)
            ? 'reward not found'
            : null;
  // (`!member || !referral` only narrows the types: a skip reason names both cases.)
  if (skipReason !== null || !member || !referral) {
    const reason = skipReason ?? 'member deleted';
    const claim = await claimOrWait(() => writes.claim(m.account_id, key, LEASE_SECONDS));
    if (!claim.claimed) return duplicate(claim);
    await writes.complete(m.account_id, key, { state: 'skipped', reason });
    log('info', 'member email skipped', { ...context, reason });
    return 'skipped';
  }

  const senderName = senderOf(account)?.name || config().emailDefaultFrom.name;
  // A fresh unsubscribe token per email (only its digest is stored, with the claim): the link and the RFC 8058 headers.
  const { token, put } = unsubscribeTokenPut({ accountId: m.account_id, memberId: member.id, programme: senderName });
  const claim = await claimOrWait(() => writes.claim(m.account_id, key, LEASE_SECONDS, put));
  if (!claim.claimed) return duplicate(claim);

  let email: { to: string; from: Mailbox; rendered: RenderedEmail; headers: Record<string, string> };
  try {
    const unsubscribe = unsubscribeUrl(config().publicBaseUrl, token);
    const input = { firstName: member.first_name, memberCode: member.code, senderName, referral, unsubscribeUrl: unsubscribe };
    const rendered = m.template === 'conversion' ? conversionEmail(input) : rewardEmail(input, reward as Reward);
    email = { to: member.email, from: senderOf(account) ?? config().emailDefaultFrom, rendered, headers: unsubscribeHeaders(unsubscribe) };
  } catch (err) {
    await releaseEmail(m.account_id, key).catch(() => undefined);
    throw err;
  }

  let messageId: string;
  try {
    ({ messageId } = await sender.send({
      key,
      from: email.from,
      to: email.to,
      ...email.rendered,
      headers: email.headers,
      tags: { account_id: m.account_id, member_id: m.member_id, message_key: key },
    }));
  } catch (err) {
    // Refused or failed before acceptance: nothing was sent, so the next attempt may send it.
    await releaseEmail(m.account_id, key).catch(() => undefined);
    throw err;
  }
  await writes.complete(m.account_id, key, { state: 'sent', messageId });
  log('info', 'member email sent', { ...context, message_id: messageId });
  return 'sent';
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * The worker's SQS handler for a given sender (tests inject failing or counting senders). Every record of a
 * batch (up to 10) runs at once: the member emails' marker writes are gathered (./email-writes.ts). The
 * event source's maximum concurrency bounds the sends in flight (10 a batch); SES's throttling answers are
 * retried by the SDK, and a send that still fails releases its claim and fails its record only.
 */
export function memberEmailHandler(sender: () => EmailSender) {
  return async (event: SQSEvent, context?: Context) => {
    const records = event.Records ?? [];
    // The member emails of the batch (bodies that parse as one): they take part in its gathered writes.
    const emails = parsedBodies<MemberEmailMessage | null>(records).filter((m): m is MemberEmailMessage => m?.kind === 'member-email');
    const writes = emailBatchWrites(emails.length);
    // Every member email's context (account, referral, member) in one BatchGet for the batch.
    const pre = await prefetch(
      emails
        .filter((m) => [m.account_id, m.referral_id, m.member_id].every(isText))
        .flatMap((m) => emailContextKeys(m.account_id, m.referral_id, m.member_id)),
    );
    return sqsWorker<MemberEmailMessage | LoginLinkMessage | AffiliateEmailMessage>(
      'member-emails',
      async (message) => {
        if (message.kind === 'login-link') await sendLoginLinks(message, sender());
        else if (message.kind === 'affiliate-email') await sendAffiliateEmail(message, sender());
        else {
          // Only a body that parses as a member email joined the count above (sqsWorker fails the others alone).
          const mine = message?.kind === 'member-email' ? writes.join() : null;
          try {
            await sendMemberEmail(message, sender(), mine ?? directEmailWrites, pre);
          } finally {
            mine?.done();
          }
        }
      },
      Math.max(1, records.length),
    )(event, context);
  };
}
