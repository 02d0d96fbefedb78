import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bundleInto, treeAt } from '../harness';
import type { Report, Scenario } from '../report';
import { median, table } from '../stats';

/**
 * Where keyedDispatch's time goes, before and after a change: CPU profiles (`node --cpu-prof`) of the
 * core cell `async (m) => m` at 1,000 keys, for this tree and for a baseline revision checked out beside
 * it, each bundled from its own sources. Self time is summed per source file of the library (the
 * bundle's module markers say which file a line belongs to), per message.
 */

const ROOT = join(__dirname, '..', '..');
const OUT = join(ROOT, '.bench-out', 'profile');
/** The main before the short path (issue: a message path in five files, faster than the promise chain). */
export const BASELINE = 'fd0ab6b';
const MESSAGES = 300_000;
const KEYS = 1_000;
/** Runs of the cell per profiled process: the first ones warm it up, and are profiled too. */
const RUNS = 12;

/** Bundles a program that runs the tree's core cell (keyedDispatch only) `RUNS` times. */
function bundleOf(tree: string, name: string): string {
  const outfile = join(OUT, `${name}.js`);
  const contents = `import { cell } from './bench/scenarios/core';
const runs = cell({ shape: 'async', keys: ${KEYS}, messages: ${MESSAGES}, contenders: ['ours'], warmups: 0, rounds: 1 });
(async () => { for (let i = 0; i < ${RUNS}; i++) await runs.ours(); })();`;
  bundleInto(outfile, {
    stdin: { contents, resolveDir: tree, loader: 'ts' },
    nodePaths: [join(ROOT, 'node_modules')],
  });
  return outfile;
}

interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    /** Samples by line (1-based), inlined code under its own line: how a function's time is split. */
    positionTicks?: Array<{ line: number; ticks: number }>;
  }>;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Which source a line of the bundle comes from: esbuild marks each module with a `// path` line (the
 * path from where it ran): a file of src/, a package, or the benchmark's own code.
 */
function sourcesOf(bundle: string): (line: number) => string {
  const marks: Array<[number, string]> = [];
  readFileSync(bundle, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const mark = /^\/\/ (\S+\.[cm]?[jt]s)$/.exec(text);
      if (mark) marks.push([i, nameOf(mark[1])]);
    });
  return (line) => {
    let found = 'the benchmark (input, counting)';
    for (const [at, name] of marks) {
      if (at > line) break;
      found = name;
    }
    return found;
  };
}

function nameOf(path: string): string {
  const packaged = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(path);
  if (packaged) return packaged[1];
  const source = /(^|\/)(src\/.*)$/.exec(path);
  return source ? source[2] : 'the benchmark (input, counting)';
}

/** Self time per source, in ns per message, of one profiled process. */
function profileOnce(bundle: string): Record<string, number> {
  const dir = join(OUT, 'cpu');
  rmSync(dir, { recursive: true, force: true });
  execFileSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, bundle], { stdio: 'inherit' });
  const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8')) as CpuProfile;
  const source = sourcesOf(bundle);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const self: Record<string, number> = {};
  const add = (where: string, us: number) => {
    self[where] = (self[where] ?? 0) + (us * 1000) / (RUNS * MESSAGES);
  };
  for (const { id, callFrame, positionTicks } of profile.nodes) {
    const us = selfUs.get(id) ?? 0;
    if (us === 0) continue;
    if (!callFrame.url.endsWith(bundle))
      add(callFrame.url === '' ? `${callFrame.functionName} (V8)` : 'Node.js', us);
    else if (positionTicks === undefined || positionTicks.length === 0) add(source(callFrame.lineNumber), us);
    else {
      // The lines say where inlined code came from; without them, all would count for the outer function.
      const ticks = positionTicks.reduce((n, t) => n + t.ticks, 0);
      for (const t of positionTicks) add(source(t.line - 1), (us * t.ticks) / ticks);
    }
  }
  return self;
}

async function run({ rounds = 3, args }: { rounds?: number; args: string[] }): Promise<Report> {
  const at = args.indexOf('--baseline');
  const baseline = at >= 0 ? args[at + 1] : BASELINE;
  const trees = { before: treeAt(baseline), after: treeAt(null) };
  const bundles = { before: bundleOf(trees.before, 'before'), after: bundleOf(trees.after, 'after') };
  const seen: Record<'before' | 'after', Array<Record<string, number>>> = { before: [], after: [] };
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
      console.error(`profile: ${side}, round ${r + 1}`);
      seen[side].push(profileOnce(bundles[side]));
    }
  }
  const medianOf = (side: 'before' | 'after', where: string) =>
    median(seen[side].map((self) => self[where] ?? 0));
  const places = [...new Set([...seen.before, ...seen.after].flatMap((self) => Object.keys(self)))];
  const rows = places
    .map((where) => ({ where, before: medianOf('before', where), after: medianOf('after', where) }))
    .filter((row) => row.before >= 0.5 || row.after >= 0.5)
    .sort((a, b) => b.before + b.after - (a.before + a.after));
  const total = (side: 'before' | 'after') => median(seen[side].map((self) => sum(Object.values(self))));
  const ns = (x: number) => (x === 0 ? '' : x.toFixed(1));
  const figures = { before: ns(total('before')), after: ns(total('after')) };
  return {
    method: `Each side is one process per round (${rounds} rounds, alternating which goes first) running the core cell's keyedDispatch (\`fromIterable(array).pipe(keyedDispatch({ key, handle: async (m) => m }))\`, ${MESSAGES.toLocaleString('en-US')} messages over ${KEYS.toLocaleString('en-US')} keys, window 256) ${RUNS} times under \`node --cpu-prof\`. Self time is summed per source file and divided by the messages run: nanoseconds per message, medians of the rounds, under the profiler (which slows everything alike). "Before" is revision \`${baseline}\`, checked out under .bench-out and bundled from its own sources; "after" is this tree. Rows under 0.5 ns on both sides are left out. \`(program)\` and \`(garbage collector)\` are V8's own; Node.js is its timers and microtask queue.`,
    tables: table(
      ['where', 'before, ns/msg', 'after, ns/msg'],
      [
        ...rows.map(({ where, before, after }) => [where, ns(before), ns(after)]),
        ['**all**', figures.before, figures.after],
      ],
    ),
    figures: { 'ns-before': figures.before, 'ns-after': figures.after },
  };
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

const scenario: Scenario = {
  title: 'where keyedDispatch spends its time per message, before and after the short path (CPU profiles)',
  run,
};

export default scenario;
