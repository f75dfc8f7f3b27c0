// Jest: ts-jest only transpiles (type checking is `tsc --noEmit`). Two projects:
// - unit: pure logic, no DynamoDB Local, no emulators (`npx jest --selectProjects unit` takes seconds);
// - integration: integration, e2e and CDK suites; one DynamoDB Local serves them all (global setup).

const transform = {
  // tsconfig.json has isolatedModules, so ts-jest transpiles file by file without a type checker.
  '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
  // @middy/core is ESM-only; ts-jest rewrites it to CommonJS for Jest's module registry.
  '^.+\\.js$': [
    'ts-jest',
    { diagnostics: false, tsconfig: { allowJs: true, isolatedModules: true, module: 'commonjs', target: 'ES2022' } },
  ],
};

const common = {
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns: ['node_modules/(?!(@middy)/)'],
  // Fails any test file in which a Scan or a Select=COUNT query ran through the store's clients.
  setupFilesAfterEnv: ['<rootDir>/test/support/no-scan.ts'],
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
  testTimeout: 30_000,
  maxWorkers: 2,
};
