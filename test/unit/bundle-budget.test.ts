// The bundle budget: every function of the route and worker tables, bundled as the stack bundles it
// (infra/cloud/bundling.ts: the stack's esbuild options, the provider adapters in files of their own), in
// one esbuild run without writing anything, has an index.js of at most 300 KB minified. `npm run bench`
// has the full table with init times.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_BUDGET_BYTES, bundleFunctions, type BundledFunction } from '../../infra/cloud/bundling';
import { fallbackRoute, routes } from '../../functions/routes';
import { scheduledJobs, workers } from '../../functions/workers';
import { PROVIDER_KINDS } from '../../shared/billing/registry';

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

const entries = [
  ...new Set([...routes.map((r) => r.entry), fallbackRoute.entry, ...workers.map((w) => w.entry), ...scheduledJobs.map((j) => j.entry)]),
];

/** The largest inputs of a bundle, grouped by npm package or file: what to look at when it grows. */
function largestParts(fn: BundledFunction): string {
  const groups = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(fn.inputs)) {
    const group = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? input;
    groups.set(group, (groups.get(group) ?? 0) + bytesInOutput);
  }
  return [...groups]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([group, bytes]) => `${group} ${kb(bytes)}`)
    .join(', ');
}

describe('Lambda bundles', () => {
  let bundled: Record<string, BundledFunction>;

  beforeAll(async () => {
    bundled = await bundleFunctions(Object.fromEntries(entries.map((entry) => [entry.replace(/\.ts$/, ''), entry])), {
      outdir: join(tmpdir(), 'refloop-bundle-budget'),
      write: false,
    });
  }, 120_000);

  it(`every function's index.js is at most ${kb(BUNDLE_BUDGET_BYTES)} minified`, () => {
    const over = Object.values(bundled)
      .filter((fn) => fn.bytes > BUNDLE_BUDGET_BYTES)
      .sort((a, b) => b.bytes - a.bytes)
      .map((fn) => `${fn.entry}: ${kb(fn.bytes)} (${largestParts(fn)})`);
    expect(over).toEqual([]);
  });

  it('a function that may call a provider loads each adapter from a file of its own, only such functions have one, and the SES client is apart', () => {
    const convert = bundled['functions/referrals/convert'];
    expect(Object.keys(convert?.adapters ?? {}).sort()).toEqual([...PROVIDER_KINDS].sort());
    expect(Object.keys(bundled['functions/health']?.adapters ?? {})).toEqual([]);
    // The payout rails' adapters too (rail-<kind>.js), in the function that sends money; the reward worker,
    // which calls provider adapters, carries none of the rails' modules.
    expect(Object.keys(bundled['functions/workers/payout-rails']?.adapters ?? {}).sort()).toEqual([
      'rail-paypal',
      'rail-stripe',
      'rail-wise',
    ]);
    expect(Object.keys(bundled['functions/workers/reward-fanout']?.adapters ?? {}).sort()).toEqual([...PROVIDER_KINDS].sort());
    // The SES client, loaded on the first email sent (infra/cloud/bundling.ts lazyModules).
    expect(Object.keys(bundled['functions/workers/member-emails']?.lazy ?? {})).toEqual(['lazy-ses-client.js']);
    for (const fn of Object.values(bundled)) {
      expect(Object.keys(fn.inputs).filter((input) => /^shared\/providers\/[^/]+\/adapter\.ts$/.test(input))).toEqual([]);
    }
  });

  it("an adapter file loads on first use and takes the function's own modules, not copies", async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'refloop-adapters-'));
    try {
      const built = await bundleFunctions({ fn: 'test/fixtures/bundle/adapters-entry.ts' }, { outdir, write: true });
      const kinds = Object.keys(built.fn?.adapters ?? {}).sort();
      expect(kinds).toEqual([...PROVIDER_KINDS].sort());
      for (const kind of kinds) expect(existsSync(join(outdir, 'fn', `provider-${kind}.js`))).toBe(true);
      const run = spawnSync(
        process.execPath,
        ['-e', 'require(process.argv[1]).handler().then((r) => process.stdout.write(JSON.stringify(r)))', join(outdir, 'fn', 'index.js')],
        {
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '', TABLE_NAME: 'bundle-test', AWS_REGION: 'us-east-1' },
          timeout: 30_000,
        },
      );
      expect({ status: run.status, stderr: run.status === 0 ? '' : run.stderr }).toEqual({ status: 0, stderr: '' });
      const result = JSON.parse(run.stdout) as { loaded: Record<string, string[]>; sameErrorClass: boolean };
      expect(Object.keys(result.loaded).sort()).toEqual(kinds);
      for (const kind of kinds) expect(result.loaded[kind]).toContain('provider');
      expect(result.sameErrorClass).toBe(true);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 120_000);

  it('a bundled DynamoDB and SQS client (with the SDK stubs of infra/cloud/bundling.ts) signs, sends and reads answers and errors', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'refloop-sdk-clients-'));
    try {
      await bundleFunctions({ fn: 'test/fixtures/bundle/sdk-clients-entry.ts' }, { outdir, write: true });
      const run = spawnSync(process.execPath, ['-e', SDK_ENDPOINTS, join(outdir, 'fn', 'index.js')], {
        encoding: 'utf8',
        // AWS_RETRY_MODE asks for the adaptive strategy, which is not bundled: the clients set retryMode themselves.
        env: { PATH: process.env.PATH ?? '', TABLE_NAME: 'bundle-test', AWS_REGION: 'eu-west-1', AWS_RETRY_MODE: 'adaptive' },
        timeout: 30_000,
      });
      expect({ status: run.status, stderr: run.status === 0 ? '' : run.stderr }).toEqual({ status: 0, stderr: '' });
      const { result, requests } = JSON.parse(run.stdout) as {
        result: Record<string, unknown>;
        requests: { target: string; signed: boolean }[];
      };
      expect(result).toEqual({ item: { pk: 'A#1', sk: 'ITEM', n: 1 }, conditional: 'ConditionalCheckFailedException', messageId: 'm-1' });
      expect(requests).toEqual([
        { target: 'DynamoDB_20120810.GetItem', signed: true },
        { target: 'DynamoDB_20120810.PutItem', signed: true },
        { target: 'AmazonSQS.SendMessage', signed: true },
      ]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * Run in the child: serves DynamoDB's and SQS's JSON protocols on a local port (an item for GetItem, a failed
 * condition for PutItem, the body's MD5 for SendMessage, which the SQS client checks), points the bundle at
 * it, runs its handler and prints the result with the requests it received.
 */
const SDK_ENDPOINTS = `
const http = require('node:http');
const { createHash } = require('node:crypto');
const requests = [];
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const target = String(req.headers['x-amz-target']);
    requests.push({ target, signed: /^AWS4-HMAC-SHA256 Credential=local\\/\\d{8}\\/eu-west-1\\/(dynamodb|sqs)\\/aws4_request, SignedHeaders=.*, Signature=[0-9a-f]{64}$/.test(String(req.headers.authorization)) });
    const answer = (status, json) => { res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' }); res.end(JSON.stringify(json)); };
    if (target.endsWith('.GetItem')) return answer(200, { Item: { pk: { S: 'A#1' }, sk: { S: 'ITEM' }, n: { N: '1' } } });
    if (target.endsWith('.PutItem')) return answer(400, { __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'The conditional request failed' });
    if (target.endsWith('.SendMessage')) return answer(200, { MessageId: 'm-1', MD5OfMessageBody: createHash('md5').update(JSON.parse(body).MessageBody).digest('hex') });
    answer(400, { __type: 'UnknownOperationException', message: target });
  });
});
server.listen(0, '127.0.0.1', async () => {
  const endpoint = 'http://127.0.0.1:' + server.address().port;
  Object.assign(process.env, { DYNAMODB_ENDPOINT: endpoint, SQS_ENDPOINT: endpoint, REWARDS_QUEUE_URL: endpoint + '/000000000000/rewards' });
  try {
    const result = await require(process.argv[1]).handler();
    process.stdout.write(JSON.stringify({ result, requests }));
  } finally {
    server.close();
  }
});
`;
