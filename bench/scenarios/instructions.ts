import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { bundleInto, treeAt } from '../harness';
import type { Report, Scenario } from '../report';
import { table } from '../stats';
import { BASELINE } from './profile';

/**
 * Instructions per message, counted rather than timed: the core cell's `async (m) => m` under Valgrind
 * (callgrind) for keyedDispatch before and after the short path, the promise chain and the hand loop.
 * Node runs `--single-threaded` (no compiler or collector threads beside the main one), so a count
 * repeats from run to run (the report says how closely): a change too small to show through a shared
 * machine's timing noise shows here. A count is not a time (a cache miss costs many instructions' worth), so this says
 * what a design executes, and the core scenario what it costs.
 */

const OUT = join(__dirname, '..', '..', '.bench-out', 'instructions');
const MESSAGES = 300_000;
const KEYS = [1_000, 100_000];
/** Unmeasured runs before the counted ones (their code compiled and optimized as in the core cell). */
const WARMUPS = 5;
/** Counted runs: the count with them minus the count without them is theirs alone. */
const RUNS = 3;

interface Contender {
  label: string;
  /** The core cell's contender. */
  id: string;
  /** The revision whose sources it is bundled from (null: this tree). */
  revision: string | null;
}

const CONTENDERS: Record<string, Contender> = {
  before: { label: `keyedDispatch before the short path (\`${BASELINE}\`)`, id: 'ours', revision: BASELINE },
  ours: { label: 'keyedDispatch, window 256', id: 'ours', revision: null },
  chain: { label: 'per-key promise chain, 256 unfinished', id: 'chain', revision: null },
  hand: { label: 'hand-written loop (the floor)', id: 'hand', revision: null },
};

/** A program that runs one contender of a tree's core cell `WARMUPS` + argv[3] times. */
function bundleOf(name: string, { id, revision }: Contender): string {
  const outfile = join(OUT, `${name}.js`);
  const contents = `import { cell } from './bench/scenarios/core';
const [keys, runs] = process.argv.slice(2).map(Number);
const run = cell({ shape: 'async', keys, messages: ${MESSAGES}, contenders: ['${id}'], warmups: 0, rounds: 1 })['${id}'];
(async () => { for (let i = 0; i < ${WARMUPS} + runs; i++) await run(); })();`;
  const tree = treeAt(revision);
  bundleInto(outfile, {
    stdin: { contents, resolveDir: tree, loader: 'ts' },
    nodePaths: [join(treeAt(null), 'node_modules')],
  });
  return outfile;
}

/**
 * The instructions a process ran, as callgrind counts them. Besides `--single-threaded`, V8 is given a
 * fixed random seed (hash seeds, `Math.random`) and a garbage collector that sizes its heap without
 * reading the clock, so the count does not depend on how slowly Valgrind runs.
 */
function counted(bundle: string, keys: number, runs: number): Promise<number> {
  const node = [process.execPath, '--single-threaded', '--random-seed=1', '--predictable-gc-schedule'];
  const args = [
    '--tool=callgrind',
    '--callgrind-out-file=/dev/null',
    ...node,
    bundle,
    String(keys),
    String(runs),
  ];
  return new Promise((resolve, reject) => {
    execFile('valgrind', args, { maxBuffer: 1 << 26, timeout: 20 * 60_000 }, (err, _out, log) => {
      const collected = /Collected : (\d+)/.exec(log);
      if (err || !collected) reject(err ?? new Error(`callgrind printed no count:\n${log}`));
      else resolve(Number(collected[1]));
    });
  });
}

/** Instructions a warm message executes: a process with `RUNS` counted runs, minus one with none. */
async function perMessageOf(bundle: string, keys: number): Promise<number> {
  // The two at once, one on each core: a count does not depend on what else runs.
  const [without, withRuns] = await Promise.all([counted(bundle, keys, 0), counted(bundle, keys, RUNS)]);
  return (withRuns - without) / (RUNS * MESSAGES);
}

async function run(): Promise<Report> {
  const version = execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim();
  const lanes = availableParallelism();
  mkdirSync(OUT, { recursive: true });
  const bundles = Object.fromEntries(
    Object.entries(CONTENDERS).map(([name, c]) => [name, bundleOf(name, c)]),
  );
  const jobs = KEYS.flatMap((keys) => Object.keys(CONTENDERS).map((name) => ({ name, keys })));
  const perMessage: Record<string, number> = {};
  for (const { name, keys } of jobs) {
    console.error(`instructions: ${name}, ${keys} keys`);
    perMessage[`${name}-${keys}`] = await perMessageOf(bundles[name], keys);
  }
  // The first count once more: how far apart two counts of the same program are.
  const again = await perMessageOf(bundles[jobs[0].name], jobs[0].keys);
  const first = perMessage[`${jobs[0].name}-${jobs[0].keys}`];
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const ofChain = (name: string, keys: number) =>
    `${(perMessage[`${name}-${keys}`] / perMessage[`chain-${keys}`]).toFixed(2)}×`;
  const figures: Record<string, string> = {};
  for (const keys of KEYS) {
    for (const name of Object.keys(CONTENDERS)) {
      figures[`${name}-${keys}`] = n(perMessage[`${name}-${keys}`]);
      figures[`${name}-${keys}.chain`] = ofChain(name, keys);
    }
  }
  return {
    method: `Each count is one process under \`valgrind --tool=callgrind\` (${version}), Node \`--single-threaded --random-seed=1 --predictable-gc-schedule\`, running the core cell's contender (\`async (m) => m\`, ${MESSAGES.toLocaleString('en-US')} messages from an array, message *i* has key *i* mod keys) ${WARMUPS} times unmeasured and then ${RUNS} times; a second process runs it only the ${WARMUPS} times. Their difference, divided by the ${(RUNS * MESSAGES).toLocaleString('en-US')} messages of the counted runs, is what a warm message executes: start-up, the input and the warm-up's compiling are not in it. Everything the process ran counts (V8's built-ins, the microtask queue, the collector). Counted twice, the first row's program gave ${first.toFixed(1)} and ${again.toFixed(1)} instructions a message. The executor has one lane per core (${lanes} here), as in the core scenario. "Before" is revision \`${BASELINE}\`, bundled from its own sources. ÷ chain below 1 is fewer instructions than the promise chain.`,
    tables: table(
      [
        'contender',
        ...KEYS.flatMap((k) => [`${k.toLocaleString('en-US')} keys, instructions/msg`, '÷ chain']),
      ],
      Object.entries(CONTENDERS).map(([name, c]) => [
        c.label,
        ...KEYS.flatMap((keys) => [n(perMessage[`${name}-${keys}`]), ofChain(name, keys)]),
      ]),
    ),
    figures,
  };
}

const scenario: Scenario = {
  title: 'instructions per message with a Promise handler, counted under Valgrind',
  run,
};

export default scenario;
