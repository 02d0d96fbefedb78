import { defineConfig } from 'tsup';

export default defineConfig({
  // The thread-lane worker is its own entry: threads load dist/thread-worker.js, found next to index.
  entry: {
    index: 'src/index.ts',
    'thread-worker': 'src/threads/worker.ts',
    // Transport adapters are subpath exports; their clients are optional peer dependencies.
    'kafka/index': 'src/kafka/index.ts',
  },
  // Gives the ESM build a __dirname, by which the worker script is found.
  shims: true,
  format: ['cjs', 'esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  external: ['rxjs', 'kafkajs'],
});
