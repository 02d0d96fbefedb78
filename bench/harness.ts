import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { perRound } from './stats';

/**
 * The one way every scenario measures. Contenders alternate: each runs `warmups` times unmeasured, then
 * once per round, the order rotated every round so none always runs first or after the same neighbour.
 * Nothing forces a collection between runs: each run pays for its own garbage, and a forced collection
 * would drop compiled code that a long-lived pipeline keeps. Figures are medians of per-round ratios, so
 * a round that the shared machine slowed down slows every contender in it alike.
 */

/** What one run of a contender measured: named numbers (msgs/s, a p99, a share finished). */
export type Measures = Record<string, number>;
/** One run of a contender. */
export type Run = () => Promise<Measures>;
/** Each contender's measures, round by round. */
export type Rounds = Record<string, Measures[]>;

export interface Alternation {
  /** Unmeasured runs of every contender before the first round. */
  readonly warmups: number;
  readonly rounds: number;
}

export async function alternate(
  runs: Record<string, Run>,
  { warmups, rounds }: Alternation,
): Promise<Rounds> {
  const ids = Object.keys(runs);
  for (let w = 0; w < warmups; w++) for (const id of ids) await runs[id]();
  const out: Rounds = Object.fromEntries(ids.map((id) => [id, []]));
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < ids.length; j++) {
      const id = ids[(j + r) % ids.length];
      out[id].push(await runs[id]());
    }
  }
  return out;
}

/** One measure of one contender, round by round. */
export function series(rounds: Rounds, id: string, measure = 'rate'): number[] {
  return (rounds[id] ?? []).map((m) => m[measure]);
}

/** Per-round ratios of contender `a` to `b` on one measure. */
export function ratios(rounds: Rounds, a: string, b: string, measure = 'rate'): number[] {
  return perRound(series(rounds, a, measure), series(rounds, b, measure));
}

/** How a scenario module sets up the contenders of one cell, inside the cell's own process. */
export type CellSetup<C> = (cell: C) => Record<string, Run> | Promise<Record<string, Run>>;

const OUT = join(__dirname, '..', '.bench-out');
const bundles = new Map<string, string>();

/**
 * Bundles `file` (under bench/) with the library into plain JavaScript, so a measured process runs the
 * code the package ships and starts fast. As a cell, the entry serves the module's `cell` (see below).
 */
export function bundle(file: string, asCell = false): string {
  const known = bundles.get(`${file}:${asCell}`);
  if (known) return known;
  const outfile = join(OUT, `${file.replace(/\W+/g, '_')}${asCell ? '_cell' : ''}.js`);
  const cell = `import { cell } from './${file}';\nimport { serveCell } from './harness';\nserveCell(cell);`;
  bundleInto(
    outfile,
    asCell
      ? { stdin: { contents: cell, resolveDir: __dirname, loader: 'ts' } }
      : { entryPoints: [join(__dirname, file)] },
  );
  bundles.set(`${file}:${asCell}`, outfile);
  return outfile;
}

/**
 * A tree to bundle a benchmark from: this one (`null`), or `revision` checked out beside it under
 * .bench-out (once), so a scenario can compare a change with the code before it.
 */
export function treeAt(revision: string | null): string {
  const root = join(__dirname, '..');
  if (revision === null) return root;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  // Named after the commit, so a branch name that moved gets a checkout of its own.
  const dir = join(OUT, `tree-${git('rev-parse', '--verify', `${revision}^{commit}`)}`);
  if (!existsSync(dir)) {
    mkdirSync(OUT, { recursive: true });
    // A checkout deleted with .bench-out is still registered: forgotten first, or `add` refuses.
    git('worktree', 'prune');
    git('worktree', 'add', '--detach', dir, revision);
  }
  return dir;
}

/** Bundles an entry (a file, or source with the folder it resolves from) into `outfile`, as `bundle` does. */
export function bundleInto(
  outfile: string,
  entry: Pick<import('esbuild').BuildOptions, 'stdin' | 'entryPoints' | 'nodePaths'>,
): void {
  const { buildSync } = require('esbuild') as typeof import('esbuild');
  buildSync({
    ...entry,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    outfile,
    logLevel: 'warning',
    // Loaded, not bundled: esbuild runs only in the parent; piscina starts workers from its own files;
    // @platformatic/kafka finds its files through import.meta.url.
    external: ['esbuild', 'piscina', '@platformatic/kafka', '@confluentinc/kafka-javascript'],
  });
}

/** The folder cell bundles run from (what a cell needs beside it, such as the thread worker, goes here). */
export const CELL_DIR = OUT;

// JSON has no Infinity: an unfinished percentile travels as a string.
const toJson = (_: string, v: unknown) => (v === Number.POSITIVE_INFINITY ? 'Infinity' : v);
const fromJson = (_: string, v: unknown) => (v === 'Infinity' ? Number.POSITIVE_INFINITY : v);

/**
 * Runs one cell in a fresh process: the scenario module `file` exports `cell` (a `CellSetup`), the
 * process alternates the contenders it returns as `cell` says and reports their rounds.
 */
export function inFreshProcess<C extends Alternation>(file: string, cell: C): Rounds {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--max-old-space-size=8192', bundle(file, true), JSON.stringify(cell)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 },
  );
  return JSON.parse(out.trim().split('\n').pop() as string, fromJson) as Rounds;
}

/** The cell process's side of `inFreshProcess`. */
export async function serveCell<C extends Alternation>(setup: CellSetup<C>): Promise<void> {
  try {
    const cell = JSON.parse(process.argv[2]) as C;
    const runs = await setup(cell);
    // Setting up left garbage (inputs, schedules): collected once, before anything is measured.
    (globalThis as { gc?: () => void }).gc?.();
    console.log(JSON.stringify(await alternate(runs, cell), toJson));
    process.exit(0);
  } catch (err) {
    console.error(err);
    process.exit(1);
  }
}
