// How every Lambda function is bundled: the one description of the esbuild options, read by the stack
// (./function.ts hands them to NodejsFunction, which runs the esbuild CLI), by the bench
// (test/bench/bundles.ts) and by the bundle budget test (test/unit/bundle-budget.test.ts), which run
// esbuild's JS API. Free of aws-cdk-lib so the tests load it cheaply.
//
// Lazy provider adapters: a function that may call a payment provider serves accounts of every kind, so it
// reaches every adapter, yet a container only ever talks to the providers of the accounts it serves. Each
// provider's definition (shared/providers/<kind>/index.ts) loads its adapter with a dynamic
// `import('./adapter')`. Under tsx and Jest that is an ordinary import of the TypeScript source. In a
// bundle, `lazyAdapters()` turns it into `require('./provider-<kind>.js')`, a file written next to
// index.js, so the adapter's code is parsed on its first use only. The adapter file holds only the modules
// under its provider's folder that nothing else in the function imports; every other module it imports
// (the port's error classes, the retry policy, metrics, tracing, the store...) is the function's own
// instance, handed over by the module that calls a definition's `adapter()`: one metrics buffer, one
// DynamoDB client, one `instanceof ProviderUnavailableError`. `lazyModules` below does the same for
// self-contained modules (the SES client). docs/operations.md ("Bundles") has the figures.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { BuildOptions, Metafile, OutputFile, Plugin } from 'esbuild';

/** The repository root: entries and aliases are relative to it. */
export const REPO_ROOT = resolve(__dirname, '..', '..');

/**
 * The options, in the words both the CDK (BundlingOptions) and esbuild understand.
 * - The AWS SDK v3 is bundled rather than taken from the runtime: the version is the one we test
 *   against, and a tree-shaken bundle loads faster at cold start than the runtime's full SDK.
 * - CommonJS output: middy 6 is ESM-only, but esbuild converts ESM dependencies into a CJS bundle
 *   without the `createRequire` banner an ESM bundle needs for the SDK's CJS internals.
 * - `module` before `main` picks the SDK's ES builds, which tree-shake far better than its dist-cjs
 *   (a handler: about 540 KB with `main` first, 340 KB with `module`, before the next point).
 * - The SDK's default credential chain is replaced by its environment-variable link, the only one that
 *   runs in Lambda (see lambda-credentials.ts): a third of the bundle, and of its parse time, goes.
 * - The DynamoDB client's endpoint-discovery cache, which nothing reads, is a stub (SDK_STUBS below): with
 *   mnemonist's LRU cache and its helpers, about 8 KB in every function that reads the table.
 * - External, so never bundled: the KMS client, which comes from the Lambda runtime's SDK, loaded lazily
 *   on a function's first cold secret read (shared/secrets/kms.ts says why); and the SDK's event stream
 *   codec (about 15 KB in every function), which the SDK imports lazily for operations that stream events.
 *   DynamoDB, SQS and SES have none, so it is never loaded.
 * - Separate source maps without sources keep the deployed code small; NODE_OPTIONS turns them on.
 */
export const LAMBDA_BUNDLING = Object.freeze({
  target: 'node22',
  platform: 'node',
  format: 'cjs',
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'] as readonly string[],
  externals: ['@aws-sdk/client-kms', '@smithy/core/event-streams'] as readonly string[],
  /** Resolved from the project root (the CDK's bundling working directory). */
  alias: {
    '@aws-sdk/credential-provider-node': './infra/cloud/lambda-credentials.ts',
  } as Readonly<Record<string, string>>,
  /**
   * Modules that a function loads with `import()` on first use and that are bundled apart, each into a
   * file of its own next to index.js (`lazy-<name>.js`), with everything they import: the SES client
   * (shared/email/ses-client.ts, about 75 KB with the REST protocol it alone uses) is needed by the
   * member-emails worker on its first send only. Such a module may import packages only, never the
   * service's own modules (they would be loaded twice); the build fails if it does. A `require()` of one
   * (synchronous, on first use) is bundled the same way: the disposable-address list of the fraud rules
   * (shared/domain/disposable-domains.ts, about 170 KB of JSON), required by shared/domain/fraud-rules.ts.
   */
  lazyModules: ['shared/email/ses-client.ts', 'shared/domain/disposable-domains.ts'] as readonly string[],
});

/** The NODE_OPTIONS the stack gives every function (./function.ts `environment`). */
export const LAMBDA_NODE_OPTIONS = '--enable-source-maps';

