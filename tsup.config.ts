import { defineConfig } from 'tsup';

export default defineConfig({
  // The thread-lane worker is its own entry: threads load dist/thread-worker.js, found next to index.
  // Transport adapters and the OpenTelemetry adapter are subpath entries (`keyed-dispatch/redis`, ...);
  // their clients are optional peers, never bundled.
  entry: {
    index: 'src/index.ts',
    'thread-worker': 'src/threads/worker.ts',
    'redis/index': 'src/redis/index.ts',
    'nats/index': 'src/nats/index.ts',
    'otel/index': 'src/otel/index.ts',
    'kafka/index': 'src/kafka/index.ts',
  },
  // Gives the ESM build a __dirname, by which the worker script is found.
  shims: true,
  format: ['cjs', 'esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  external: [
    'rxjs',
    '@opentelemetry/api',
    'ioredis',
    '@nats-io/transport-node',
    '@nats-io/jetstream',
    'kafkajs',
  ],
});
