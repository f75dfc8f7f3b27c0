// Validates an OpenAPI document (JSON on stdin) with @seriousme/openapi-schema-validator, which checks
// it against the official OpenAPI 3.1 JSON Schema and resolves every $ref. An ES module, so it runs
// in its own Node process (Jest's CommonJS transform cannot load it). Prints {valid, errors}.
import { Validator } from '@seriousme/openapi-schema-validator';

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const validator = new Validator();
const result = await validator.validate(JSON.parse(input));
const refs = result.valid ? await validator.validateBundle?.([JSON.parse(input)]).catch(() => null) : null;
process.stdout.write(
  JSON.stringify({ valid: result.valid, errors: result.errors ?? null, version: validator.version, bundle: refs ? refs.valid : null }),
);
