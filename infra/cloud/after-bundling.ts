// The `afterBundling` step of every function's bundling (./function.ts), run by NodejsFunction from the
// project root: `tsx infra/cloud/after-bundling.ts <outputDir> <entry>`. Bundles the function again with
// esbuild's JS API and the plugins the CLI cannot run (./bundling.ts), replacing the CLI's files.
import { AFTER_BUNDLING_DEFINE, rebundleAfterBundling } from './bundling';

const [outputDir, entry] = process.argv.slice(2);
if (!outputDir || !entry) {
  console.error('usage: tsx infra/cloud/after-bundling.ts <outputDir> <entry>');
  process.exit(2);
}
const define = process.env[AFTER_BUNDLING_DEFINE];
rebundleAfterBundling(outputDir, entry, define ? (JSON.parse(define) as Record<string, string>) : undefined).then(
  (kinds) => {
    if (kinds.length > 0) console.error(`${entry}: provider adapters in files of their own (${kinds.join(', ')})`);
  },
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
