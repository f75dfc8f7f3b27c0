// Validating live responses against the OpenAPI document: ajv (JSON Schema 2020-12, the 3.1 dialect)
// with the document's components registered once; each operation's response schema is compiled on use.
// And the document itself against the official 3.1 schema, with @seriousme/openapi-schema-validator in
// its own Node process (it is an ES module). And the document's examples against their schemas, and
// the document through Spectral's OpenAPI ruleset.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Spectral } from '@stoplight/spectral-core';
import { oas } from '@stoplight/spectral-rulesets';

type Json = Record<string, any>;
const BASE = 'https://refloop.test/openapi.json';

export function validateDocument(doc: unknown): { valid: boolean; errors: unknown; version: string } {
  const out = execFileSync(process.execPath, [join(__dirname, 'validate-openapi.mjs')], {
    input: JSON.stringify(doc),
    encoding: 'utf8',
    timeout: 60_000,
  });
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
    return validate(body)
      ? []
      : (validate.errors ?? []).map((e) => `${key}: ${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  };
}

/** Every example of the document (media types of requests, responses and webhooks; parameters), where it is. */
export function documentExamples(doc: Json): { where: string; schema: unknown; example: unknown }[] {
  const out: { where: string; schema: unknown; example: unknown }[] = [];
  const operations = [
    ...Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op as Json] as const),
    ),
    ...Object.entries(doc.webhooks ?? {}).map(([name, item]) => [`webhook ${name}`, (item as Json).post as Json] as const),
  ];
  for (const [label, op] of operations) {
    for (const p of (op.parameters ?? []) as Json[])
      if ('example' in p) out.push({ where: `${label} parameter ${p.name}`, schema: p.schema, example: p.example });
    for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
      out.push({ where: `${label} request ${type}`, schema: (media as Json).schema, example: (media as Json).example });
    }
    for (const [status, response] of Object.entries((op.responses ?? {}) as Json)) {
      for (const [type, media] of Object.entries(((response as Json).content ?? {}) as Json)) {
        out.push({ where: `${label} ${status} ${type}`, schema: (media as Json).schema, example: (media as Json).example });
      }
    }
  }
  return out;
}

/** Problems of the document's examples (missing, or not valid against their schema), as text. */
export function exampleProblems(doc: Json): string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: BASE, components: doc.components });
  const absolute = (schema: unknown) => JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, `"${BASE}#/components/`));
  return documentExamples(doc).flatMap(({ where, schema, example }) => {
    if (example === undefined) return [`${where}: no example`];
    const validate = ajv.compile(absolute(schema));
    return validate(example)
      ? []
      : (validate.errors ?? []).map((e) => `${where}: ${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  });
}

export interface LintResult {
  code: string;
  severity: 'error' | 'warning' | 'info' | 'hint';
  path: string;
  message: string;
}

/** Spectral with its OpenAPI ruleset (`spectral:oas`, the recommended rules), over the document as JSON. */
export async function lintDocument(doc: unknown): Promise<LintResult[]> {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas as never, 'recommended']] });
  const results = await spectral.run(JSON.stringify(doc, null, 2));
  const severity = ['error', 'warning', 'info', 'hint'] as const;
  return results.map((r) => ({
    code: String(r.code),
    severity: severity[r.severity] ?? 'error',
    path: r.path.join('.'),
    message: r.message,
  }));
}
