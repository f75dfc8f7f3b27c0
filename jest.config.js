// Jest: ts-jest only transpiles (type checking is `tsc --noEmit`); one DynamoDB Local serves the whole run.

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // tsconfig.json has isolatedModules, so ts-jest transpiles file by file without a type checker.
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    // @middy/core is ESM-only; ts-jest rewrites it to CommonJS for Jest's module registry.
    '^.+\\.js$': [
      'ts-jest',
      { diagnostics: false, tsconfig: { allowJs: true, isolatedModules: true, module: 'commonjs', target: 'ES2022' } },
    ],
  },
  transformIgnorePatterns: ['node_modules/(?!(@middy)/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Fails any test file in which a Scan or a Select=COUNT query ran through the store's clients.
  setupFilesAfterEnv: ['<rootDir>/test/support/no-scan.ts'],
  // The summary reporter ends the run with a plain "N passed, N failed" line for CI.
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  testTimeout: 30_000,
  maxWorkers: 2,
};
