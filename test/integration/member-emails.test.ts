// Member emails (issue 6, item 1) on real parts: DynamoDB Local, the local SQS with the real workers
// behind pollers, the Paddle emulator. The email worker runs with a sender that writes the outbox
// (.eml files, as under `npm start`) and counts its calls, and can be told to fail for a message key.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaddleEmulator } from '../../infra/local/emulators/paddle-classic';
import { startPaddleEmulator } from '../../infra/local/emulators/paddle-classic';
import type { Pollers } from '../../infra/local/pollers';
import { resetConfig } from '../../shared/config';
import { applyEmailEvent } from '../../shared/email/email-events';
import { memberEmailHandler, messageKey, sendMemberEmail } from '../../shared/email/member-emails';
import { type MemberEmailMessage, QUEUE_NAMES } from '../../shared/queue/queues';
import { recordKeys } from '../../shared/store/table';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { recordDynamoCalls, verificationClient } from '../support/dynamo-calls';
import { outboxFileName, outboxSender } from '../../shared/email/outbox-sender';
import type { EmailSender, OutgoingEmail } from '../../shared/email/sender';
import { publish } from '../../shared/queue/publish';
import { claimEmail, completeEmail, getEmailMarker, releaseEmail, setAccountSender } from '../../shared/store/emails';
import { claimOrWait } from '../../shared/email/email-lease';
import { tokenHash } from '../../shared/domain/team';
import { getItem } from '../../shared/store/ops';
import { issueUnsubscribeToken } from '../../shared/store/unsubscribe';
import { api } from '../support/api';
import { pollUntil } from '../support/fixtures';
import { paddleTenants, type Tenant } from '../support/paddle-tenant';
import { sqsEventOf, startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let pollers: Pollers;
let paddle: PaddleEmulator;
let outbox: string;
const previousOutbox = process.env.EMAIL_OUTBOX_DIR;
const sent: OutgoingEmail[] = [];
const failing = new Set<string>();
const attempts = new Map<string, number>();

const sender: EmailSender = {
  async send(email) {
    attempts.set(email.key, (attempts.get(email.key) ?? 0) + 1);
    if (failing.has(email.key)) throw Object.assign(new Error('SES is refusing this message'), { name: 'MessageRejected' });
    const result = await outboxSender(outbox).send(email);
    sent.push(email);
    return result;
  },
};

beforeAll(async () => {
  outbox = mkdtempSync(join(tmpdir(), 'refloop-emails-'));
  process.env.EMAIL_OUTBOX_DIR = outbox;
  resetConfig();
  queues = await startTestQueues();
  pollers = startTestPollers(queues, { handlers: { MemberEmails: memberEmailHandler(() => sender) } });
  paddle = await startPaddleEmulator({ webhookUrl: null });
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  await paddle?.stop();
  rmSync(outbox, { recursive: true, force: true });
  process.env.EMAIL_OUTBOX_DIR = previousOutbox;
  resetConfig();
});

const { tenant, json, campaign, member, referral, subscribed, getReferral } = paddleTenants(() => paddle);
const sendsFor = (key: string) => sent.filter((e) => e.key === key).length;
const readEml = (key: string) => readFileSync(join(outbox, outboxFileName(key)), 'utf8');
const drained = () => queues.drained(['rewards', 'member-emails']);

/** A credit referral of `user` by a member, converted with a fresh paid subscription; the referral once rewarded. */
async function convertedReferral(t: Tenant, m: { code: string }, user: string) {
  const r = await referral(t, user, m.code);
  const sub = await subscribed(t, `${user}@example.com`);
  expect((await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: sub.subscription.subscription_id })).status).toBe(
    200,
  );
  return pollUntil(async () => {
    const body = await getReferral(t, r.id);
    return body.rewards.length === 1 ? body : null;
  });
}

