import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokerAnswers } from '../support/broker-answers';
import { EXAMPLES_NODE_MAJOR, type ExampleRun, majorOf, otherNode, runExample } from '../support/run-example';

const ROOT = join(__dirname, '..', '..');
/** Generous: the examples take seconds, but a busy machine may slow them down many times. */
const EXAMPLE_TIMEOUT = 240_000;

/** The example exited by itself, with status 0; otherwise fails with what it printed. */
function expectExitedCleanly(run: ExampleRun): void {
  if (run.code !== 0) {
    throw new Error(
      `exited with ${run.signal ?? run.code}\n--- stdout\n${run.stdout.slice(-2000)}\n--- stderr\n${run.stderr.slice(-2000)}`,
    );
  }
}

describe('examples', () => {
  it('the README quick start is examples/quick-start.ts, importing the package by name', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const source = readFileSync(join(ROOT, 'examples', 'quick-start.ts'), 'utf8');
    const shown = readme.split('## Quick start')[1].split('```ts\n')[1].split('```')[0];
    expect(shown).toBe(source.replace("from '../src';", "from 'keyed-dispatch';"));
  });

  it('the README lists every example with its command', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const file of listExamples()) expect(readme).toContain(`](examples/${file})`);
  });

  it('npm run example with a name that is no example lists the examples and exits with status 2', async () => {
    const run = await runExample('quick-stat');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      "no example named 'quick-stat'; the examples are: batches demo failure-policy",
    );
    for (const file of listExamples()) expect(run.stderr).toContain(` ${file.replace(/\.ts$/, '')}`);
  });

  // The examples run on Node 24 or later whatever `node` a machine has first on PATH (a Node 20 has no
  // Promise.withResolvers and runs no TypeScript in a worker thread).
  const other = otherNode();
  (other === null ? it.skip : it)(
    other === null
      ? `runs on Node ${EXAMPLES_NODE_MAJOR} or later with an older node first on PATH (skipped: no older node on this machine)`
      : `runs on Node ${EXAMPLES_NODE_MAJOR} or later with ${other.version} first on PATH`,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'example-node-'));
      try {
        const report = join(dir, 'node-version');
        const run = await runExample('quick-start', {
          pathFirst: other?.bin,
          env: {
            REPORT_NODE_TO: report,
            NODE_OPTIONS: `--require ${join(__dirname, '..', 'support', 'report-node.cjs')}`,
          },
        });
        expectExitedCleanly(run);
        expect(run.stdout).toContain('done: 3 accounts');
        const versions = readFileSync(report, 'utf8').trim().split('\n');
        expect(versions).toHaveLength(1);
        expect(majorOf(versions[0])).toBeGreaterThanOrEqual(EXAMPLES_NODE_MAJOR);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    EXAMPLE_TIMEOUT,
  );

  it(
    'quick-start handles every deposit in order per account and exits by itself',
    async () => {
      const run = await runExample('quick-start');
      expectExitedCleanly(run);
      expect(run.stderr).toBe('');
      expect(run.stdout).toContain('done: 3 accounts');
      // Deposits i = 1..12 go to acc-(i % 3); each account's deposits are applied in send order.
      for (const account of ['acc-0', 'acc-1', 'acc-2']) {
        const amounts = run.stdout
          .split('\n')
          .filter((line) => line.startsWith(`${account} +`))
          .map((line) => Number(line.split('+')[1].split(' ')[0]));
        const sent = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].filter((i) => `acc-${i % 3}` === account);
        expect(amounts).toEqual(sent);
      }
    },
    EXAMPLE_TIMEOUT,
  );

  it(
    'demo (npm start) handles its 200,000 messages in per-key order and exits by itself',
    async () => {
      const run = await runExample('demo');
      expectExitedCleanly(run);
      expect(run.stdout).toMatch(/messages handled +200,000 over 10,000 keys/);
      expect(run.stdout).toMatch(/per-key order violations +0\n/);
    },
    EXAMPLE_TIMEOUT,
  );

  it(
    'transform-before-dispatch sets the malformed record aside and prints the balances',
    async () => {
      const run = await runExample('transform-before-dispatch');
      expectExitedCleanly(run);
      expect(run.stdout).toMatch(/balances: .* · malformed offsets: \[ 5 \]/);
    },
    EXAMPLE_TIMEOUT,
  );

  it(
    'failure-policy retries the conflicting deposits and dead-letters the one that cannot be applied',
    async () => {
      const run = await runExample('failure-policy');
      expectExitedCleanly(run);
      expect(run.stdout).toContain('acc-1: deposit 4 applied on attempt 2');
      expect(run.stdout).toContain(
        'applied 11 of 12; dead-lettered: deposit 7 after 1 attempt(s): deposit 7 has a negative amount',
      );
    },
    EXAMPLE_TIMEOUT,
  );

  it(
    'batches posts each account in bulk, in order, and dead-letters only the entry the store refuses',
    async () => {
      const run = await runExample('batches');
      expectExitedCleanly(run);
      const calls = /posted 999 of 1000 entries in (\d+) store calls/.exec(run.stdout);
      expect(calls).not.toBeNull();
      // Batches of up to 64 entries of one account, and the refused batch taken apart: far below 1,000.
      expect(Number((calls as RegExpExecArray)[1])).toBeLessThan(200);
      expect(run.stdout).toContain('balance of acc-2: 490; per-account order violations: 0');
      expect(run.stdout).toContain('dead-lettered: entry 137 of acc-2: entry 137 has no valid amount');
    },
    EXAMPLE_TIMEOUT,
  );

  it(
    'graceful-shutdown stops on its own SIGTERM and closes the executor',
    async () => {
      const run = await runExample('graceful-shutdown');
      expectExitedCleanly(run);
      expect(run.stdout).toMatch(/stop outcome: (drained|deadline)/);
      expect(run.stdout).toContain('executor closed: true');
      // Every deposit sent is accounted for: acknowledged, failed, cut by the deadline or never delivered.
      const tally = /sent (\d+): (\d+) acknowledged, (\d+) failed, (\d+) cut .*?, (\d+) never delivered/.exec(
        run.stdout,
      );
      expect(tally).not.toBeNull();
      const [sent, ...parts] = (tally as RegExpExecArray).slice(1).map(Number);
      expect(parts.reduce((a, b) => a + b, 0)).toBe(sent);
    },
    EXAMPLE_TIMEOUT,
  );

  it(
    'spool-receiver handles every spooled file and leaves the spool empty',
    async () => {
      const run = await runExample('spool-receiver');
      expectExitedCleanly(run);
      expect(run.stdout).toContain('left in the spool: []');
    },
    EXAMPLE_TIMEOUT,
  );

  it(
    'thread-pricing prices every order on thread lanes, each account in sequence',
    async () => {
      const run = await runExample('thread-pricing');
      expectExitedCleanly(run);
      expect(run.stdout).toMatch(/priced 600 orders for 12 accounts/);
      expect(run.stdout).toContain("every account's orders priced in sequence");
    },
    EXAMPLE_TIMEOUT,
  );

  // The broker examples run where their broker answers (CI and `npm test` start them); they exit by themselves.
  // The Kafka example has its own spec (kafka-example.spec.ts): two runs of it at once would share its group.
  (brokerAnswers(6379) ? it : it.skip)(
    'redis applies the events it published and exits',
    async () => {
      const run = await runExample('redis');
      expectExitedCleanly(run);
      expect(run.stdout).toMatch(/applied \d+ events over 50 accounts, streams example:accounts:0, /);
    },
    EXAMPLE_TIMEOUT,
  );

  (brokerAnswers(4222) ? it : it.skip)(
    'nats handles the readings it published, the failed ones after a redelivery, and exits',
    async () => {
      const run = await runExample('nats');
      expectExitedCleanly(run);
      const summary = run.stdout.match(/handled \d+ readings of 20 devices, (\d+) after a redelivery/);
      expect(summary).not.toBeNull();
      expect(Number(summary![1])).toBeGreaterThanOrEqual(10);
    },
    EXAMPLE_TIMEOUT,
  );
});

/** The runnable examples: every `.ts` file in examples/ (an `.mts` file there is a thread handler module). */
function listExamples(): string[] {
  return readdirSync(join(ROOT, 'examples')).filter((file) => file.endsWith('.ts'));
}
