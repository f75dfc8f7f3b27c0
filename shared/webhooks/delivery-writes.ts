// The delivery worker's writes, gathered per SQS batch (functions/workers/webhook-delivery.ts). The records of
// a batch run at once (./deliver.ts attemptDelivery each); their claims go to DynamoDB together, in ONE
// TransactWriteItems, once every record still running has made its claim or finished; later their outcomes
// do the same. A batch of 5 deliveries then writes 2 transactions instead of 5 UpdateItems and 5
// TransactWriteItems (DynamoDB Local serialises writes, and in AWS each call is a round trip and a charge).
//
// Nothing is weaker than one record at a time: every claim and every outcome keeps its own condition (a claim
// takes the attempt read, an outcome needs its attempt still claimed). When a gathered transaction fails (one
// condition failed, or two copies of one delivery in the batch), nothing of it was written, and each write is
// made again on its own (claimAttempt, recordAttempt), which tells each record its own answer. An outcome that
// changes its endpoint (recovered, failing, disabled) is always written on its own: two of them could touch
// one endpoint item, which one transaction cannot hold twice.
import { allOrEach, Gather, oneByOne, type Waiting } from '../store/gather';
import { transact } from '../store/ops';
import {
  type AttemptOutcome,
  type AttemptRecord,
  claimAttempt,
  claimUpdate,
  type EndpointChange,
  outcomeUpdate,
  recordAttempt,
  type WebhookDelivery,
} from '../store/webhooks';

export interface DeliveryWrites {
  claim(accountId: string, d: WebhookDelivery, attempt: number, leaseUntil: number): Promise<boolean>;
  record(
    accountId: string,
    d: WebhookDelivery,
    attempt: number,
    record: AttemptRecord,
    outcome: AttemptOutcome,
    change: EndpointChange,
  ): Promise<void>;
}

/** Each write on its own (a delivery attempted outside a batch). */
export const directWrites: DeliveryWrites = { claim: claimAttempt, record: recordAttempt };

type ClaimInput = Parameters<DeliveryWrites['claim']>;
type RecordInput = Parameters<DeliveryWrites['record']>;

const flushClaims = (calls: Waiting<ClaimInput, boolean>[]) =>
  allOrEach(calls, (inputs) => transact(inputs.map((input) => ({ Update: claimUpdate(...input) }))), true, claimAttempt);

async function flushRecords(calls: Waiting<RecordInput, void>[]): Promise<void> {
  const plain = calls.filter((c) => c.input[5] === 'none');
  const alone = calls.filter((c) => c.input[5] !== 'none');
  await Promise.all([
    oneByOne(alone, recordAttempt),
    // recordAttempt handles its own conditions when the gathered transaction failed.
    allOrEach(plain, (inputs) => transact(inputs.map((i) => outcomeUpdate(i[0], i[1], i[2], i[3], i[4]))), undefined, recordAttempt),
  ]);
}

/** One record's share of its batch's writes: `done()` when it finishes, whatever it wrote. */
export interface RecordWrites extends DeliveryWrites {
  done(): void;
}

/** The gathered writes of one batch of `records` deliveries (the records that will each call `join()` once). */
export function batchWrites(records: number): { join(): RecordWrites } {
  const claims = new Gather<ClaimInput, boolean>(records, flushClaims);
  const outcomes = new Gather<RecordInput, void>(records, flushRecords);
  return {
    join() {
      let claimed = false;
      let recorded = false;
      let finished = false;
      return {
        claim: (...input) => {
          claimed = true;
          return claims.call(input);
        },
        record: (...input) => {
          // A record that never claimed has no place in the claims' round any more.
          if (!claimed) {
            claimed = true;
            claims.pass();
          }
          recorded = true;
          return outcomes.call(input);
        },
        done() {
          if (finished) return;
          finished = true;
          if (!claimed) claims.pass();
          if (!recorded) outcomes.pass();
        },
      };
    },
  };
}
