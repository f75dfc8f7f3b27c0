// The README's overview screenshot (docs/img/dashboard-overview.png): `npx tsx test/bench/readme-screenshot.ts docs/img/dashboard-overview.png`.
// A believable programme: real flows (campaign, members, referrals, Paddle-emulator checkouts and conversions)
// plus 60 days of report buckets written directly, then the overview in Debian's Chromium.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { chromium } from 'playwright-core';
import { freePort } from '../../infra/local/dynamodb';
import { startLocal } from '../../infra/local/start';
import { db, tableName } from '../../shared/store/client';
import { keys } from '../../shared/store/table';
import { issueLoginToken, membershipsOf } from '../../shared/store/team';

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'refloop-shot-'));
  process.env.API_RATE_LIMITS = 'starter=100000,small=100000,regular=100000,unlimited=100000';
  const rt = await startLocal({
    port: 0,
    dynamodbPort: await freePort(),
    sqsPort: 0,
    paddlePort: 0,
    paddleBillingPort: 0,
    stripePort: 0,
    paypalPort: 0,
    wisePort: 0,
    dataDir,
    tableName: 'shot',
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(rt.url + path, {
      method,
      headers: { authorization: `Bearer ${rt.demo.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return r.json() as Promise<any>;
  };
  const campaign = await call('POST', '/v1/campaigns/', {
    name: 'Partners 20%',
    allows_commission: true,
    commission_type: 'percentage',
    commission_percent: '20',
    hold_days: 0,
  });
  const names = [
    ['maria', 'Maria'],
    ['kenji', 'Kenji'],
    ['lea', 'Léa'],
    ['omar', 'Omar'],
    ['sofia', 'Sofia'],
    ['tom', 'Tom'],
  ];
  const codes: string[] = [];
  for (const [id, first] of names)
    codes.push(
      (
        await call('POST', '/v1/members/', {
          identifier: id,
          email: `${id}@example.com`,
          first_name: first,
          campaign: { id: campaign.id },
          payout_email: `${id}@pay.example.com`,
        })
      ).code,
    );
  const weights = [3, 2, 2, 1, 1, 1];
  let n = 0;
  for (let m = 0; m < codes.length; m++) {
    for (let k = 0; k < weights[m]! * 2; k++) {
      const user = `user-${n++}`;
      const ref = await call('POST', '/v1/referrals/', { user_identifier: user, member_code: codes[m] });
      if (k < weights[m]!) {
        const checkout = await rt.paddle.checkout({ plan_id: 9001, email: `${user}@example.com` });
        for (let i = 0; i < 50; i++) {
          const r = await fetch(`${rt.url}/v1/subscriptions/${checkout.subscription.subscription_id}/`, {
            headers: { authorization: `Bearer ${rt.demo.apiKey}` },
          });
          if (r.status === 200) break;
          await new Promise((ok) => setTimeout(ok, 200));
        }
        await call('POST', `/v1/referrals/${ref.id}/conversion/`, { checkout_id: checkout.checkout_id });
      }
    }
  }
  // 60 days of history before today (the buckets the reports read).
  const items: Record<string, unknown>[] = [];
  const now = Date.now();
  for (let d = 1; d < 60; d++) {
    const day = new Date(now - d * 86_400_000).toISOString().slice(0, 10);
    const wave = Math.round(30 + 18 * Math.sin(d / 4) + (60 - d) * 0.9 + ((d * 37) % 11));
    const refs = Math.max(1, Math.round(wave / 4));
    const conv = Math.max(0, Math.round(refs / 3 + ((d * 7) % 3) - 1));
    items.push({
      ...keys.reportDay(rt.demo.accountId, 'T', day),
      type: 'ReportDay',
      link_clicks: wave,
      referrals: refs,
      conversions: conv,
      revenue_USD: conv * 2900,
      commission_earned_USD: conv * 580,
    });
  }
  for (let i = 0; i < items.length; i += 25)
    await db().send(
      new BatchWriteCommand({ RequestItems: { [tableName()]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
    );

  const member = (await membershipsOf(rt.demo.ownerEmail)).find((m) => m.accountId === rt.demo.accountId)!;
  const { token } = await issueLoginToken(member.accountId, member.operatorId);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1360, height: 1100 }, deviceScaleFactor: 1 });
  await page.goto(`${rt.url}/app/login#token=${token}`);
  await page.locator('[data-kpi="referrals"]').waitFor();
  await page.goto(`${rt.url}/app/?days=30&metric=referrals`);
  await page
    .locator('.u-over, canvas')
    .first()
    .waitFor({ timeout: 15000 })
    .catch(() => undefined);
  await page.waitForTimeout(1500);
  await page.screenshot({ path: process.argv[2] ?? '/tmp/readme-overview.png' });
  await browser.close();
  await rt.stop();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
