// The lease of an email's exactly-once marker (shared/store/emails.ts claimEmail), shared by the member
// emails (./member-emails.ts) and the affiliate emails (./affiliate-emails.ts).
import type { ClaimResult } from '../store/emails';

/** Longer than one attempt (the worker's timeout is 20 s), shorter than the queue's visibility timeout. */
export const LEASE_SECONDS = 60;

/** Another attempt holds the message's lease: retry later. */
export class EmailInFlightError extends Error {
  override readonly name = 'EmailInFlightError';
}

/** How long a claim waits for another attempt's lease before the record fails. */
export const IN_FLIGHT_WAIT_MS = 5_000;
const IN_FLIGHT_POLL_MS = 200;

/**
 * Claims an email's marker. Two copies of one message often arrive together (two evaluations of one referral
 * both queue its notices, shared/email/enqueue.ts): while the other copy's attempt holds the lease, this asks
 * again every 200 ms for up to IN_FLIGHT_WAIT_MS. That attempt normally ends within milliseconds, sent (this
 * copy is then a duplicate) or released after a refusal (this copy sends). Only a lease still held after the
 * wait fails the record, which SQS retries after the visibility timeout.
 */
export async function claimOrWait(claim: () => Promise<ClaimResult>): Promise<ClaimResult> {
  let result = await claim();
  for (let waited = 0; !result.claimed && result.state === 'sending' && waited < IN_FLIGHT_WAIT_MS; waited += IN_FLIGHT_POLL_MS) {
    await new Promise((r) => setTimeout(r, IN_FLIGHT_POLL_MS));
    result = await claim();
  }
  return result;
}