/** The environment variable that hands a function's `define` constants to ./after-bundling.ts. */
export const AFTER_BUNDLING_DEFINE = 'REFLOOP_BUNDLE_DEFINE';

/**
 * Constants every function's bundle is built with (esbuild `define`, with a function's own): code that
 * tests `process.env.REFLOOP_LAMBDA_BUNDLE` knows it runs from a bundle, so a branch only a laptop
 * takes is dead code there and the modules only it imports are left out (shared/secrets/index.ts: the
 * local key file). Not an environment variable: under tsx and Jest it is unset.
 */
export const LAMBDA_DEFINE: Readonly<Record<string, string>> = Object.freeze({ 'process.env.REFLOOP_LAMBDA_BUNDLE': 'true' });

/** The budget of a function's index.js, minified (its adapter files are loaded on demand, apart). */
export const BUNDLE_BUDGET_BYTES = 300 * 1024;

/**
 * Parts of the AWS SDK that cannot run in a Lambda function, replaced by stubs (the file under
 * node_modules/, and the stub's code). Each stub keeps the module's export;
 * `test/unit/bundle-budget.test.ts` runs a bundled DynamoDB and SQS client to show the clients still work.
 */
const SMITHY = '@smithy/core/dist-es/submodules';
const SDK_STUBS: ReadonlyArray<readonly [file: string, stub: string]> = [
  // The JavaScript SHA-256 (about 3.3 KB) and MD5 (about 1.4 KB; SQS checks message digests with it): the
  // fallbacks the SDK's Node hashes use only when node:crypto has no sha256 or md5, which Node always has.
  [
    `${SMITHY}/checksum/sha256/Sha256Js.js`,
    "export class Sha256Js { constructor() { throw new Error('no sha256 in node:crypto (the JavaScript fallback is not bundled: infra/cloud/bundling.ts)'); } }",
  ],
  [
    `${SMITHY}/checksum/md5/Md5Js.js`,
    "export class Md5Js { constructor() { throw new Error('no md5 in node:crypto (the JavaScript fallback is not bundled: infra/cloud/bundling.ts)'); } }",
  ],
  // The adaptive retry strategy and its rate limiter (about 3.3 KB): built only for retryMode 'adaptive',
  // and every client we create sets retryMode 'standard' (shared/store/client.ts, shared/queue/publish.ts,
  // shared/email/ses-sender.ts), so neither AWS_RETRY_MODE nor a config file can ask for it.
  [
    `${SMITHY}/retry/util-retry/AdaptiveRetryStrategy.js`,
    "export class AdaptiveRetryStrategy { constructor() { throw new Error('the adaptive retry strategy is not bundled (our clients set retryMode standard: infra/cloud/bundling.ts)'); } }",
  ],
  // The region from EC2's instance metadata service (about 1.2 KB): asked only when a client has no region
  // (ours always pass one: shared/config.ts) or, for defaultsMode 'auto', outside Lambda (in Lambda the
  // SDK reads AWS_REGION, with AWS_EXECUTION_ENV set). Lambda has no instance metadata service: the
  // stub answers as the real lookup does there, no region.
  [
    `${SMITHY}/config/config-resolver/regionConfig/getInstanceMetadataRegion.js`,
    'export const getInstanceMetadataRegion = async () => undefined;',
  ],
  // The DynamoDB client's endpoint-discovery cache (with the LRU cache it builds on, about 1.4 KB): the
  // client creates one, but only the endpoint-discovery middleware reads it, and none of the client's
  // commands adds that middleware (discovery is optional for DynamoDB, and off).
  [
    '@aws-sdk/endpoint-cache/dist-es/EndpointCache.js',
    "export class EndpointCache { constructor() {} } for (const m of ['getEndpoint', 'get', 'set', 'delete', 'has', 'clear']) EndpointCache.prototype[m] = () => { throw new Error('endpoint discovery is not bundled (infra/cloud/bundling.ts)'); };",
  ],
  // The warning the SDK prints on a Node older than 22, at every client's creation: functions run on
  // Node 22 (infra/cloud/function.ts), where it does nothing.
  [
    '@aws-sdk/core/dist-es/submodules/client/emitWarningIfUnsupportedVersion.js',
    'export const state = { warningEmitted: false };\nexport const emitWarningIfUnsupportedVersion = () => {};',
  ],
  // The Document client's Scan and Query paginators (about 1.1 KB with the ScanCommand they keep): each is a
  // createPaginator call at the module's top level, which esbuild must keep as a possible side effect, and
  // with it the ScanCommand no function sends. The service pages with its own loops (shared/store/ops.ts
  // queryAll) and never calls paginateScan or paginateQuery.
  [
    '@aws-sdk/lib-dynamodb/dist-es/pagination/ScanPaginator.js',
    "export const paginateScan = () => { throw new Error('paginateScan is not bundled (infra/cloud/bundling.ts)'); };",
  ],
  [
    '@aws-sdk/lib-dynamodb/dist-es/pagination/QueryPaginator.js',
    "export const paginateQuery = () => { throw new Error('paginateQuery is not bundled (infra/cloud/bundling.ts)'); };",
  ],
  // The endpoint parameters of S3 buckets (about 0.8 KB): the endpoint middleware calls them only for a
  // client whose serviceId is s3, and no function bundles an S3 client.
  [
    `${SMITHY}/endpoints/middleware-endpoint/service-customizations/s3.js`,
    [
      "const notS3 = () => { throw new Error('no S3 client is bundled (infra/cloud/bundling.ts)'); };",
      'export const resolveParamsForS3 = async () => notS3();',
      'export const isDnsCompatibleBucketName = notS3;',
      'export const isArnBucketName = notS3;',
      'export const DOT_PATTERN = /\\./;',
      'export const S3_HOSTNAME_PATTERN = /^(.+\\.)?s3(-fips)?(\\.dualstack)?[.-]([a-z0-9-]+)\\./;',
    ].join('\n'),
  ],
];

