// The lease of an email's exactly-once marker (shared/store/emails.ts claimEmail), shared by the member
// emails (./member-emails.ts) and the affiliate emails (./affiliate-emails.ts).

/** Longer than one attempt (the worker's timeout is 20 s), shorter than the queue's visibility timeout. */
export const LEASE_SECONDS = 60;

/** Another attempt holds the message's lease: retry later. */
export class EmailInFlightError extends Error {
  override readonly name = 'EmailInFlightError';
}
