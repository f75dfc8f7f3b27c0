// A worker batch's first reads in one BatchGet (shared/store/prefetch.ts): what the prefetch answers costs no
// call, what it did not read is read as before, and a prefetch that fails leaves every record to read on its
// own. The fraud-screen worker's batch of referral screenings reads its referrals in one call; the delivery
// and member-email batches are measured in webhook-fanout.test.ts and member-emails.test.ts.
import { handler as fraudScreen } from '../../functions/workers/fraud-screen';
import { newEntityId } from '../../shared/domain/ids';
import { batchGetVia, getItemVia, prefetch } from '../../shared/store/prefetch';
import { keys } from '../../shared/store/table';
import { recordDynamoCalls } from '../support/dynamo-calls';
import { putReferral } from '../support/fraud-facts';
import { sqsEventOf } from '../support/queues';

const account = () => newEntityId();

/** A referral of a fresh member, created now (test/support/fraud-facts.ts). */
const newReferral = (accountId: string) => putReferral(accountId, newEntityId(), { created_at: Math.floor(Date.now() / 1000) });

async function recorded<T>(fn: () => Promise<T>) {
  const rec = recordDynamoCalls();
  try {
    return { out: await fn(), calls: rec.calls.map((c) => c.command) };
  } finally {
    rec.stop();
  }
}

test('the prefetch answers the keys it read, an absent item included, without a call; another key is read on its own', async () => {
  const a = account();
  const [one, two, other] = [await newReferral(a), await newReferral(a), await newReferral(a)];
  const absent = newEntityId();
  const { out: pre, calls } = await recorded(() => prefetch([one, two, absent].map((id) => keys.referral(a, id))));
  expect(calls).toEqual(['BatchGetItem']);
  expect(pre?.found.size).toBe(2);

  const answered = await recorded(async () => ({
    one: await getItemVia(pre, keys.referral(a, one)),
    absent: await getItemVia(pre, keys.referral(a, absent)),
    both: await batchGetVia(pre, [keys.referral(a, one), keys.referral(a, two)]),
  }));
  expect(answered.calls).toEqual([]);
  expect(answered.out.one).toMatchObject({ id: one });
  expect(answered.out.absent).toBeUndefined();
  expect(answered.out.both.size).toBe(2);

  const notRead = await recorded(() => getItemVia(pre, keys.referral(a, other)));
  expect(notRead.calls).toEqual(['GetItem']);
  expect(notRead.out).toMatchObject({ id: other });
  const mixed = await recorded(() => batchGetVia(pre, [keys.referral(a, one), keys.referral(a, other)]));
  expect(mixed.calls).toEqual(['BatchGetItem']);
  expect(mixed.out.size).toBe(2);
});

test('a prefetch that fails answers undefined, and each record then reads on its own', async () => {
  const a = account();
  const id = await newReferral(a);
  // DynamoDB refuses an empty string as a key value: the BatchGet fails whole.
  const failed = await recorded(() => prefetch([keys.referral(a, id), { pk: '', sk: '' }]));
  expect(failed.out).toBeUndefined();
  expect(failed.calls).toEqual(['BatchGetItem']);
  const own = await recorded(() => getItemVia(failed.out, keys.referral(a, id)));
  expect(own.calls).toEqual(['GetItem']);
  expect(own.out).toMatchObject({ id });
  expect(await prefetch([])).toBeUndefined();
});

test("the fraud-screen worker reads a batch's referrals in one BatchGet, not a GetItem each", async () => {
  const a = account();
  const ids = [await newReferral(a), await newReferral(a), await newReferral(a)];
  const messages = ids.map((id) => ({ kind: 'screen', account_id: a, event_type: 'referral.created', subject_id: id }));
  const { out, calls } = await recorded(() => fraudScreen(sqsEventOf(messages, 'fraud')));
  expect(out.batchItemFailures).toEqual([]);
  // The account's fraud settings (one GetItem, once per batch) and the three referrals in one BatchGet.
  expect(calls.sort()).toEqual(['BatchGetItem', 'GetItem']);
});