/**
 * A client's schemas (`@aws-sdk/client-<name>/dist-es/schemas/schemas_0.js`) describe every operation of
 * the service, each an exported array that only its command reads, so esbuild should leave out those of the
 * commands a function never sends. It keeps them all: their trait objects have computed keys naming the
 * module's string constants (`{ [_xN]: _Att }` with `const _xN = "xmlName"`), and esbuild treats a computed
 * key as a possible side effect. Writing each such key as the string it names (`{ "xmlName": _Att }`, the
 * same object) lets esbuild drop the unused ones: about 6 KB for SQS and 5 KB for DynamoDB in a function
 * that sends two or three of their operations.
 */
export function literalSchemaKeys(source: string): string {
  const constants = new Map<string, string>();
  for (const m of source.matchAll(/^const ([A-Za-z_$][\w$]*) = ("(?:[^"\\\n]|\\.)*");$/gm)) constants.set(m[1] as string, m[2] as string);
  return source.replace(/([{,]\s*)\[([A-Za-z_$][\w$]*)\](\s*:)/g, (whole, before: string, name: string, colon: string) => {
    const literal = constants.get(name);
    return literal === undefined ? whole : `${before}${literal}${colon}`;
  });
}

/**
 * The AWS SDK clients import their whole package.json to read one field, their version (for the
 * User-Agent): esbuild cannot tree-shake a JSON default import, so this hands them `{ version }` alone
 * (about 2.3 KB per client). It also loads the stubs of SDK_STUBS.
 */
export const sdkVersionOnly: Plugin = {
  name: 'refloop-sdk-version-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]@aws-sdk[\\/][^\\/]+[\\/]package\.json$/ }, (args) => {
      const { version } = JSON.parse(readFileSync(args.path, 'utf8')) as { version: string };
      return { contents: JSON.stringify({ version }), loader: 'json' };
    });
    b.onLoad({ filter: /[\\/]node_modules[\\/]@aws-sdk[\\/]client-[a-z0-9-]+[\\/]dist-es[\\/]schemas[\\/]schemas_0\.js$/ }, (args) => ({
      contents: literalSchemaKeys(readFileSync(args.path, 'utf8')),
      loader: 'js',
    }));
    for (const [file, stub] of SDK_STUBS) {
      const path = `node_modules/${file}`.split('/').map((p) => p.replace(/[.]/g, '\\.'));
      b.onLoad({ filter: new RegExp(`[\\\\/]${path.join('[\\\\/]')}$`) }, () => ({ contents: `${stub}\n`, loader: 'js' }));
    }
  },
};

/**
 * The same options for esbuild's JS API, as NodejsFunction turns LAMBDA_BUNDLING into CLI arguments (a
 * build of a function adds the plugins: `sdkVersionOnly` and `lazyAdapters`, see bundleFunctions).
 */
export function lambdaBuildOptions(): BuildOptions {
  return {
    bundle: true,
    platform: LAMBDA_BUNDLING.platform,
    target: LAMBDA_BUNDLING.target,
    format: LAMBDA_BUNDLING.format,
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: LAMBDA_BUNDLING.sourcemap,
    sourcesContent: LAMBDA_BUNDLING.sourcesContent,
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    external: [...LAMBDA_BUNDLING.externals],
    alias: { ...LAMBDA_BUNDLING.alias },
    absWorkingDir: REPO_ROOT,
    logLevel: 'error',
  };
}

