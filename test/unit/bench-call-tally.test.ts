// The bench's DynamoDB call tally (test/bench/call-tally.ts): the kinds it files each call under.
import { callKind } from '../bench/call-tally';

const target = (op: string) => `DynamoDB_20120810.${op}`;
const key = (pk: string, sk: string) => ({ pk: { S: pk }, sk: { S: sk } });
const ACCT = '0190a1b2c3d47e8f9a0b1c2d3e4f5a6b';
const ID = '0190a1b2c3d47e8f9a0b1c2d3e4f5a6c';

describe('callKind', () => {
  it('names an item by its entity and sort key, ids as id', () => {
    expect(callKind(target('GetItem'), JSON.stringify({ Key: key(`A#${ACCT}#REFERRAL`, ID) }))).toBe('GetItem:REFERRAL/id');
    expect(callKind(target('GetItem'), JSON.stringify({ Key: key(`A#${ACCT}`, 'FRAUD_RULES') }))).toBe('GetItem:ACCOUNT/FRAUD_RULES');
    expect(callKind(target('GetItem'), JSON.stringify({ Key: key('APIKEY#abc', 'APIKEY') }))).toBe('GetItem:APIKEY/APIKEY');
    expect(callKind(target('PutItem'), JSON.stringify({ Item: key(`A#${ACCT}#EVENT`, 'evt_2f8f447236fda6fce90e57bb89b6c452') }))).toBe(
      'PutItem:EVENT/evt_id',
    );
  });

  it("lists a transaction's actions sorted, and a batch's kinds once each", () => {
    const tx = {
      TransactItems: [
        { Update: { Key: key(`A#${ACCT}#COUNT`, 'referrals') } },
        { Put: { Item: key(`A#${ACCT}#REFERRAL`, ID) } },
        { ConditionCheck: { Key: key(`A#${ACCT}`, 'ACCOUNT') } },
      ],
    };
    expect(callKind(target('TransactWriteItems'), JSON.stringify(tx))).toBe(
      'TransactWriteItems:CACCOUNT/ACCOUNT,PREFERRAL/id,UCOUNT/referrals',
    );
    const batch = {
      RequestItems: { t: { Keys: [key(`A#${ACCT}#MEMBER`, ID), key(`A#${ACCT}#MEMBER`, ACCT), key(`A#${ACCT}`, 'ACCOUNT')] } },
    };
    expect(callKind(target('BatchGetItem'), JSON.stringify(batch))).toBe('BatchGetItem:ACCOUNT/ACCOUNT,MEMBER/id');
  });

  it('names a query by its index and key values without ids, and survives a body that is not JSON', () => {
    const query = {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: `A#${ACCT}#MEMBER#REFERRALS#${ID}` } },
    };
    expect(callKind(target('Query'), JSON.stringify(query))).toBe('Query:gsi1 A#MEMBER#REFERRALS');
    expect(callKind(target('Query'), '{')).toBe('Query');
  });
});
