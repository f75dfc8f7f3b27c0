// Issue 23 item 3: the project's licence and its production dependencies.
// - package.json names its licence with an SPDX id (a licence checker reported UNLICENSED), the lockfile's
//   root says the same, and LICENSE holds that licence's text.
// - Every production dependency is imported by code that runs in Lambda (functions/, shared/ and the
//   credentials shim bundled into every function): an unused one (Powertools Tracer was) only pulls
//   packages into every install and every audit. Versions are exact pins.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  license?: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { license?: string; dependencies?: Record<string, string> }>;
};

/** What each accepted SPDX id's LICENSE text must contain. */
const LICENCE_TEXTS: Record<string, RegExp[]> = {
  'Apache-2.0': [
    /^\s*Apache License\s+Version 2\.0, January 2004/,
    /TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION/,
    /Grant of Patent License/,
  ],
  MIT: [/^MIT License/, /Permission is hereby granted, free of charge/],
};

/** Code bundled into the Lambda functions (infra/cloud/function.ts aliases the credentials shim in). */
const PRODUCTION_SOURCES = ['functions', 'shared', 'infra/cloud/lambda-credentials.ts'];

function sourceFiles(path: string): string[] {
  const full = join(root, path);
  if (statSync(full).isFile()) return [full];
  return readdirSync(full)
    .flatMap((name) => (name === 'node_modules' ? [] : sourceFiles(join(path, name))))
    .filter((f) => /\.(ts|tsx|js)$/.test(f));
}

/** Package names imported (static, dynamic, type-only or required) by the given files. */
function importedPackages(files: string[]): Set<string> {
  const names = new Set<string>();
  const specifier = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"]([^'".][^'"]*)['"]/g;
  for (const file of files) {
    for (const m of readFileSync(file, 'utf8').matchAll(specifier)) {
      const spec = m[1] as string;
      if (spec.startsWith('node:')) continue;
      const parts = spec.split('/');
      names.add(spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string));
    }
  }
  return names;
}

describe('licence', () => {
  it('package.json names an SPDX licence (not UNLICENSED), the lockfile agrees, and LICENSE holds its text', () => {
    expect(Object.keys(LICENCE_TEXTS)).toContain(pkg.license);
    expect(lock.packages['']?.license).toBe(pkg.license);
    const text = readFileSync(join(root, 'LICENSE'), 'utf8');
    for (const pattern of LICENCE_TEXTS[pkg.license as string] ?? []) expect(text).toMatch(pattern);
  });
});

describe('production dependencies', () => {
  const imported = importedPackages(PRODUCTION_SOURCES.flatMap(sourceFiles));

  it('the import scan sees the production code (it finds the dependencies known to be used)', () => {
    for (const name of ['valibot', '@middy/core', '@aws-sdk/lib-dynamodb', '@aws-lambda-powertools/logger'])
      expect(imported).toContain(name);
  });

  it('every production dependency is imported by code that runs in Lambda; Powertools Tracer is gone', () => {
    const unused = Object.keys(pkg.dependencies).filter((name) => !imported.has(name));
    expect(unused).toEqual([]);
    expect(pkg.dependencies).not.toHaveProperty('@aws-lambda-powertools/tracer');
    expect(lock.packages['']?.dependencies ?? {}).not.toHaveProperty('@aws-lambda-powertools/tracer');
    expect(lock.packages).not.toHaveProperty(['node_modules/@aws-lambda-powertools/tracer']);
  });

  it('pins every dependency to an exact version, and the lockfile root lists the same production dependencies', () => {
    for (const [name, version] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies }))
      expect({ name, version }).toEqual({ name, version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    expect(lock.packages['']?.dependencies).toEqual(pkg.dependencies);
  });
});
