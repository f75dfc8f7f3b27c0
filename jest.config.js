// Jest: two projects:
// - unit: pure logic, no DynamoDB Local, no emulators (`npx jest --selectProjects unit` takes seconds);
// - integration: integration, e2e and CDK suites; one DynamoDB Local serves them all (global setup).

// @swc/jest only transpiles (type checking is `tsc --noEmit`), file by file, in native code: a cold run
// (CI's fresh clone has no transform cache) spends seconds, not a minute, turning TypeScript into CommonJS.
const swc = (syntax) => [
  '@swc/jest',
  { jsc: { parser: { syntax }, target: 'es2022' }, module: { type: 'commonjs' }, sourceMaps: 'inline' },
];
// swc's CommonJS exports are getters, which jest.spyOn cannot replace: the two modules whose exports a test
// spies on (test/integration/dashboard-auth.test.ts: transact; secrets-key.test.ts: countMetric) go through
// ts-jest, whose exports are plain properties. A spy on another module fails loudly ("Cannot redefine
// property"): add its path here.
const spiedModules = '/shared/(store/ops|metrics)\\.ts$';
const transform = {
  [spiedModules]: ['ts-jest', { diagnostics: false }],
  '^.+\\.ts$': swc('typescript'),
  // @middy/core is ESM-only; it is rewritten to CommonJS for Jest's module registry.
  '^.+\\.js$': swc('ecmascript'),
};

const common = {
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns: ['node_modules/(?!(@middy)/)'],
  // file-cpu: with REFLOOP_TEST_CPU_LOG=<file>, each file's CPU is logged (docs/testing.md); no-scan fails any
  // test file in which a Scan or a Select=COUNT query ran through the store's clients.
  setupFilesAfterEnv: ['<rootDir>/test/support/file-cpu.ts', '<rootDir>/test/support/no-scan.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit'],
      testMatch: ['**/*.test.ts'],
      // The environment every suite shares (log level, limits), without DynamoDB Local.
      globalSetup: '<rootDir>/test/support/unit-setup.ts',
    },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration', '<rootDir>/test/e2e', '<rootDir>/test/infra'],
      testMatch: ['**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
  // The summary reporter ends the run with a plain "N passed, N failed" line for CI.
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  // The slowest files first, from durations committed for a fresh clone (test/support/sequencer.js).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  testTimeout: 30_000,
  // Three workers on CI's two cores: the suites wait on DynamoDB Local, the emulators, Chromium and the local
  // queues more than they compute (a two-worker run used 1.4 cores), so a third keeps the cores busy.
  maxWorkers: 3,
};
