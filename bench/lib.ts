import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';

/** One measured scenario: a name and what it printed for BENCHMARKS.md. */
export interface Scenario {
  /** Runs the scenario, prints its tables, and returns the Markdown section for BENCHMARKS.md. */
  run(args: string[]): Promise<string>;
  /** One line for the list of scenarios. */
  readonly title: string;
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function minMax(values: number[]): [number, number] {
  return [Math.min(...values), Math.max(...values)];
}

/** `1.23 M`, `456 k`: a rate for tables. */
export function rate(perSecond: number): string {
  if (perSecond >= 1e6) return `${(perSecond / 1e6).toFixed(2)} M`;
  if (perSecond >= 1e3) return `${(perSecond / 1e3).toFixed(1)} k`;
  return perSecond.toFixed(0);
}

/** A Markdown table; also readable on a terminal. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/** Runs `fn` once to warm up, then `runs` times, alternating with the other contenders by the caller. */
export async function timeIt(fn: () => Promise<void> | void): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Encourages a collection between measurements when node runs with --expose-gc. */
export function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

export function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${availableParallelism()} × ${cpu}, Node ${process.version}, ${process.platform}/${process.arch}`;
}

const FILE = join(__dirname, '..', 'BENCHMARKS.md');

/** Replaces (or appends) the section of `name` in BENCHMARKS.md, between its markers. */
export function writeSection(name: string, markdown: string): void {
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  const block = `${begin}\n${markdown.trim()}\n${end}`;
  let text = existsSync(FILE)
    ? readFileSync(FILE, 'utf8')
    : '# Benchmarks\n\nRegenerate with `npm run bench` (all scenarios) or `npm run bench -- <scenario>`.\n';
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  text =
    i >= 0 && j > i
      ? text.slice(0, i) + block + text.slice(j + end.length)
      : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(FILE, text);
}

/**
 * Bundles a bench entry (TypeScript) into plain JS once, so measured child processes run compiled code
 * and start fast. Returns the path of the bundle.
 */
export function bundle(entry: string): string {
  const { buildSync } = require('esbuild') as typeof import('esbuild');
  const outfile = join(__dirname, '..', '.bench-out', `${entry.replace(/[^\w]+/g, '_')}.js`);
  buildSync({
    entryPoints: [join(__dirname, entry)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    logLevel: 'warning',
    // Children import bench/lib for small helpers; the bundler itself never runs in them.
    // @platformatic/kafka is an ES module that finds its files through import.meta.url: loaded, not bundled.
    external: ['esbuild', 'piscina', '@platformatic/kafka'],
  });
  return outfile;
}

/** Runs a bundled bench child in a fresh process and returns the JSON it prints on its last line. */
export function runChild<T>(file: string, args: string[]): T {
  const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
  const out = execFileSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', file, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = out.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as T;
}