/** Where index.js finds the modules it hands to an adapter file. */
const HOST_MODULES = "globalThis[Symbol.for('refloop.bundle.hostModules')]";

const repoPath = (abs: string) => relative(REPO_ROOT, abs).split(sep).join('/');
/**
 * An adapter's id: a provider kind (`stripe`: shared/providers/stripe/, file provider-stripe.js) or a payout
 * rail's, prefixed (`rail-stripe`: shared/rails/stripe/, file rail-stripe.js). A rail's definition loads its
 * adapter the same way (`import('./adapter')`), so the one function that sends money parses a rail's code only
 * for the rails its messages use.
 */
const RAIL_ID = 'rail-';
const folderOf = (id: string) => (id.startsWith(RAIL_ID) ? `shared/rails/${id.slice(RAIL_ID.length)}/` : `shared/providers/${id}/`);
export const adapterFileName = (id: string) => (id.startsWith(RAIL_ID) ? `${id}.js` : `provider-${id}.js`);

/** An adapter file: its code, and the function modules it takes from index.js (repo-relative paths). */
export interface AdapterFile {
  kind: string;
  /** repo-relative paths of the modules bundled into it. */
  inputs: string[];
  /** The modules index.js must hand over (repo-relative paths), each with the names the adapter reads ('*': all). */
  hostModules: Record<string, string[] | '*'>;
  files: OutputFile[];
}

/**
 * The modules of a provider's folder its definition loads statically: they belong to index.js, never to
 * the adapter file (shared/providers/<kind>/index.ts; none when the folder has no definition yet).
 */
async function definitionModules(kind: string): Promise<Set<string>> {
  const definition = join(REPO_ROOT, folderOf(kind), 'index.ts');
  if (!existsSync(definition)) return new Set();
  const { build } = await import('esbuild');
  const out = await build({
    ...lambdaBuildOptions(),
    entryPoints: [definition],
    write: false,
    metafile: true,
    minify: false,
    sourcemap: false,
    outdir: join(REPO_ROOT, '.bundle-analysis'),
    // Its adapter (import()) and its parts (require(), see lazyModules) are not loaded statically.
    plugins: [
      {
        name: 'no-lazy-imports',
        setup: (b) =>
          void b.onResolve({ filter: /.*/ }, (a) =>
            a.kind === 'dynamic-import' || a.kind === 'require-call' ? { path: a.path, external: true } : undefined,
          ),
      },
    ],
  });
  return new Set(Object.keys(out.metafile.inputs));
}

/**
 * The names `importer` reads from `specifier` (its import and re-export declarations; type-only ones
 * left out), so index.js hands over those and keeps tree-shaking the rest; '*' when it takes the whole
 * module (a namespace import, `export *`, or a declaration this simple reading does not follow).
 */
function importedNames(importer: string, specifier: string): Set<string> | '*' {
  const source = readFileSync(importer, 'utf8');
  const quoted = `['"]${specifier.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}['"]`;
  const names = new Set<string>();
  let found = false;
  for (const m of source.matchAll(new RegExp(`\\b(import|export)\\s+([^;]*?)\\s*from\\s*${quoted}`, 'g'))) {
    found = true;
    const clause = (m[2] as string).trim();
    if (clause.startsWith('type ') || clause.startsWith('type{')) continue;
    const braces = /^\{([^}]*)\}$/.exec(clause);
    if (!braces) return '*';
    for (const part of (braces[1] as string).split(',')) {
      const item = part.trim();
      if (item === '' || item.startsWith('type ')) continue;
      names.add((item.split(/\s+as\s+/)[0] as string).trim());
    }
  }
  return found ? names : '*';
}

