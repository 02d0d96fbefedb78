import { execFile } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * Run in a child process, because a limit too small for V8 to start a thread's isolate kills the whole
 * process (out of memory while the isolate deserializes, a stack overflow while Node boots the thread),
 * and a spec must outlive that to report it. The child builds a `ThreadExecutor` with the limits in
 * `LIMITS` and, if that is accepted, runs two messages through a thread handler; it prints one JSON line.
 */
const CHILD = `
const { fromIterable, keyedDispatch, ThreadExecutor, threadHandler } = require('./src/index.ts');
const { lastValueFrom, toArray } = require('rxjs');

async function main() {
  let executor;
  try {
    executor = new ThreadExecutor({ workers: 1, resourceLimits: JSON.parse(process.env.LIMITS) });
  } catch (err) {
    return { refused: { name: err.name, message: err.message } };
  }
  try {
    const values = await lastValueFrom(
      fromIterable([{ key: 'a', n: 1 }, { key: 'b', n: 2 }]).pipe(
        keyedDispatch({ executor, key: (m) => m.key, handle: threadHandler(process.env.FIXTURES, 'echo') }),
        toArray(),
      ),
    );
    return { ran: values.map((v) => v.n).sort() };
  } catch (err) {
    return { failed: String(err) };
  } finally {
    await executor.close();
  }
}

main().then((result) => console.log(JSON.stringify(result)));
`;

interface ChildRun {
  readonly code: number | string | null;
  readonly signal: string | null;
  readonly result: unknown;
  readonly stderr: string;
}

/** Runs CHILD on this Node with `limits`; a child still running after 60 s is killed (and reported so). */
function inChild(limits: Record<string, number>): Promise<ChildRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--require', 'tsx/cjs', '-e', CHILD],
      {
        cwd: ROOT,
        timeout: 60_000,
        env: {
          ...process.env,
          LIMITS: JSON.stringify(limits),
          FIXTURES: join(ROOT, 'spec', 'fixtures', 'lane-handlers.js'),
        },
      },
      (err, stdout, stderr) => {
        const line = stdout.trim().split('\n').pop() ?? '';
        resolve({
          code: err === null ? 0 : (err.code ?? null),
          signal: err?.signal ?? null,
          result: line.startsWith('{') ? JSON.parse(line) : line,
          stderr: stderr.slice(-2000),
        });
      },
    );
  });
}

describe(`ThreadExecutor resourceLimits on Node ${process.version}`, () => {
  it.each([
    [
      'the old generation too small for V8 to deserialize the isolate',
      { maxOldGenerationSizeMb: 1, maxYoungGenerationSizeMb: 1, codeRangeSizeMb: 1 },
      'ThreadExecutor: expected `resourceLimits.maxOldGenerationSizeMb` to be a number >= 16 (the least a thread safely starts with), got 1 (number)',
    ],
    [
      'a code range too small for the isolate',
      { codeRangeSizeMb: 1.5 },
      'ThreadExecutor: expected `resourceLimits.codeRangeSizeMb` to be a number >= 8 (the least a thread safely starts with), got 1.5 (number)',
    ],
    [
      'a stack too small for Node to boot the thread',
      { stackSizeMb: 0.2 },
      'ThreadExecutor: expected `resourceLimits.stackSizeMb` to be a number >= 1 (the least a thread safely starts with), got 0.2 (number)',
    ],
  ])(
    'refuses %s at construction with a TypeError naming the option, the value, its type and the floor, and the process lives on',
    async (_what, limits, message) => {
      const run = await inChild(limits);
      expect({ code: run.code, signal: run.signal, result: run.result }).toEqual({
        code: 0,
        signal: null,
        result: { refused: { name: 'TypeError', message } },
      });
    },
    70_000,
  );

  it('boots a thread and runs its handler with every limit at its floor (and the young generation tiny)', async () => {
    const run = await inChild({
      maxOldGenerationSizeMb: 16,
      maxYoungGenerationSizeMb: 0.25,
      codeRangeSizeMb: 8,
      stackSizeMb: 1,
    });
    expect({ code: run.code, signal: run.signal, result: run.result, stderr: run.stderr }).toEqual({
      code: 0,
      signal: null,
      result: { ran: [1, 2] },
      stderr: '',
    });
  }, 70_000);
});
