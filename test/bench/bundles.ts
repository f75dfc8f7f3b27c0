// Bundle size and module initialisation time of every Lambda function, bundled as the CDK stack bundles
// it (infra/cloud/bundling.ts: the options and the lazily loaded provider adapters, which the stack's
// infra/cloud/function.ts uses too), beside an empty handler bundled the same way.
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import {
  BUNDLE_BUDGET_BYTES,
  LAMBDA_BUNDLING,
  LAMBDA_NODE_OPTIONS,
  REPO_ROOT,
  bundleFunctions,
  lambdaBuildOptions,
  sdkVersionOnly,
} from '../../infra/cloud/bundling';
import { fallbackRoute, routes } from '../../functions/routes';
import { scheduledJobs, workers } from '../../functions/workers';
import { median, progress } from './stats';

export { BUNDLE_BUDGET_BYTES, LAMBDA_NODE_OPTIONS, REPO_ROOT };
export const INIT_OVERHEAD_BUDGET_MS = 60;
const INIT_RUNS = 5;

export interface BundleTarget {
  /** Function names sharing this entry (two routes can share a handler). */
  names: string[];
  kind: 'route' | 'fallback' | 'worker' | 'job';
  entry: string;
}

export interface BundleResult extends BundleTarget {
  bytes: number;
  /** The files beside index.js loaded on first use, not at init (provider adapters, lazy modules), in bytes. */
  adapterBytes: number;
  mapBytes: number;
  /** Median require() time, ms, with the stack's NODE_OPTIONS (--enable-source-maps). */
  initMs: number;
  /** Median require() time, ms, without source maps. */
  initPlainMs: number;
  /** CPU time (user + system, all threads) of the process during require(), with source maps; median. */
  initCpuMs: number;
  overheadCpuMs: number;
  /** initMs minus the empty handler's initMs. */
  overheadMs: number;
  overheadPlainMs: number;
  sizeOk: boolean;
  initOk: boolean;
}

export interface BundleSection {
  options: string;
  empty: { bytes: number; initMs: number; initPlainMs: number; initCpuMs: number };
  /** A reference: a handler that only imports the SDK clients every function uses (no service code). */
  sdkOnly: { bytes: number; initMs: number; initPlainMs: number; initCpuMs: number };
  results: BundleResult[];
  /** Largest inputs of the biggest bundle, by bytes in the output. */
  biggestContributors: { name: string; entry: string; parts: Array<{ group: string; bytes: number }> };
  runs: number;
}

export function bundleTargets(): BundleTarget[] {
  const byEntry = new Map<string, BundleTarget>();
  const add = (name: string, kind: BundleTarget['kind'], entry: string) => {
    const seen = byEntry.get(entry);
    if (seen) seen.names.push(name);
    else byEntry.set(entry, { names: [name], kind, entry });
  };
  for (const r of routes) add(r.name, 'route', r.entry);
  add(fallbackRoute.name, 'fallback', fallbackRoute.entry);
  for (const w of workers) add(w.name, 'worker', w.entry);
  for (const j of scheduledJobs) add(j.name, 'job', j.entry);
  return [...byEntry.values()];
}

/** Inline source bundled as if it sat at the repo root (the empty and SDK-only references). */
async function bundleSource(source: string, name: string, outDir: string): Promise<{ file: string; bytes: number; mapBytes: number }> {
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, 'index.js');
  const input: BuildOptions = { stdin: { contents: source, resolveDir: REPO_ROOT, sourcefile: name, loader: 'ts' } };
  await build({ ...lambdaBuildOptions(), ...input, outfile: file, plugins: [sdkVersionOnly] });
  return { file, bytes: statSync(file).size, mapBytes: statSync(`${file}.map`).size };
}

/** Groups a bundle's inputs by npm package (scoped packages by scope/name) or by repo folder. */
function contributors(inputs: Metafile['outputs'][string]['inputs']): Array<{ group: string; bytes: number }> {
  const groups = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
    const group = m ? (m[1] as string) : input.split('/').slice(0, 2).join('/');
    groups.set(group, (groups.get(group) ?? 0) + bytesInOutput);
  }
  return [...groups.entries()].map(([group, bytes]) => ({ group, bytes })).sort((a, b) => b.bytes - a.bytes);
}

const EMPTY_HANDLER = 'export const handler = async (): Promise<{ statusCode: number }> => ({ statusCode: 200 });\n';

/** The SDK clients the functions use and nothing else: how much of a handler's init is the SDK's. */
const SDK_ONLY_HANDLER = [
  "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
  "import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';",
  "import { SQSClient } from '@aws-sdk/client-sqs';",
  'export const handler = async (): Promise<unknown[]> => [DynamoDBClient, DynamoDBDocumentClient, SQSClient];',
  '',
].join('\n');

// The timed part: process.hrtime right before and right after require() of the bundle, in a fresh node.
const INIT_SCRIPT =
  'const c0=process.cpuUsage();const t0=process.hrtime.bigint();const m=require(process.argv[1]);const t1=process.hrtime.bigint();const c1=process.cpuUsage(c0);' +
  "if(typeof m.handler!=='function')throw new Error('no handler export');" +
  'process.stdout.write(JSON.stringify({wall:Number(t1-t0)/1e6,cpu:(c1.user+c1.system)/1e3}));';

