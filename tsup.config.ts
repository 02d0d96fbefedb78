import { defineConfig } from 'tsup';
import { clientBundlePlugin } from './src/dashboard/bundle-client';

export default defineConfig({
  // The thread-lane worker is its own entry: threads load dist/thread-worker.js, found next to index.
  // Transport adapters, the exporters and the dashboard are subpath entries (`keyed-dispatch/redis`,
  // ...); their clients are optional peers, never bundled.
  entry: {
    index: 'src/index.ts',
    'thread-worker': 'src/threads/worker.ts',
    'redis/index': 'src/redis/index.ts',
    'nats/index': 'src/nats/index.ts',
    'otel/index': 'src/otel/index.ts',
    'kafka/index': 'src/kafka/index.ts',
    'prometheus/index': 'src/prometheus/index.ts',
    'dashboard/index': 'src/dashboard/index.ts',
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
    'prom-client',
  ],
  // The dashboard's page script, bundled for the browser, goes into the dashboard entry as a string.
  esbuildPlugins: [clientBundlePlugin()],
});
