// The two promises under random faults, on both lane kinds and both operators. Each run dispatches a
// random script of messages whose handlers complete, throw, reject, error as an Observable (some once,
// some every time) or, on thread lanes, exit their thread; some key selectors, `onSettled`, `retryable`,
// `deadLetter` and `random` throw or reject; and the run stops at a random time (an unsubscribe, a
// graceful close of the receiver, a runtime's graceful or forced stop) or runs to its end, beside a
// dispatcher of good messages on the same executor. After each run it checks:
// - nothing acknowledged unseen: settled `done` only after a run of its handler completed, `dead-lettered`
//   only after its dead letter completed, at most one settlement per message, none also left for redelivery;
// - a bad message fails only itself: no message that never failed is dead-lettered or failed, the
//   dispatcher beside it handles all of its messages, an output errors only when something failed;
// - no key's order regresses: no later message completes before an earlier one of its key that is
//   acknowledged was handled;
// - the process stays alive: no unhandled rejection nor uncaught exception, the output ends (or the stop
//   resolves) within a bound, nothing stays in flight, and a graceful stop loses nothing it took.
// The runs happen in a child process (spec/fixtures/faults-property-run.ts), where the process-level
// events are the real ones. Seeds are fixed; FAULTS_PROPERTY_SEED replays another one.
import { execFile } from 'node:child_process';
import { join } from 'node:path';

const RUNNER = join(__dirname, '..', 'fixtures', 'faults-property-run.ts');
const seed = Number(process.env.FAULTS_PROPERTY_SEED ?? 20261207);

/** Runs the property in a child process; resolves with what it printed. */
function runProperty(lanes: string, operator: string, runs: number): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', RUNNER, lanes, operator, String(runs), String(seed)],
      { timeout: 50_000, maxBuffer: 1 << 22 },
      (error, stdout, stderr) => {
        const killed = error?.killed ? `the run was killed after 50 s (signal ${error.signal})\n` : '';
        resolve(`${killed}${stdout}${stderr}`);
      },
    );
  });
}

describe.each([
  ['event-loop lanes', 'event-loop', 30],
  ['thread lanes', 'threads', 4],
])('faults at random on %s', (_name, lanes, runs) => {
  it.each(['keyedDispatch', 'keyedBatchDispatch'])(
    '%s acknowledges nothing unseen, fails only bad messages, keeps each key in order and keeps the process alive',
    async (operator) => {
      expect(await runProperty(lanes as string, operator, runs as number)).toMatch(/^PROPERTY OK/);
    },
    60_000,
  );
});
