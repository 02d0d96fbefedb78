import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The built worker script. Node cannot run TypeScript in a worker, so it is always a built file: next to
 * this module in the published package (dist/thread-worker.js), or in .build/ when the library runs from
 * its sources (tests and benchmarks build it with scripts/build-thread-worker.js).
 */
export function threadWorkerEntry(): string {
  const candidates = [
    join(__dirname, 'thread-worker.js'),
    join(__dirname, '..', '..', '.build', 'thread-worker.js'),
  ];
  for (const file of candidates) if (existsSync(file)) return file;
  throw new Error(
    `ThreadExecutor: the worker script is missing (looked for ${candidates.join(', ')}); ` +
      'build it with `npm run build` or `node scripts/build-thread-worker.js`',
  );
}
