// The money side at size (section `money` of `npm run bench`): the demo account gets 100,000 rewards
// (one recorded and approved through the real flows, the rest copies of its ledger item written with
// BatchWriteItem, their counters moved once) and 90 days of report buckets; then, through the gateway:
// - the 90-day daily report and the overview, each timed over repeated requests;
// - the full rewards.csv export, following its `Link: rel="next"` pages to the end: rows, pages, time,
//   and the service process's peak heap and RSS above where they started (the handlers run in it).
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { newEntityId } from '../../shared/domain/ids';
import { approveReward } from '../../shared/flows/lifecycle';
import { db, tableName } from '../../shared/store/client';
import { counterUpdate, getItem, transact } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys, type CounterName } from '../../shared/store/table';
import { api, type BenchRuntime } from './harness';
import { percentile } from './stats';

export interface MoneySection {
  rewards: number;
  seedSeconds: number;
  report: { requests: number; p50: number; p99: number };
  overview: { requests: number; p50: number; p99: number };
  exportRun: { rows: number; pages: number; seconds: number; bytes: number; peakHeapMiB: number; peakRssMiB: number };
}

const MiB = 1024 * 1024;

async function timed(n: number, fn: () => Promise<void>): Promise<{ requests: number; p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return { requests: n, p50: percentile(times, 50), p99: percentile(times, 99) };
}

export async function measureMoney(bench: BenchRuntime, opts: { rewards: number }): Promise<MoneySection> {
  const rt = bench.runtime;
  const accountId = rt.demo.accountId;
  const seedStart = performance.now();
  const campaign = (
    await api(rt, 'POST', '/v1/campaigns/', { name: 'bench money', allows_commission: true, commission_amount: '2.00', hold_days: 0 })
  ).body;
  const member = (
    await api(rt, 'POST', '/v1/members/', {
      identifier: 'bench-payee',
      email: 'bench-payee@example.com',
      campaign: { id: campaign.id },
      payout_email: 'payee@pay.example.com',
    })
  ).body;
  const ref = (await api(rt, 'POST', '/v1/referrals/', { user_identifier: 'bench-money-user', member_code: member.code })).body;
  const stored = toReferral(await getItem(keys.referral(accountId, ref.id)));
  if (!stored) throw new Error('the bench referral was not stored');
  const recorded = await recordRewards(
    accountId,
    stored,
    [{ payment_id: 1, type: 'commission', amount: 200, currency: 'USD' }],
    false,
    true,
  );
  const approved = await approveReward(accountId, recorded.rewards[0]!.id);
  // The copies leave the indexes out (the export reads the rewards' own partition): DynamoDB Local
  // writes them three times faster, which keeps the seeding of 100,000 inside the bench's budget.
  const { gsi1pk: _g1, gsi1sk: _g2, gsi2pk: _g3, gsi2sk: _g4, ...template } = (await getItem(keys.reward(accountId, approved.id)))!;
  const items: Record<string, unknown>[] = [];
  for (let i = 1; i < opts.rewards; i++) {
    const id = newEntityId();
    items.push({ ...template, ...keys.reward(accountId, id), id });
  }
  const today = Date.now() / 1000;
  for (let d = 0; d < 90; d++) {
    const day = new Date((today - d * 86_400) * 1000).toISOString().slice(0, 10);
    items.push({
      ...keys.reportDay(accountId, 'T', day),
      type: 'ReportDay',
      link_clicks: 40 + d,
      referrals: 5,
      conversions: 2,
      revenue_USD: 2_000,
      commission_earned_USD: 400,
    });
  }
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let b = batches.shift(); b; b = batches.shift()) {
        let pending = b.map((Item) => ({ PutRequest: { Item } }));
        while (pending.length > 0) {
          const out = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
          pending = (out.UnprocessedItems?.[tableName()] ?? []) as typeof pending;
        }
      }
    }),
  );
  const n = opts.rewards - 1;
  const names: CounterName[] = ['rewards', `rewards#c#${campaign.id}`, 'rewards#t#commission'];
  await transact(names.map((name) => counterUpdate(accountId, name, n)));
  const seedSeconds = (performance.now() - seedStart) / 1000;

  const now = Math.floor(Date.now() / 1000);
  const report = await timed(50, async () => {
    const res = await api(rt, 'GET', `/v1/reports/timeseries/?metric=commission_earned&from=${now - 89 * 86_400}&to=${now}`);
    if (res.status !== 200 || res.body.buckets.length !== 90) throw new Error(`the 90-day report answered ${res.status}`);
  });
  const overview = await timed(50, async () => {
    const res = await api(rt, 'GET', `/v1/reports/overview/?from=${now - 44 * 86_400}&to=${now}`);
    if (res.status !== 200) throw new Error(`the overview answered ${res.status}`);
  });

  // The export, page after page, with the process's memory sampled every 20 ms.
  global.gc?.();
  const base = process.memoryUsage();
  let peakHeap = base.heapUsed;
  let peakRss = base.rss;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  }, 20);
  const started = performance.now();
  let url: string | null = `${rt.url}/v1/exports/rewards.csv`;
  let rows = 0;
  let pages = 0;
  let bytes = 0;
  try {
    while (url) {
      const res: Response = await fetch(url, { headers: { authorization: `Bearer ${rt.demo.apiKey}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`export page ${pages + 1} answered ${res.status}: ${text.slice(0, 200)}`);
      rows += Number(res.headers.get('x-row-count') ?? 0);
      bytes += text.length;
      pages++;
      const link = res.headers.get('link');
      url = link ? (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? null) : null;
    }
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  if (rows < opts.rewards) throw new Error(`the export gave ${rows} rows of ${opts.rewards}`);
  return {
    rewards: opts.rewards,
    seedSeconds,
    report,
    overview,
    exportRun: { rows, pages, seconds, bytes, peakHeapMiB: (peakHeap - base.heapUsed) / MiB, peakRssMiB: (peakRss - base.rss) / MiB },
  };
}
