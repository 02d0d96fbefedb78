import type { Config } from 'jest';

// Specs import the package by name, exactly as users do; the name maps to the sources.
const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    // File by file (the tsconfig's `isolatedModules`): `npm run typecheck` checks the types of specs and sources once.
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: { warnOnly: false } }],
    // ES-module-only packages (Node loads them with require(); Jest needs them as CommonJS).
    '/node_modules/@platformatic/.+\\.js$': '<rootDir>/scripts/jest-esm-to-cjs.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!@platformatic/)'],
  moduleNameMapper: {
    '^keyed-dispatch$': '<rootDir>/src/index.ts',
    '^keyed-dispatch/(.*)$': '<rootDir>/src/$1/index.ts',
  },
  testTimeout: 30_000,
};

export default config;
