import type { Plugin } from 'esbuild';

/**
 * An esbuild plugin for the package build: `worker-from-sources.ts` becomes a module that finds nothing,
 * so the package looks for its worker script only next to itself (the build puts it there).
 */
export function builtWorkerPlugin(): Plugin {
  return {
    name: 'keyed-dispatch-built-worker',
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]threads[\\/]worker-from-sources\.ts$/ }, () => ({
        contents: 'export function workerFromSources() { return null; }',
        loader: 'ts',
      }));
    },
  };
}
