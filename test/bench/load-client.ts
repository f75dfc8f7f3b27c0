// The load generator, in its own process (forked by load.ts): autocannon must not share an event loop
// with the gateway it measures. Receives one job at a time over IPC and answers with its figures.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { percentile } from './stats';

export type LoadScenario =
  /** GETs cycling over the paths. */
  | { kind: 'paths'; paths: string[] }
  /** POST /v1/referrals/ with a new user_identifier per request, member codes cycled. */
  | { kind: 'create-referral'; path: string; memberCodes: string[]; userPrefix: string }
  /** POSTs of pre-built form bodies (signed alerts), each sent once, in order. */
  | { kind: 'form-bodies'; path: string; bodiesFile: string }
  /** POSTs of pre-built signed JSON webhooks, one per line `{"h": {header: value}, "b": "<raw body>"}`, in order. */
  | { kind: 'signed-bodies'; path: string; bodiesFile: string };

export interface LoadJob {
  id: number;
  url: string;
  connections: number;
  /** Requests per second per connection (paced clients); absent or 0: closed loops, as fast as answered. */
  connectionRate?: number;
  /** Seconds; ignored when `amount` is set. */
  duration?: number;
  /** Exactly this many requests (form-bodies: one per body). */
  amount?: number;
  headers: Record<string, string>;
  scenario: LoadScenario;
}

export interface LoadFigures {
  /** Requests answered 2xx per second of the run. */
  rps: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  /** Latency of 2xx answers, ms, from every response's own timing (not the ms-bucketed histogram). */
  p50: number;
  p97_5: number;
  p99: number;
  max: number;
  statusCodes: Record<string, number>;
}

export type LoadReply = { id: number; figures: LoadFigures } | { id: number; error: string };

function requestsFor(scenario: LoadScenario): autocannon.Request[] {
  switch (scenario.kind) {
    case 'paths': {
      let i = 0;
      return [{ method: 'GET', setupRequest: (req) => ({ ...req, path: scenario.paths[i++ % scenario.paths.length] as string }) }];
    }
    case 'create-referral': {
      let i = 0;
      return [
        {
          method: 'POST',
          path: scenario.path,
          setupRequest: (req) => {
            const n = i++;
            const code = scenario.memberCodes[n % scenario.memberCodes.length] as string;
            return { ...req, body: JSON.stringify({ user_identifier: `${scenario.userPrefix}-${n}`, member_code: code }) };
          },
        },
      ];
    }
    case 'form-bodies': {
      const bodies = readFileSync(scenario.bodiesFile, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0);
      let i = 0;
      return [{ method: 'POST', path: scenario.path, setupRequest: (req) => ({ ...req, body: bodies[i++ % bodies.length] as string }) }];
    }
    case 'signed-bodies': {
      const signed = readFileSync(scenario.bodiesFile, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as { h: Record<string, string>; b: string });
      let i = 0;
      return [
        {
          method: 'POST',
          path: scenario.path,
          setupRequest: (req) => {
            const one = signed[i++ % signed.length] as { h: Record<string, string>; b: string };
            return { ...req, headers: { ...req.headers, ...one.h }, body: one.b };
          },
        },
      ];
    }
  }
}

function run(job: LoadJob): Promise<LoadFigures> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const statusCodes: Record<string, number> = {};
    const startedAt = process.hrtime.bigint();
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        ...(job.connectionRate ? { connectionRate: job.connectionRate } : {}),
        ...(job.amount !== undefined ? { amount: job.amount } : { duration: job.duration ?? 10 }),
        headers: job.headers,
        requests: requestsFor(job.scenario),
        timeout: 30,
      },
      (err, result) => {
        if (err) return reject(err);
        const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
        const ok = result['2xx'];
        resolve({
          rps: ok / seconds,
          requests: result.requests.sent,
          ok,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          seconds,
          p50: percentile(latencies, 50),
          p97_5: percentile(latencies, 97.5),
          p99: percentile(latencies, 99),
          max: percentile(latencies, 100),
          statusCodes,
        });
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

process.on('message', (job: LoadJob) => {
  run(job).then(
    (figures) => process.send?.({ id: job.id, figures } satisfies LoadReply),
    (err: unknown) => process.send?.({ id: job.id, error: err instanceof Error ? err.message : String(err) } satisfies LoadReply),
  );
});
process.on('disconnect', () => process.exit(0));
