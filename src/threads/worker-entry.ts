import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { workerFromSources } from './worker-from-sources';

/**
 * The built worker script (Node cannot run TypeScript in a worker): thread-worker.js next to this module
 * in the package; built on first use when the library runs from its sources.
 */
export function threadWorkerEntry(): string {
  const built = join(__dirname, 'thread-worker.js');
  if (existsSync(built)) return built;
  const fromSources = workerFromSources();
  if (fromSources !== null) return fromSources;
  throw new Error(
    `ThreadExecutor: the worker script ${built} is missing from the installed package; reinstall keyed-dispatch`,
  );
}
