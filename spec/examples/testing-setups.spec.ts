import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { linkModules } from '../package/link-modules';
import { consumerProject, ROOT } from '../package/packed';

/**
 * The testing guide's set-ups, each a folder of examples/testing/ the guide links: its package.json and
 * config, and its marble test (Jest's is testing-with-marbles.spec.ts, the guide's first example, as it is). Each runs with
 * its own `npm test` in a project that holds the packed package as a user installs it, rxjs beside it, and
 * exactly the packages its package.json names, taken from this repository's node_modules; Node is a
 * supported one (22 or later, see scripts/node.sh).
 */
const SETUPS = [
  { setup: "Node's test runner with tsx", folder: 'node-test', tests: {}, passed: /pass 1\n/ },
  { setup: 'Vitest', folder: 'vitest', tests: {}, passed: /Tests +1 passed/ },
  {
    setup: 'Jest with ts-jest',
    folder: 'jest',
    tests: { 'marbles.spec.ts': join(ROOT, 'spec', 'examples', 'testing-with-marbles.spec.ts') },
    passed: /Tests: +1 passed/,
  },
];

/** Generous: a run takes seconds, but a busy machine may slow it down many times. */
const RUN_TIMEOUT = 180_000;

const GUIDE = readFileSync(join(ROOT, 'docs', 'testing.md'), 'utf8');

function setupFolder(folder: string): string {
  return join(ROOT, 'examples', 'testing', folder);
}

/** What `npm test` printed in `dir`, with its exit status; a run still going after RUN_TIMEOUT is killed. */
function npmTest(dir: string): Promise<{ code: number | null; output: string }> {
  const { JEST_WORKER_ID: _, FORCE_COLOR: __, ...env } = process.env;
  const child = spawn(join(ROOT, 'scripts', 'node.sh'), ['exec', 'npm', 'test'], {
    cwd: dir,
    detached: true,
    env: { ...env, NO_COLOR: '1', CI: '1' },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  // npm, the shell and the runner are one process group, so a hanging run is killed whole.
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), RUN_TIMEOUT);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('the testing guide', () => {
  // The guide links each set-up's folder rather than copying its files, so nothing there can drift.
  it.each(SETUPS)("links $setup's folder, whose files are run below", ({ folder }) => {
    expect(GUIDE).toContain(`](../examples/testing/${folder}/)`);
    expect(readdirSync(setupFolder(folder)).length).toBeGreaterThan(0);
  });
});

describe("the testing guide's set-ups, run against the packed package", () => {
  let project: ReturnType<typeof consumerProject>;
  beforeAll(() => {
    project = consumerProject(['rxjs']);
  }, 240_000);
  afterAll(() => project?.remove());

  it.each(SETUPS)(
    '$setup runs the marble test of a keyedDispatch pipeline and it passes',
    async ({ folder, tests, passed }) => {
      const dir = join(project.dir, folder);
      mkdirSync(dir);
      for (const file of readdirSync(setupFolder(folder)))
        copyFileSync(join(setupFolder(folder), file), join(dir, file));
      for (const [file, source] of Object.entries(tests)) copyFileSync(source, join(dir, file));
      const { dependencies, devDependencies } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      // The package itself comes from the tarball, installed in the project.
      const named = Object.keys({ ...dependencies, ...devDependencies }).filter(
        (name) => name !== 'keyed-dispatch',
      );
      linkModules(dir, named);
      const run = await npmTest(dir);
      if (run.code !== 0) throw new Error(`npm test exited with ${run.code}\n${run.output.slice(-4000)}`);
      expect(run.output).toMatch(passed);
    },
    RUN_TIMEOUT + 30_000,
  );
});
