// Builds the thread-lane worker from the sources (Node cannot run TypeScript in a worker): into .build/
// for the specs, benchmarks and examples run from the sources, into dist/ for the package
// (`node scripts/build-thread-worker.js dist/thread-worker.js`, run by the build).
const { mkdirSync, renameSync, writeFileSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');
const esbuild = require('esbuild');

const root = join(__dirname, '..');
const DEFAULT_OUTFILE = join(root, '.build/thread-worker.js');

const settings = {
  entryPoints: [join(root, 'src/threads/worker.ts')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['rxjs'],
  logLevel: 'warning',
  write: false,
};

/** Writes the built script under a temporary name, then renames it: a thread never loads half a file. */
function writeAtomically(outfile, result) {
  mkdirSync(dirname(outfile), { recursive: true });
  const partial = `${outfile}.${process.pid}.partial`;
  writeFileSync(partial, result.outputFiles[0].contents);
  renameSync(partial, outfile);
  return outfile;
}

function buildThreadWorker(outfile = DEFAULT_OUTFILE) {
  return esbuild.build(settings).then((result) => writeAtomically(outfile, result));
}

function buildThreadWorkerSync(outfile = DEFAULT_OUTFILE) {
  return writeAtomically(outfile, esbuild.buildSync(settings));
}

// Called with no argument by the benchmarks: builds into .build/.
module.exports = () => buildThreadWorker();
module.exports.buildThreadWorkerSync = buildThreadWorkerSync;

if (require.main === module) {
  const outfile = process.argv[2] === undefined ? DEFAULT_OUTFILE : resolve(process.argv[2]);
  buildThreadWorker(outfile).catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