/** Builds the adapter file of one provider kind (not written: `files` are esbuild's output files, paths under outdir). */
export async function buildAdapterFile(kind: string, outdir: string): Promise<AdapterFile> {
  const { build } = await import('esbuild');
  const folder = folderOf(kind);
  const definition = await definitionModules(kind);
  const hostModules = new Map<string, Set<string> | '*'>();
  const plugin: Plugin = {
    name: 'refloop-adapter-file',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'inner' || args.kind === 'entry-point') return undefined;
        const resolved = await b.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: 'inner',
        });
        if (resolved.errors.length > 0 || resolved.external || !resolved.path.startsWith(REPO_ROOT + sep)) return undefined;
        const path = repoPath(resolved.path);
        if (path.startsWith('node_modules/')) return undefined;
        if (path.startsWith(folder) && !definition.has(path)) return undefined;
        const names = importedNames(args.importer, args.path);
        const seen = hostModules.get(path) ?? new Set<string>();
        if (names === '*' || seen === '*') hostModules.set(path, '*');
        else hostModules.set(path, new Set([...seen, ...names]));
        return { path, namespace: 'refloop-host-module' };
      });
      b.onLoad({ filter: /.*/, namespace: 'refloop-host-module' }, (args) => ({
        contents:
          `var m = ${HOST_MODULES};\n` +
          `if (!m || !m[${JSON.stringify(args.path)}]) throw new Error(${JSON.stringify(`${args.path} was not handed over: this function's bundle has no module that calls a provider definition's adapter()`)});\n` +
          `module.exports = m[${JSON.stringify(args.path)}];\n`,
        loader: 'js',
      }));
    },
  };
  const out = await build({
    ...lambdaBuildOptions(),
    entryPoints: { [adapterFileName(kind).replace(/\.js$/, '')]: join(REPO_ROOT, folder, 'adapter.ts') },
    outdir,
    write: false,
    metafile: true,
    plugins: [sdkVersionOnly, plugin],
  });
  const inputs = Object.keys(out.metafile.inputs).filter((i) => !i.startsWith('refloop-host-module:'));
  const handed = Object.fromEntries(
    [...hostModules]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([path, names]) => [path, names === '*' ? names : [...names].sort()] as const),
  );
  return { kind, inputs, hostModules: handed, files: out.outputFiles };
}