/** What Lambda sets, plus the table and queue names: nothing may throw at load for want of them. */
const FUNCTION_ENV: Record<string, string> = {
  TABLE_NAME: 'refloop-bench',
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  AWS_SESSION_TOKEN: 'bench',
  AWS_LAMBDA_FUNCTION_NAME: 'bench',
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
  PROVIDER_EVENTS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/provider-events',
  REWARDS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/rewards',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** Wall time of require() (the budgeted figure) and the CPU time the process spent meanwhile, ms. */
function timeRequire(file: string, sourceMaps: boolean): { wall: number; cpu: number } {
  const run = spawnSync(process.execPath, ['-e', INIT_SCRIPT, file], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...FUNCTION_ENV, NODE_OPTIONS: sourceMaps ? LAMBDA_NODE_OPTIONS : '' },
    timeout: 30_000,
  });
  let value: { wall?: unknown; cpu?: unknown } = {};
  try {
    value = JSON.parse(run.stdout) as typeof value;
  } catch {
    // Reported below.
  }
  if (run.status !== 0 || typeof value.wall !== 'number' || typeof value.cpu !== 'number') {
    throw new Error(`require(${file}) failed (exit ${run.status}): ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  }
  return { wall: value.wall, cpu: value.cpu };
}

export async function measureBundles(workDir: string): Promise<BundleSection> {
  const targets = bundleTargets();
  progress(`bundles: building ${targets.length} functions, an empty handler and an SDK-only one with the stack's esbuild options`);

  const empty = await bundleSource(EMPTY_HANDLER, 'empty-handler.ts', join(workDir, 'bundles', 'empty'));
  const sdk = await bundleSource(SDK_ONLY_HANDLER, 'sdk-only-handler.ts', join(workDir, 'bundles', 'sdk-only'));
  const names = new Map(targets.map((t) => [t.entry.replace(/\.ts$/, '').replace(/[\\/]/g, '_'), t]));
  const bundled = await bundleFunctions(Object.fromEntries([...names].map(([name, t]) => [name, t.entry])), {
    outdir: join(workDir, 'bundles'),
    write: true,
  });
  const built = [...names].map(([name, target]) => {
    const b = bundled[name];
    if (!b) throw new Error(`no bundle for ${target.entry}`);
    const file = join(workDir, 'bundles', name, 'index.js');
    return {
      target,
      file,
      bytes: b.bytes,
      mapBytes: statSync(`${file}.map`).size,
      adapterBytes: [...Object.values(b.adapters), ...Object.values(b.lazy)].reduce((t, x) => t + x, 0),
      inputs: b.inputs,
    };
  });

  // Rounds interleave every bundle (and the empty one), so a burst of other work on the machine is
  // spread over all of them instead of landing on a few.
  const files = [empty.file, sdk.file, ...built.map((b) => b.file)];
  const samples = new Map<string, { maps: number[]; plain: number[]; cpu: number[] }>(
    files.map((f) => [f, { maps: [], plain: [], cpu: [] }]),
  );
  progress(`bundles: timing require() in a fresh node, ${INIT_RUNS} rounds x ${files.length} bundles x 2 (with and without source maps)`);
  for (let round = 0; round < INIT_RUNS; round++) {
    for (const f of files) {
      const s = samples.get(f) as { maps: number[]; plain: number[]; cpu: number[] };
      const withMaps = timeRequire(f, true);
      s.maps.push(withMaps.wall);
      s.cpu.push(withMaps.cpu);
      s.plain.push(timeRequire(f, false).wall);
    }
  }
  const med = (f: string) => {
    const s = samples.get(f) as { maps: number[]; plain: number[]; cpu: number[] };
    return { maps: median(s.maps), plain: median(s.plain), cpu: median(s.cpu) };
  };
  const emptyInit = med(empty.file);
  const sdkInit = med(sdk.file);
  const results: BundleResult[] = built.map((b) => {
    const m = med(b.file);
    const overheadMs = m.maps - emptyInit.maps;
    return {
      ...b.target,
      bytes: b.bytes,
      adapterBytes: b.adapterBytes,
      mapBytes: b.mapBytes,
      initMs: m.maps,
      initPlainMs: m.plain,
      initCpuMs: m.cpu,
      overheadCpuMs: m.cpu - emptyInit.cpu,
      overheadMs,
      overheadPlainMs: m.plain - emptyInit.plain,
      sizeOk: b.bytes <= BUNDLE_BUDGET_BYTES,
      initOk: overheadMs <= INIT_OVERHEAD_BUDGET_MS,
    };
  });
  const biggest = built.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  return {
    options:
      `esbuild bundle, platform ${LAMBDA_BUNDLING.platform}, target ${LAMBDA_BUNDLING.target}, format ${LAMBDA_BUNDLING.format}, minify, external source map without sources, ` +
      `mainFields ${LAMBDA_BUNDLING.mainFields.join(',')}, AWS SDK bundled, external ${LAMBDA_BUNDLING.externals.join(' and ')}, ` +
      `${Object.entries(LAMBDA_BUNDLING.alias)
        .map(([from, to]) => `alias ${from} -> ${to.replace(/^\.\//, '')}`)
        .join(
          ', ',
        )}, the SDK clients' package.json reduced to their version, provider adapters and ${LAMBDA_BUNDLING.lazyModules.join(', ')} in files of their own`,
    empty: { bytes: empty.bytes, initMs: emptyInit.maps, initPlainMs: emptyInit.plain, initCpuMs: emptyInit.cpu },
    sdkOnly: { bytes: sdk.bytes, initMs: sdkInit.maps, initPlainMs: sdkInit.plain, initCpuMs: sdkInit.cpu },
    results,
    biggestContributors: {
      name: biggest.target.names.join(', '),
      entry: biggest.target.entry,
      parts: contributors(biggest.inputs).slice(0, 6),
    },
    runs: INIT_RUNS,
  };
}
