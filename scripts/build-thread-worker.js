// Builds the thread-lane worker from the sources into .build/ (Node cannot run TypeScript in a worker).
// Used by the Jest global setup and the benchmarks; the published build gets it from tsup (dist/).
const { join } = require('node:path');
const esbuild = require('esbuild');

const root = join(__dirname, '..');

function buildThreadWorker() {
  return esbuild.build({
    entryPoints: [join(root, 'src/threads/worker.ts')],
    outfile: join(root, '.build/thread-worker.js'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['rxjs'],
    logLevel: 'warning',
  });
}

module.exports = buildThreadWorker;

if (require.main === module) {
  buildThreadWorker().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