describe('member emails', () => {
  it('a conversion notice and a reward notice: recipient, sender, subject and first name, in text and HTML', async () => {
    const t = await tenant();
    expect(await setAccountSender(t.accountId, { address: 'rewards@acme.example', name: 'Acme Rewards' })).toBe(true);
    const c = await campaign(t, { allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' });
    const alice = await member(t, 'alice-mail', { campaign: { id: c.id }, first_name: 'Alice' });
    const r = await convertedReferral(t, alice, 'user-bob-mail');
    const conversionKey = messageKey({ template: 'conversion', referral_id: r.id });
    const rewardKey = messageKey({ template: 'reward', referral_id: r.id, reward_id: r.rewards[0].id });

    // Sent = the marker says so (it is completed after the sender returned).
    const marked = async (key: string) => (await getEmailMarker(t.accountId, key))?.state === 'sent';
    await pollUntil(async () => (await marked(conversionKey)) && (await marked(rewardKey)), { timeoutMs: 15_000 });
    expect(sendsFor(conversionKey)).toBe(1);
    expect(sendsFor(rewardKey)).toBe(1);
    const files = readdirSync(outbox);
    expect(files).toEqual(expect.arrayContaining([outboxFileName(conversionKey), outboxFileName(rewardKey)]));

    const conversion = readEml(conversionKey);
    expect(conversion).toContain('From: "Acme Rewards" <rewards@acme.example>\r\n');
    expect(conversion).toContain('To: alice-mail@example.com\r\n');
    expect(conversion).toContain('Subject: Alice, your referral just subscribed\r\n');
    expect(conversion).toContain('Content-Type: text/plain; charset=UTF-8');
    expect(conversion).toContain('Content-Type: text/html; charset=UTF-8');
    expect(conversion).toContain('Hi Alice,');
    expect(conversion).toContain('<p>Hi Alice,</p>');
    expect(conversion).toContain(`your code ${alice.code}`);

    const reward = readEml(rewardKey);
    expect(reward).toContain('To: alice-mail@example.com\r\n');
    expect(reward).toContain('Subject: Alice, you earned a 5.00 USD credit\r\n');
    expect(reward).toContain('You earned a credit of 5.00 USD for a referral.');
    expect(await getEmailMarker(t.accountId, rewardKey)).toMatchObject({
      state: 'sent',
      message_id: `outbox:${outboxFileName(rewardKey)}`,
    });
  });

  it('an email sent is 1 BatchGet and 2 writes (the claim with its unsubscribe token, then sent); a duplicate writes nothing', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' });
    const carol = await member(t, 'carol-mail', { campaign: { id: c.id }, first_name: 'Carol' });
    const r = await convertedReferral(t, carol, 'user-dan-mail');
    const key = messageKey({ template: 'conversion', referral_id: r.id });
    await pollUntil(async () => (await getEmailMarker(t.accountId, key))?.state === 'sent', { timeoutMs: 15_000 });
    // Every queue at rest (the reward's email may still be in flight): the recording below is this call's only.
    await queues.drained(QUEUE_NAMES);
    // The marker gone (as if this were the first copy): the next copy sends it again.
    await verificationClient().send(
      new DeleteCommand({ TableName: process.env.TABLE_NAME, Key: recordKeys.emailMarker(t.accountId, key) }),
    );
    const message: MemberEmailMessage = {
      kind: 'member-email',
      account_id: t.accountId,
      template: 'conversion',
      referral_id: r.id,
      member_id: carol.id,
    };
    const first = recordDynamoCalls();
    try {
      expect(await sendMemberEmail(message, sender)).toBe('sent');
    } finally {
      first.stop();
    }
    expect(first.calls.map((c) => c.command)).toEqual(['BatchGetItem', 'TransactWriteItems', 'UpdateItem']);
    expect(sendsFor(key)).toBe(2);
    // Its unsubscribe link works: the token was stored with the claim.
    const link = /https?:\/\/\S+\/unsubscribe\/([A-Za-z0-9_-]+)/.exec(readEml(key))?.[1] as string;
    expect(await getItem({ pk: `UNSUB#${tokenHash(link)}`, sk: 'UNSUB' })).toMatchObject({ member_id: carol.id });
    const again = recordDynamoCalls();
    try {
      expect(await sendMemberEmail(message, sender)).toBe('duplicate');
    } finally {
      again.stop();
    }
    expect(again.calls.map((c) => [c.command, Boolean(c.error)])).toEqual([
      ['BatchGetItem', false],
      ['TransactWriteItems', true],
    ]);
    expect(sendsFor(key)).toBe(2);
  });

  it('a batch of emails: one transaction claims them all, one completes them; a copy in the batch and a redelivered batch send nothing more', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' });
    const erin = await member(t, 'erin-mail', { campaign: { id: c.id }, first_name: 'Erin' });
    const referrals = [];
    for (const user of ['user-g1-mail', 'user-g2-mail', 'user-g3-mail']) referrals.push(await convertedReferral(t, erin, user));
    const messages: MemberEmailMessage[] = referrals.map((r) => ({
      kind: 'member-email',
      account_id: t.accountId,
      template: 'conversion',
      referral_id: r.id,
      member_id: erin.id,
    }));
    const keys = messages.map(messageKey);
    await pollUntil(async () => (await Promise.all(keys.map((k) => getEmailMarker(t.accountId, k)))).every((m) => m?.state === 'sent'), {
      timeoutMs: 20_000,
    });
    // The markers gone (as if these were the first copies): the batch sends each once more.
    const forget = () =>
      Promise.all(
        keys.map((k) =>
          verificationClient().send(new DeleteCommand({ TableName: process.env.TABLE_NAME, Key: recordKeys.emailMarker(t.accountId, k) })),
        ),
      );
    await forget();
    const handler = memberEmailHandler(() => sender);
    const before = keys.map(sendsFor);
    const batch = recordDynamoCalls();
    let out: Awaited<ReturnType<typeof handler>>;
    try {
      out = await handler(sqsEventOf(messages, 'member-emails'));
    } finally {
      batch.stop();
    }
    expect(out.batchItemFailures).toEqual([]);
    expect(keys.map(sendsFor)).toEqual(before.map((n) => n + 1));
    // 1 BatchGet of the 3 emails' contexts (shared/store/prefetch.ts); then 1 transaction of the 3 claims (each
    // with its token), 1 of the 3 completions.
    expect(batch.calls.map((call) => call.command)).toEqual(['BatchGetItem', 'TransactWriteItems', 'TransactWriteItems']);
    for (const k of keys) expect(await getEmailMarker(t.accountId, k)).toMatchObject({ state: 'sent' });

    // The same batch again, with a copy of its first email: every claim finds `sent`, nothing is sent or written.
    const again = recordDynamoCalls();
    try {
      out = await handler(sqsEventOf([...messages, messages[0]], 'member-emails'));
    } finally {
      again.stop();
    }
    expect(out.batchItemFailures).toEqual([]);
    expect(keys.map(sendsFor)).toEqual(before.map((n) => n + 1));
    expect(again.calls.filter((call) => call.command !== 'BatchGetItem' && !call.error)).toEqual([]);

    // Two copies of one email in a fresh batch (one transaction cannot hold its marker twice): sent once.
    await forget();
    out = await handler(sqsEventOf([messages[1], messages[1], messages[2]], 'member-emails'));
    expect(out.batchItemFailures).toEqual([]);
    const [b0 = 0, b1 = 0, b2 = 0] = before;
    expect(keys.map(sendsFor)).toEqual([b0 + 1, b1 + 2, b2 + 2]);
  });

  it('exactly once under duplicate messages and repeated evaluations; without a first name the greeting is generic', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '3.00', credit_currency: 'USD' });
    const ann = await member(t, 'ann-mail', { campaign: { id: c.id } });
    const r = await convertedReferral(t, ann, 'user-cid-mail');
    const conversionKey = messageKey({ template: 'conversion', referral_id: r.id });
    await pollUntil(async () => (await getEmailMarker(t.accountId, conversionKey))?.state === 'sent', { timeoutMs: 15_000 });

    const message = {
      kind: 'member-email' as const,
      account_id: t.accountId,
      template: 'conversion' as const,
      referral_id: r.id,
      member_id: ann.id,
    };
    await Promise.all([publish('member-emails', message), publish('member-emails', message), publish('member-emails', message)]);
    for (let i = 0; i < 3; i++) await publish('rewards', { kind: 'evaluate-referral', account_id: t.accountId, referral_id: r.id });
    await drained();
    expect(sendsFor(conversionKey)).toBe(1);
    expect(sendsFor(messageKey({ template: 'reward', referral_id: r.id, reward_id: r.rewards[0].id }))).toBe(1);
    expect(readEml(conversionKey)).toContain('Subject: Your referral just subscribed\r\n');
    expect(readEml(conversionKey)).toContain('Hi there,');
  });

  it('a member who opted out (PATCH email_opt_out) or whose address bounced gets none', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '2.00', credit_currency: 'USD' });
    const quiet = await member(t, 'quiet-mail', { campaign: { id: c.id }, first_name: 'Quinn' });
    const patched = await json('PATCH', `/v1/members/${quiet.id}/`, t, { email_opt_out: true });
    expect(patched.status).toBe(200);
    expect(patched.body.email_opt_out).toBe(true);
    const r1 = await convertedReferral(t, quiet, 'user-q1-mail');
    const key1 = messageKey({ template: 'conversion', referral_id: r1.id });
    await pollUntil(async () => (await getEmailMarker(t.accountId, key1))?.state === 'skipped', { timeoutMs: 15_000 });
    expect(await getEmailMarker(t.accountId, key1)).toMatchObject({ reason: 'member opted out' });

    const bouncy = await member(t, 'bouncy-mail', { campaign: { id: c.id } });
    // What SES publishes (through EventBridge) for a hard bounce of a member email.
    expect(
      await applyEmailEvent({
        source: 'aws.ses',
        'detail-type': 'Email Bounced',
        detail: {
          eventType: 'Bounce',
          bounce: { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: bouncy.email }] },
          mail: { tags: { account_id: [t.accountId], member_id: [bouncy.id] } },
        },
      }),
    ).toBe('suppressed');
    const r2 = await convertedReferral(t, bouncy, 'user-q2-mail');
    const key2 = messageKey({ template: 'conversion', referral_id: r2.id });
    await pollUntil(async () => (await getEmailMarker(t.accountId, key2))?.state === 'skipped', { timeoutMs: 15_000 });
    expect(await getEmailMarker(t.accountId, key2)).toMatchObject({ reason: 'address bounced or complained' });
    await drained();
    expect(sendsFor(key1) + sendsFor(key2)).toBe(0);
    expect(attempts.get(key1) ?? 0).toBe(0);
  });

  it('every member email has a one-click unsubscribe (RFC 8058 headers) and a visible link: GET only asks, POST opts the member out without a login, nobody else', async () => {
    const t = await tenant();
    const other = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '2.00', credit_currency: 'USD' });
    const una = await member(t, 'una-mail', { campaign: { id: c.id }, first_name: 'Una' });
    const bystander = await member(t, 'bystander-mail', { campaign: { id: c.id } });
    const stranger = await member(other, 'stranger-mail', {});
    const r = await convertedReferral(t, una, 'user-u1-mail');
    const conversionKey = messageKey({ template: 'conversion', referral_id: r.id });
    const rewardKey = messageKey({ template: 'reward', referral_id: r.id, reward_id: r.rewards[0].id });
    await pollUntil(
      async () =>
        (await getEmailMarker(t.accountId, conversionKey))?.state === 'sent' &&
        (await getEmailMarker(t.accountId, rewardKey))?.state === 'sent',
      { timeoutMs: 15_000 },
    );

    // Both emails: the headers, the link in the text and in the HTML, on the configured site.
    const tokens: string[] = [];
    for (const key of [conversionKey, rewardKey]) {
      const eml = readEml(key);
      const header = /^List-Unsubscribe: <(https:\/\/api\.test\/unsubscribe\/([A-Za-z0-9_-]{43})\/)>\r$/m.exec(eml);
      expect({ key, header: header !== null }).toEqual({ key, header: true });
      const [, url, token] = header!;
      expect(eml).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n');
      expect(eml).toContain(`Unsubscribe from these emails: ${url}`);
      expect(eml).toContain(`<a href="${url}">Unsubscribe from these emails</a>`);
      // Only the token's digest is stored.
      const stored = await getItem({ pk: `UNSUB#${tokenHash(token!)}`, sk: 'UNSUB' });
      expect(stored).toMatchObject({ type: 'UnsubscribeToken', account_id: t.accountId, member_id: una.id });
      expect(JSON.stringify(stored)).not.toContain(token!);
      tokens.push(token!);
    }
    const [token] = tokens as [string];
    const optedOut = async (tt: Tenant, id: string) => (await json('GET', `/v1/members/${id}/`, tt)).body.email_opt_out;

    // GET (a person, or a link scanner): a page with a button, and nothing changes.
    const page = await api('GET', `/unsubscribe/${token}/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.text).toContain('<form method="post">');
    expect(page.text).toContain('<button type="submit">Unsubscribe</button>');
    expect(await optedOut(t, una.id)).toBe(false);

    // Unknown, malformed or made-up tokens: 404, and nobody changes.
    for (const bad of ['x'.repeat(43), 'short', tokenHash(token).slice(0, 43)]) {
      expect({
        bad,
        get: (await api('GET', `/unsubscribe/${bad}/`)).status,
        post: (
          await api('POST', `/unsubscribe/${bad}/`, {
            rawBody: 'List-Unsubscribe=One-Click',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          })
        ).status,
      }).toEqual({ bad, get: 404, post: 404 });
    }

    // One click, as a mail client sends it (no cookie, no key): opted out; again: still fine.
    const click = await api('POST', `/unsubscribe/${token}/`, {
      rawBody: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(click.status).toBe(200);
    expect(click.text).toContain('You are unsubscribed');
    expect(await optedOut(t, una.id)).toBe(true);
    expect(
      (
        await api('POST', `/unsubscribe/${tokens[1]}/`, {
          rawBody: 'List-Unsubscribe=One-Click',
          headers: { 'content-type': 'multipart/form-data; boundary=x' },
        })
      ).status,
    ).toBe(200);
    // Only that member: the account's other member and another account's member are untouched.
    expect(await optedOut(t, bystander.id)).toBe(false);
    expect(await optedOut(other, stranger.id)).toBe(false);

    // The next notice to the member is skipped.
    const r2 = await convertedReferral(t, una, 'user-u2-mail');
    const next = messageKey({ template: 'conversion', referral_id: r2.id });
    await pollUntil(async () => (await getEmailMarker(t.accountId, next))?.state === 'skipped', { timeoutMs: 15_000 });
    expect(await getEmailMarker(t.accountId, next)).toMatchObject({ reason: 'member opted out' });

    // A deleted member's link: 404, nothing written.
    const gone = await member(t, 'gone-mail', {});
    const goneToken = await issueUnsubscribeToken({ accountId: t.accountId, memberId: gone.id, programme: 'Acme' });
    expect((await json('DELETE', `/v1/members/${gone.id}/`, t)).status).toBe(204);
    expect((await api('POST', `/unsubscribe/${goneToken}/`)).status).toBe(404);
  });

  it('a failing sender is retried, then the message lands in the DLQ, and nothing is marked sent', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '1.00', credit_currency: 'USD' });
    const m = await member(t, 'fail-mail', { campaign: { id: c.id }, first_name: 'Fay' });
    const r = await referral(t, 'user-f-mail', m.code);
    const key = messageKey({ template: 'conversion', referral_id: r.id });
    failing.add(key);
    // The notice of a converted referral, sent directly (the pipeline that queues it is tested above).
    const sub = await subscribed(t, 'user-f-mail@example.com');
    expect((await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: sub.subscription.subscription_id })).status).toBe(
      200,
    );

    const dead = await pollUntil(
      async () => {
        const messages = await queues.receiveAll('member-emails-dlq');
        return messages.find(
          (msg) =>
            (msg.json as { referral_id?: string; template?: string }).referral_id === r.id &&
            (msg.json as { template?: string }).template === 'conversion',
        );
      },
      { timeoutMs: 45_000, intervalMs: 250 },
    );
    expect(dead).toBeDefined();
    // maxReceiveCount of the test queues: 3 receives, 3 attempts, then the DLQ.
    expect(attempts.get(key)).toBe(3);
    expect(sendsFor(key)).toBe(0);
    expect((await getEmailMarker(t.accountId, key))?.state).toBe('sending');
    failing.delete(key);
    // Three attempts, each after its visibility timeout, behind the tenant's setup: on a busy machine (a run with
    // four Jest workers) the setup alone took over 5 s of the 30 s default.
  }, 60_000);

  it('a copy that finds another attempt sending waits for it: a duplicate once that one sent, the sender once it released', async () => {
    const t = await tenant();
    const after = (ms: number, fn: () => Promise<unknown>) => new Promise((ok) => setTimeout(ok, ms)).then(fn);

    expect(await claimEmail(t.accountId, 'wait-sent', 60)).toEqual({ claimed: true });
    const [copy] = await Promise.all([
      claimOrWait(() => claimEmail(t.accountId, 'wait-sent', 60)),
      after(500, () => completeEmail(t.accountId, 'wait-sent', { state: 'sent', messageId: 'm-1' })),
    ]);
    expect(copy).toEqual({ claimed: false, state: 'sent' });

    expect(await claimEmail(t.accountId, 'wait-released', 60)).toEqual({ claimed: true });
    const [second] = await Promise.all([
      claimOrWait(() => claimEmail(t.accountId, 'wait-released', 60)),
      after(500, () => releaseEmail(t.accountId, 'wait-released')),
    ]);
    expect(second).toEqual({ claimed: true });
    expect((await getEmailMarker(t.accountId, 'wait-released'))?.state).toBe('sending');
  });
});
