/**
 * Where the worker script is when the library runs from its sources (specs, examples, benchmarks): built
 * from worker.ts with esbuild, a development dependency, once per process. The package build replaces
 * this module with one that returns null (see built-worker-plugin.ts): the package ships the script.
 */
let built: string | undefined;

export function workerFromSources(): string | null {
  built ??= (require('../../scripts/build-thread-worker.js') as BuildScript).buildThreadWorkerSync();
  return built;
}

interface BuildScript {
  buildThreadWorkerSync(): string;
}
