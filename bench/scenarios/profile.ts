import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, type Scenario, table } from '../lib';
import type { Group } from './core-matrix-child';

/**
 * keyedDispatch with `async (m) => m` at 1,000 and 100,000 keys (the core matrix's cells, our contender
 * alone) under `node --cpu-prof`: the functions with the most self time, and the source lines with the
 * most samples, which see through inlining (a function's self time includes what the compiler inlined
 * into it): where the Promise shape spends its time.
 */

const KEYS = [1_000, 100_000];
const groupOf = (keys: number): Group => ({
  shape: 'async',
  keys,
  messages: 300_000,
  warmups: 2,
  rounds: 20,
  contenders: ['ours:pulled:256'],
});
const TOP = 20;
const TOP_LINES = 12;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  /** Samples by source line (1-based) of the function's script. */
  positionTicks?: Array<{ line: number; ticks: number }>;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The module each line of a bundle comes from: esbuild heads every module with a `// path` comment. */
function modulesOf(file: string): (line: number) => string {
  const heads: Array<[number, string]> = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, line) => {
      const m = /^\/\/ (\S+\.[cm]?[jt]s)$/.exec(text);
      // Only the package-relative part: the bundle sees dependencies through the checkout's paths.
      if (m) heads.push([line, m[1].replace(/^.*node_modules\//, '').replace(/^(\.\.\/)+/, '')]);
    });
  return (line) => {
    let found = '';
    for (const [at, path] of heads) {
      if (at > line) break;
      found = path;
    }
    return found;
  };
}

/** Self time per function (name and module), ms, from a profile's samples. */
function selfTimes(profile: CpuProfile, moduleOf: (line: number) => string, bundled: string) {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    all += ms;
    const frame = byNode.get(id)?.callFrame;
    if (!frame) return;
    const where = frame.url.endsWith(bundled) ? moduleOf(frame.lineNumber) : frame.url.replace(/^.*\//, '');
    const name = `${frame.functionName || '(anonymous)'}${where ? ` — ${where}` : ''}`;
    totals.set(name, (totals.get(name) ?? 0) + ms);
  });
  return { all, top: [...totals].sort((a, b) => b[1] - a[1]).slice(0, TOP) };
}

/** Samples per bundle line (attributed where the code came from, inlined or not), the top ones with their code. */
function hotLines(profile: CpuProfile, moduleOf: (line: number) => string, bundledFile: string) {
  const bundled = bundledFile.replace(/^.*\//, '');
  const source = readFileSync(bundledFile, 'utf8').split('\n');
  const ticks = new Map<number, number>();
  let all = 0;
  for (const node of profile.nodes) {
    for (const { line, ticks: n } of node.positionTicks ?? []) {
      all += n;
      if (node.callFrame.url.endsWith(bundled)) ticks.set(line, (ticks.get(line) ?? 0) + n);
    }
  }
  return [...ticks]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP_LINES)
    .map(([line, n]) => [
      `\`${source[line - 1].trim().slice(0, 70).replace(/`/g, "'")}\``,
      moduleOf(line - 1),
      `${((n / all) * 100).toFixed(1)} %`,
    ]);
}

/** Profiles our contender alone on the cell of `keys` keys; the section's text for it. */
function profileCell(child: string, keys: number): string {
  const group = groupOf(keys);
  const dir = mkdtempSync(join(tmpdir(), 'keyed-dispatch-profile-'));
  try {
    execFileSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, child, JSON.stringify(group)], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('node --cpu-prof wrote no profile');
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const moduleOf = modulesOf(child);
    const { all, top } = selfTimes(profile, moduleOf, child.replace(/^.*\//, ''));
    const rows = top.map(([name, ms]) => [name, `${ms.toFixed(0)} ms`, `${((ms / all) * 100).toFixed(1)} %`]);
    return (
      `### ${keys.toLocaleString('en-US')} keys\n\n` +
      `${group.warmups + group.rounds} runs of ${group.messages.toLocaleString('en-US')} messages (the first ` +
      `${group.warmups} warm-ups; building the input included), ${all.toFixed(0)} ms sampled. The ${TOP} ` +
      'functions with the most self time (garbage collection is `(garbage collector)`, time in no JavaScript ' +
      `\`(program)\`):\n\n${table(['function — module', 'self time', 'share'], rows)}\n\n` +
      `The ${TOP_LINES} source lines with the most samples (share of the samples that fell in JavaScript; a line ` +
      'of a function inlined elsewhere still counts here):\n\n' +
      table(['line', 'module', 'share'], hotLines(profile, moduleOf, child))
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const scenario: Scenario = {
  title:
    'where the Promise shape spends its time: `async (m) => m`, 1,000 and 100,000 keys, `node --cpu-prof`',
  async run() {
    const child = bundle('scenarios/core-matrix-child.ts');
    const text =
      KEYS.map((keys) => profileCell(child, keys)).join('\n\n') +
      '\n\nReproduce the profile itself: `npm run bench -- profile` (it keeps nothing); for a flame graph, run ' +
      "`node --cpu-prof .bench-out/scenarios_core_matrix_child_ts.js '<group as JSON>'` after a bench run " +
      'and open the `.cpuprofile` in Chrome DevTools.';
    console.log(text);
    return text;
  },
};

export default scenario;
