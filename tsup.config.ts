import { defineConfig } from 'tsup';
import { clientBundlePlugin } from './src/dashboard/bundle-client';
import { builtWorkerPlugin } from './src/threads/built-worker-plugin';

const peers = [
  'rxjs',
  '@opentelemetry/api',
  'ioredis',
  '@nats-io/transport-node',
  '@nats-io/jetstream',
  'kafkajs',
  'prom-client',
  '@platformatic/kafka',
];

export default defineConfig({
  // Transport adapters, the exporters and the dashboard are subpath entries (`keyed-dispatch/redis`,
  // ...); their clients are optional peers, never bundled. Code splitting in both formats gives every
  // entry the same copy of the core (one per format), so its classes and brands are shared.
  entry: {
    index: 'src/index.ts',
    'redis/index': 'src/redis/index.ts',
    'nats/index': 'src/nats/index.ts',
    'otel/index': 'src/otel/index.ts',
    'kafka/index': 'src/kafka/index.ts',
    'prometheus/index': 'src/prometheus/index.ts',
    'dashboard/index': 'src/dashboard/index.ts',
  },
  // Gives the ESM build a __dirname, by which the worker script is found (the chunks sit next to it).
  shims: true,
  format: ['cjs', 'esm'],
  splitting: true,
  dts: true,
  // No source maps: they would point into sources the package does not ship.
  sourcemap: false,
  clean: true,
  // The floor Node. Tree-shaking makes the CommonJS build go through rollup, which keeps `?.` as it is;
  // without it the CommonJS chunks are converted by a transform that lowers `?.` into helper closures.
  target: 'node22',
  treeshake: true,
  external: peers,
  // The dashboard's page script goes into the dashboard entry as a string; the thread lanes look for
  // the worker script only next to them (see built-worker-plugin.ts).
  esbuildPlugins: [clientBundlePlugin(), builtWorkerPlugin()],
  // The thread-lane worker: one CommonJS script that threads load by path, from either format.
  onSuccess: 'node scripts/build-thread-worker.js dist/thread-worker.js',
});
