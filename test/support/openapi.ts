// Validating live responses against the OpenAPI document: ajv (JSON Schema 2020-12, the 3.1 dialect)
// with the document's components registered once; each operation's response schema is compiled on use.
// And the document itself against the official 3.1 schema, with @seriousme/openapi-schema-validator in
// its own Node process (it is an ES module).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;
const BASE = 'https://refloop.test/openapi.json';

export function validateDocument(doc: unknown): { valid: boolean; errors: unknown; version: string } {
  const out = execFileSync(process.execPath, [join(__dirname, 'validate-openapi.mjs')], { input: JSON.stringify(doc), encoding: 'utf8', timeout: 60_000 });
  return JSON.parse(out) as { valid: boolean; errors: unknown; version: string };
}

export function responseValidator(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: BASE, components: doc.components });
  const compiled = new Map<string, ValidateFunction>();
  const absolute = (schema: unknown) => JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, `"${BASE}#/components/`));

  /** Problems of a response (empty when it matches the document), for an operation given by method and route path. */
  return function check(method: string, path: string, status: number, body: unknown, contentType: string | undefined): string[] {
    const op = doc.paths?.[path]?.[method.toLowerCase()];
    if (!op) return [`${method} ${path}: not in the document`];
    const response = op.responses?.[String(status)];
    if (!response) return [`${method} ${path}: status ${status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`];
    if (!response.content) return body === null || body === '' ? [] : [`${method} ${path} ${status}: documented without a body, got one`];
    const type = (contentType ?? '').split(';')[0]?.trim() ?? '';
    const media = response.content[type];
    if (!media) return [`${method} ${path} ${status}: content type ${type} is not documented`];
    const key = `${method} ${path} ${status} ${type}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(absolute(media.schema));
      compiled.set(key, validate);
    }
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${key}: ${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  };
}
