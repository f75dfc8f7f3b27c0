// The `afterBundling` step of every function's bundling (./function.ts), run by NodejsFunction from the
// project root: `tsx infra/cloud/after-bundling.ts <outputDir> <entry>`. When the esbuild CLI's bundle
// reached a provider adapter, rebuilds it with the adapters as files of their own (./bundling.ts).
import { AFTER_BUNDLING_DEFINE, lazyAdaptersAfterBundling } from './bundling';

const [outputDir, entry] = process.argv.slice(2);
if (!outputDir || !entry) {
  console.error('usage: tsx infra/cloud/after-bundling.ts <outputDir> <entry>');
  process.exit(2);
}
const define = process.env[AFTER_BUNDLING_DEFINE];
lazyAdaptersAfterBundling(outputDir, entry, define ? (JSON.parse(define) as Record<string, string>) : undefined).then(
  (kinds) => {
    if (kinds.length > 0) console.error(`${entry}: provider adapters in files of their own (${kinds.join(', ')})`);
  },
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
