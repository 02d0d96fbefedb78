import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundle, runChild, type Scenario } from '../lib';
import { HANDLERS } from '../threads-common';

const buildThreadWorker: () => Promise<unknown> = require('../../scripts/build-thread-worker.js');

const scenario: Scenario = {
  title: 'thread lanes: CPU-bound scaling and the cost of the thread boundary',
  async run() {
    // Measured as the package ships: the library bundled (as tsup builds dist/), with the worker script
    // next to the bundle (as dist/thread-worker.js is), in a fresh process. The handler module is
    // passed by path: the bundle lives elsewhere.
    await buildThreadWorker();
    const child = bundle('scenarios/threads-child.ts');
    copyFileSync(
      join(__dirname, '..', '..', '.build', 'thread-worker.js'),
      join(child, '..', 'thread-worker.js'),
    );
    process.env.THREADS_BENCH_HANDLERS = HANDLERS;
    return runChild<{ markdown: string }>(child, []).markdown;
  },
};

export default scenario;