/** `import('./adapter')` in code (not in a type: `typeof import('./adapter')`). */
const ADAPTER_IMPORT = /(?<!typeof\s+)\bimport\(\s*(['"])\.\/adapter\1\s*\)/g;
/** A call of a definition's `adapter()` (a rail's takes its connection), outside the folders (where it is declared). */
const ADAPTER_CALL = /\.adapter\(/;
const ADAPTER_FOLDER_FILE = /^shared\/(providers|rails)\/([a-z0-9-]+)\/[^/]+\.ts$/;
const adapterIdOf = (path: string): string | undefined => {
  const m = ADAPTER_FOLDER_FILE.exec(path);
  if (!m) return undefined;
  return m[1] === 'rails' ? `${RAIL_ID}${m[2]}` : m[2];
};
const HAND_OVER = 'refloop-adapter-host';
/** The rails' hand-over (modules whose path names a rail call a rail definition's adapter()): rail adapters' modules only. */
const HAND_OVER_RAILS = 'refloop-rail-adapter-host';
const handOverOf = (callerPath: string) => (/rail/.test(callerPath) ? HAND_OVER_RAILS : HAND_OVER);
const idsOf = (handOver: string) => adapterKinds().filter((id) => id.startsWith(RAIL_ID) === (handOver === HAND_OVER_RAILS));

/** The adapters' ids (shared/providers/<kind>/adapter.ts, then shared/rails/<kind>/adapter.ts as rail-<kind>). */
function adapterKinds(): string[] {
  const inFolder = (group: string, prefix: string) =>
    readdirSync(join(REPO_ROOT, 'shared', group), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(REPO_ROOT, 'shared', group, d.name, 'adapter.ts')))
      .map((d) => `${prefix}${d.name}`)
      .sort();
  return [...inFolder('providers', ''), ...inFolder('rails', RAIL_ID)];
}

/**
 * The esbuild plugin for a function's build.
 * - In a provider's folder, `import('./adapter')` becomes a call of a small module (the loader) that
 *   requires the adapter file. The loader is a static import: a dynamic one would make esbuild wrap
 *   everything the adapter reaches in lazily initialised modules, and tree-shaking stops at such wrappers
 *   (the whole DynamoDB and SQS clients, their aggregated commands and waiters, get in: about 50 KB).
 * - A module that calls a definition's `adapter()` (shared/billing/adapters.ts) imports the hand-over:
 *   it gives the adapter files the function's own instances of the modules they import, reading only the
 *   names they use (so the rest of each module is still tree-shaken). A function that never calls
 *   `adapter()` (the API reference, which lists the providers' form fields) carries none of them: it
 *   would require the adapter file in vain, and the adapter file says so.
 * `adapterFor(kind)` builds (or returns the built) adapter file of a kind.
 */
export function lazyAdapters(adapterFor: (kind: string) => Promise<AdapterFile>): Plugin {
  return {
    name: 'refloop-lazy-adapters',
    setup(b) {
      b.onLoad({ filter: /[\\/]shared[\\/].*\.ts$/ }, async (args) => {
        const path = repoPath(args.path);
        const source = readFileSync(args.path, 'utf8');
        const kind = adapterIdOf(path);
        if (kind !== undefined) {
          if (!existsSync(join(REPO_ROOT, folderOf(kind), 'adapter.ts')) || source.search(ADAPTER_IMPORT) < 0) return undefined;
          const contents =
            source.replace(ADAPTER_IMPORT, '__refloopLoadAdapter()') +
            `\nimport { load as __refloopLoadAdapter } from ${JSON.stringify(`refloop-lazy-adapter:${kind}`)};\n`;
          return { contents, loader: 'ts' };
        }
        // Comments do not count: a module that only mentions `definition.adapter()` hands nothing over.
        const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
        if (!ADAPTER_CALL.test(code)) return undefined;
        return { contents: `${source}\nimport ${JSON.stringify(handOverOf(path))};\n`, loader: 'ts' };
      });
      b.onResolve({ filter: /^refloop-lazy-adapter:/ }, (args) => ({
        path: args.path.slice('refloop-lazy-adapter:'.length),
        namespace: 'refloop-lazy-adapter',
      }));
      b.onResolve({ filter: /^\.\/(provider|rail)-[a-z0-9-]+\.js$/, namespace: 'refloop-lazy-adapter' }, (args) => ({
        path: args.path,
        external: true,
      }));
      b.onLoad({ filter: /.*/, namespace: 'refloop-lazy-adapter' }, (args) => ({
        contents: [
          'let loaded;',
          'export function load() {',
          '  return Promise.resolve().then(() => {',
          `    if (!loaded) loaded = require(${JSON.stringify(`./${adapterFileName(args.path)}`)});`,
          '    return loaded;',
          '  });',
          '}',
          '',
        ].join('\n'),
        loader: 'js',
        resolveDir: REPO_ROOT,
      }));
      b.onResolve({ filter: new RegExp(`^(${HAND_OVER}|${HAND_OVER_RAILS})$`) }, (args) => ({ path: args.path, namespace: HAND_OVER }));
      b.onLoad({ filter: /.*/, namespace: HAND_OVER }, async (args) => {
        const wanted = new Map<string, Set<string> | '*'>();
        for (const kind of idsOf(args.path)) {
          for (const [path, names] of Object.entries((await adapterFor(kind)).hostModules)) {
            const seen = wanted.get(path) ?? new Set<string>();
            wanted.set(path, names === '*' || seen === '*' ? '*' : new Set([...seen, ...names]));
          }
        }
        const handed = [...wanted].sort(([a], [c]) => (a < c ? -1 : 1));
        // Namespace imports read by name only: esbuild tree-shakes the rest of each module.
        const lines = handed.map(([path], i) => `import * as m${i} from ${JSON.stringify(join(REPO_ROOT, path))};`);
        lines.push(`const m = ${HOST_MODULES} || (${HOST_MODULES} = {});`);
        handed.forEach(([path, names], i) => {
          lines.push(
            `m[${JSON.stringify(path)}] = ${names === '*' ? `m${i}` : `{ ${[...names].map((n) => `get ${n}() { return m${i}.${n}; }`).join(', ')} }`};`,
          );
        });
        return { contents: `${lines.join('\n')}\n`, loader: 'js', resolveDir: REPO_ROOT };
      });
    },
  };
}

/**
 * A provider definition's parts: `require('./<part>')` in shared/providers/<kind>/index.ts (the form and
 * its parsing, the CLI spec, the webhook signature check) is bundled apart like a lazy module, into
 * `lazy-<kind>-<part>.js`, and read on first use, synchronously: a function that never reads a definition's
 * form, CLI spec or signature check does not parse them. Such a part may import its own provider folder's
 * modules, shared/billing/definition.ts (the definitions' helpers: constants and pure functions) and
 * packages only (the build fails otherwise); they hold no state, so a copy in the part's file beside the
 * one in index.js is harmless.
 */
const DEFINITION_HELPERS = 'shared/billing/definition.ts';
const PROVIDER_PART = /^shared\/providers\/([a-z0-9-]+)\/([a-z0-9-]+)\.ts$/;
const isProviderPart = (importer: string, path: string) => {
  const part = PROVIDER_PART.exec(path);
  return part !== null && part[2] !== 'index' && part[2] !== 'adapter' && importer === `shared/providers/${part[1]}/index.ts`;
};

export const lazyModuleFileName = (path: string) => {
  const part = PROVIDER_PART.exec(path);
  return part ? `lazy-${part[1]}-${part[2]}.js` : `lazy-${(path.split('/').pop() as string).replace(/\.ts$/, '')}.js`;
};

/** A lazy module's file: its code and the modules bundled into it (repo-relative). */
interface LazyModuleFile {
  path: string;
  inputs: string[];
  files: OutputFile[];
}

async function buildLazyModule(path: string, outdir: string): Promise<LazyModuleFile> {
  const { build } = await import('esbuild');
  const out = await build({
    ...lambdaBuildOptions(),
    entryPoints: { [lazyModuleFileName(path).replace(/\.js$/, '')]: join(REPO_ROOT, path) },
    outdir,
    write: false,
    metafile: true,
    plugins: [sdkVersionOnly],
  });
  const inputs = Object.keys(out.metafile.inputs);
  const folder = PROVIDER_PART.test(path) ? path.slice(0, path.lastIndexOf('/') + 1) : null;
  const own = inputs.filter(
    (i) =>
      i !== path &&
      !/(^|\/)node_modules\//.test(i) &&
      i !== 'infra/cloud/lambda-credentials.ts' &&
      !(folder !== null && (i.startsWith(folder) || i === DEFINITION_HELPERS)),
  );
  if (own.length > 0)
    throw new Error(`${path} is bundled apart (LAMBDA_BUNDLING.lazyModules) but imports the service's modules: ${own.join(', ')}`);
  return { path, inputs, files: out.outputFiles };
}

/**
 * The esbuild plugin that turns `import()` of a lazy module, and `require()` of a provider definition's
 * part, into a `require()` of its file.
 */
function lazyModules(): Plugin {
  return {
    name: 'refloop-lazy-modules',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if ((args.kind !== 'dynamic-import' && args.kind !== 'require-call') || args.pluginData === 'inner') return undefined;
        const resolved = await b.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: 'inner',
        });
        const path = resolved.path ? repoPath(resolved.path) : '';
        if (args.kind === 'require-call')
          return isProviderPart(repoPath(args.importer), path) || LAMBDA_BUNDLING.lazyModules.includes(path)
            ? { path, namespace: 'refloop-lazy-module' }
            : undefined;
        return LAMBDA_BUNDLING.lazyModules.includes(path) ? { path, namespace: 'refloop-lazy-module' } : undefined;
      });
      b.onResolve({ filter: /^\.\/lazy-[^/]+\.js$/, namespace: 'refloop-lazy-module' }, (args) => ({ path: args.path, external: true }));
      // CommonJS without imports: esbuild wraps only this stub for the import(), nothing it reaches.
      b.onLoad({ filter: /.*/, namespace: 'refloop-lazy-module' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(`./${lazyModuleFileName(args.path)}`)});\n`,
        loader: 'js',
        resolveDir: REPO_ROOT,
      }));
    },
  };
}

export interface BundledFunction {
  entry: string;
  /** index.js, minified. */
  bytes: number;
  /** The adapter files next to it, by kind, in bytes. */
  adapters: Record<string, number>;
  /** The lazy modules' files next to it, by file name, in bytes. */
  lazy: Record<string, number>;
  /** repo-relative inputs of index.js. */
  inputs: Metafile['outputs'][string]['inputs'];
}

/**
 * Bundles functions as the stack deploys them, all in one esbuild run (entries: output name -> entry
 * relative to the repo root, e.g. `functions/referrals/convert`). Written under `outdir/<name>/` when
 * `write` is set: index.js, its map and the adapter files it loads. Throws when a module would be both in
 * a function's index.js and in one of its adapter files (two instances of one module).
 */
export async function bundleFunctions(
  entries: Record<string, string>,
  options: { outdir: string; write: boolean; define?: Record<string, string> },
): Promise<Record<string, BundledFunction>> {
  const { build } = await import('esbuild');
  const adapterBuilds = new Map<string, Promise<AdapterFile>>();
  const adapterFor = (kind: string) => {
    let built = adapterBuilds.get(kind);
    if (!built) {
      built = buildAdapterFile(kind, options.outdir);
      adapterBuilds.set(kind, built);
    }
    return built;
  };
  const plugin = lazyAdapters(adapterFor);
  const entryPoints = Object.fromEntries(Object.entries(entries).map(([name, entry]) => [`${name}/index`, entry]));
  const out = await build({
    ...lambdaBuildOptions(),
    entryPoints,
    outdir: options.outdir,
    write: false,
    metafile: true,
    define: { ...LAMBDA_DEFINE, ...options.define },
    plugins: [sdkVersionOnly, lazyModules(), plugin],
  });
  const lazyPaths = [
    ...new Set(
      Object.values(out.metafile.outputs).flatMap((o) => Object.keys(o.inputs).filter((i) => i.startsWith('refloop-lazy-module:'))),
    ),
  ].map((i) => i.slice('refloop-lazy-module:'.length));
  const lazyFiles = new Map(await Promise.all(lazyPaths.map(async (path) => [path, await buildLazyModule(path, options.outdir)] as const)));
  const adapters = new Map<string, AdapterFile>();
  for (const [kind, built] of adapterBuilds) adapters.set(kind, await built);
  const result: Record<string, BundledFunction> = {};
  for (const [name, entry] of Object.entries(entries)) {
    const outPath = repoPath(resolve(options.outdir, name, 'index.js'));
    const output = outPath ? out.metafile.outputs[outPath] : undefined;
    if (!outPath || !output) throw new Error(`no output for ${entry}`);
    // The adapter files a function can load: those of its definitions, when it calls adapter() at all.
    const handsOver = (h: string) => output.inputs[`${HAND_OVER}:${h}`] !== undefined;
    const kinds = Object.keys(output.inputs)
      .filter((i) => i.startsWith('refloop-lazy-adapter:'))
      .map((i) => i.slice('refloop-lazy-adapter:'.length))
      .filter((id) => handsOver(id.startsWith(RAIL_ID) ? HAND_OVER_RAILS : HAND_OVER));
    const sizes: Record<string, number> = {};
    for (const kind of kinds) {
      const adapter = adapters.get(kind) as AdapterFile;
      const twice = adapter.inputs.filter((i) => output.inputs[i] !== undefined);
      if (twice.length > 0) {
        throw new Error(
          `${entry}: ${twice.join(', ')} would be both in index.js and in ${adapterFileName(kind)}; import it only from the adapter, or from its definition (${folderOf(kind)}index.ts)`,
        );
      }
      const code = adapter.files.find((f) => f.path.endsWith(adapterFileName(kind)));
      sizes[kind] = code?.contents.byteLength ?? 0;
    }
    const lazy = Object.keys(output.inputs)
      .filter((i) => i.startsWith('refloop-lazy-module:'))
      .map((i) => lazyFiles.get(i.slice('refloop-lazy-module:'.length)) as LazyModuleFile);
    const lazySizes = Object.fromEntries(
      lazy.map((l) => [
        lazyModuleFileName(l.path),
        l.files.find((f) => f.path.endsWith(lazyModuleFileName(l.path)))?.contents.byteLength ?? 0,
      ]),
    );
    result[name] = { entry, bytes: output.bytes, adapters: sizes, lazy: lazySizes, inputs: output.inputs };
    if (options.write) {
      const dir = join(options.outdir, name);
      mkdirSync(dir, { recursive: true });
      for (const file of out.outputFiles.filter((f) => dirname(f.path) === resolve(options.outdir, name)))
        writeFileSync(file.path, file.contents);
      for (const files of [...kinds.map((kind) => (adapters.get(kind) as AdapterFile).files), ...lazy.map((l) => l.files)]) {
        for (const file of files) writeFileSync(join(dir, file.path.slice(resolve(options.outdir).length + 1)), file.contents);
      }
    }
  }
  return result;
}

/**
 * The stack's second step (./function.ts, NodejsFunction's `afterBundling` hook): NodejsFunction has
 * bundled `entry` into `outputDir` with the esbuild CLI, which cannot run plugins; the function is
 * bundled again here with the same options and the plugins, as the bench and the budget test bundle it,
 * and its files replace the CLI's. Answers the provider kinds whose adapter files it wrote.
 */
export async function rebundleAfterBundling(outputDir: string, entry: string, define?: Record<string, string>): Promise<string[]> {
  const tmp = join(outputDir, '.rebundle');
  const built = await bundleFunctions({ fn: entry }, { outdir: tmp, write: true, ...(define ? { define } : {}) });
  for (const name of readdirSync(outputDir)) if (name !== '.rebundle') rmSync(join(outputDir, name), { recursive: true, force: true });
  for (const name of readdirSync(join(tmp, 'fn'))) renameSync(join(tmp, 'fn', name), join(outputDir, name));
  rmSync(tmp, { recursive: true, force: true });
  return Object.keys(built.fn?.adapters ?? {});
}
