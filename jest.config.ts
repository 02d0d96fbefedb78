import { availableParallelism } from 'node:os';
import type { Config } from 'jest';

/**
 * Specs that share the brokers (some stop and start them, or time a broker's answers) or a browser,
 * and the examples' specs (most run against a broker): they run one at a time, after the others.
 */
const SERIAL =
  '/spec/((redis|nats|kafka|examples)/.*|otel/tracing-(kafka|streams)|health/kafka-readiness|dashboard/browser)\\.spec\\.ts$';
/** Every other spec: a regex (not an ignore pattern, which `--testPathIgnorePatterns` would replace). */
const LOCAL = `^(?!.*${SERIAL}).*\\.spec\\.ts$`;

// Specs import the package by name, exactly as users do; the name maps to the sources.
const project: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
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
};

const config: Config = {
  // The specs that need no broker run side by side, on every core but one (two at least).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  testTimeout: 30_000,
  projects: [
    { ...project, displayName: 'local', testRegex: LOCAL },
    {
      ...project,
      displayName: 'serial',
      testRegex: SERIAL,
      runner: '<rootDir>/scripts/jest-serial-runner.js',
    },
  ],
};

export default config;
