import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One source for every figure: a page quotes a benchmark figure only inside a marker naming it,
 * `<!-- bench core.async-1000.chain -->0.74×<!-- /bench -->`, and `npm run bench` rewrites what is between
 * the markers from the results it wrote (bench/results/<scenario>.json). The figures spec checks the same.
 */

export const ROOT = join(__dirname, '..');
export const RESULTS = join(__dirname, 'results');

/** A scenario's results file: what `npm run bench -- <name>` wrote. */
export interface Result {
  readonly name: string;
  readonly title: string;
  readonly machine: string;
  /** The day it was measured, YYYY-MM-DD. */
  readonly date: string;
  /** The command that produced it. */
  readonly command: string;
  /** Figures pages may quote, by id within the scenario: the text they show. */
  readonly figures: Record<string, string>;
  /** Whether it drew bench/results/<name>.svg. */
  readonly chart: boolean;
  /** Rows of the headline table; `{id}` stands for the scenario's figure `id`. */
  readonly headline: ReadonlyArray<readonly [what: string, users: string, peer: string]>;
}

export function readResults(): Result[] {
  if (!existsSync(RESULTS)) return [];
  return readdirSync(RESULTS)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(join(RESULTS, file), 'utf8')) as Result);
}

/** Every figure of every result, by `<scenario>.<id>`. */
export function figuresOf(results: readonly Result[]): Map<string, string> {
  const all = new Map<string, string>();
  for (const r of results)
    for (const [id, text] of Object.entries(r.figures)) all.set(`${r.name}.${id}`, text);
  return all;
}

const MARKER = /<!-- bench ([\w.-]+) -->([\s\S]*?)<!-- \/bench -->/g;

/** The page with every marker's content replaced by its figure (unknown ids are left as they are). */
export function fillFigures(page: string, figures: ReadonlyMap<string, string>): string {
  return page.replace(MARKER, (whole, id: string) => {
    const text = figures.get(id);
    return text === undefined ? whole : `<!-- bench ${id} -->${text}<!-- /bench -->`;
  });
}

/** Markers whose content is not the figure they name, or that name no figure, one line each. */
export function figureMismatches(page: string, figures: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [, id, shown] of page.matchAll(MARKER)) {
    const text = figures.get(id);
    if (text === undefined) out.push(`${id}: no such figure in bench/results`);
    else if (text !== shown) out.push(`${id}: the page says ${shown}, the results say ${text}`);
  }
  return out;
}

/** What a benchmark figure typed by hand looks like: a ratio, a rate, a cost per message. */
const HAND_WRITTEN = [
  /\d×/,
  /\bmsgs\/s\b/,
  /\d ?[kM] msgs/,
  /[nµ]s (per|a) message/,
  /\d ?% of (the|its) throughput/,
];

/** Lines of a guide that quote a benchmark figure outside a marker (code blocks and spans aside). */
export function handWrittenFigures(page: string): string[] {
  const prose = page
    .replace(/```[\s\S]*?```/g, '')
    .replace(MARKER, '')
    .replace(/`[^`\n]*`/g, '');
  return prose.split('\n').filter((line) => HAND_WRITTEN.some((pattern) => pattern.test(line)));
}
