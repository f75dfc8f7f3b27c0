// The member-emails worker's marker writes, gathered per SQS batch (functions/workers/member-emails.ts), as the
// webhook delivery worker gathers its own (../webhooks/delivery-writes.ts): the member-email records of a batch
// run at once; their claims (each marker's conditional Put with the email's unsubscribe token) go to DynamoDB
// in ONE TransactWriteItems once every record still running has claimed or finished, and their completions
// (`sent` or `skipped`) in another. A batch of 10 emails then writes 2 transactions instead of 20 writes.
//
// Nothing is weaker than one email at a time: each claim keeps its own condition (no marker, or a lease that
// ran out), so a copy of an email already sent or being sent cancels the gathered transaction, which then
// wrote nothing; each claim is then made on its own (claimEmail), which tells each record its own answer. Two
// copies of one email in a batch cannot share a transaction either (one item twice): the same way, one claims
// and the other finds it sending. Completions have no condition; a gathered one that fails is made again one
// by one. Releasing a claim (the sender refused the email) is rare and always written on its own.
import { allOrEach, Gather, type Waiting } from '../store/gather';
import {
  type ClaimResult,
  claimEmail,
  claimEmailsTogether,
  completeEmail,
  completeEmailsTogether,
  type EmailCompletion,
} from '../store/emails';

export interface EmailWrites {
  claim(...input: Parameters<typeof claimEmail>): Promise<ClaimResult>;
  complete(accountId: string, messageKey: string, outcome: EmailCompletion): Promise<void>;
}

/** Each write on its own (an email sent outside a batch). */
export const directEmailWrites: EmailWrites = { claim: claimEmail, complete: completeEmail };

type ClaimInput = Parameters<EmailWrites['claim']>;
type CompleteInput = Parameters<EmailWrites['complete']>;

const flushClaims = (calls: Waiting<ClaimInput, ClaimResult>[]) =>
  allOrEach(
    calls,
    (inputs) =>
      claimEmailsTogether(inputs.map(([accountId, messageKey, leaseSeconds, also]) => ({ accountId, messageKey, leaseSeconds, also }))),
    { claimed: true },
    claimEmail,
  );

const flushCompletions = (calls: Waiting<CompleteInput, void>[]) =>
  allOrEach(
    calls,
    (inputs) => completeEmailsTogether(inputs.map(([accountId, messageKey, outcome]) => ({ accountId, messageKey, outcome }))),
    undefined,
    completeEmail,
  );

/** One record's share of its batch's writes: `done()` when it finishes, whatever it wrote. */
export interface RecordEmailWrites extends EmailWrites {
  done(): void;
}

/** The gathered writes of one batch of `records` member emails (the records that will each call `join()` once). */
export function emailBatchWrites(records: number): { join(): RecordEmailWrites } {
  const claims = new Gather<ClaimInput, ClaimResult>(records, flushClaims);
  const completions = new Gather<CompleteInput, void>(records, flushCompletions);
  return {
    join() {
      let claimed = false;
      let completed = false;
      let finished = false;
      return {
        claim: (...input) => {
          // A second claim of this record (claimOrWait trying again while another attempt holds the lease) goes
          // out alone: the round it took part in has been flushed.
          if (claimed) return claimEmail(...input);
          claimed = true;
          return claims.call(input).then((result) => {
            // Not claimed (a copy sent, skipped or being sent): this record completes nothing in the batch's round,
            // which must not wait for it (the attempt holding the lease may be in this very batch). Should a later
            // claim of its succeed, that completion goes out alone.
            if (!result.claimed && !completed) {
              completed = true;
              completions.pass();
            }
            return result;
          });
        },
        complete: (...input) => {
          if (!claimed) {
            claimed = true;
            claims.pass();
          }
          if (completed) return completeEmail(...input);
          completed = true;
          return completions.call(input);
        },
        done() {
          if (finished) return;
          finished = true;
          if (!claimed) claims.pass();
          if (!completed) completions.pass();
        },
      };
    },
  };
}
