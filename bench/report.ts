import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { figuresOf, fillFigures, RESULTS, type Result, ROOT, readResults } from './figures';
import { renderSummary, withSummary } from './summary';
import { barChart, type Chart } from './svg';

/** A benchmark scenario: what it compares, and how to run it. */
export interface Scenario {
  /** One line: what is compared with what. */
  readonly title: string;
  /** Runs it. `rounds` replaces its default number of measured rounds when given. */
  run(options: { rounds?: number; args: string[] }): Promise<Report>;
}

/** What a run of a scenario found. */
export interface Report {
  /** What each contender is and how it was measured, in Markdown. */
  readonly method: string;
  /** The detail tables, in Markdown. */
  readonly tables: string;
  readonly chart?: Chart;
  /** Figures BENCHMARKS.md and the guides may quote, by id: the text they show (`0.74×`). */
  readonly figures: Record<string, string>;
  /** Rows of the headline table: what, against what users write instead, against the strongest peer. */
  readonly headline?: Result['headline'];
}

export function machine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${availableParallelism()} × ${cpu}, Node ${process.version}, ${process.platform}/${process.arch}`;
}

/**
 * Writes bench/results/<name>.md (the detail, with how to reproduce it), .svg (its chart) and .json (its
 * figures), then brings BENCHMARKS.md's summary and every figure quoted in README.md and docs/ up to date.
 */
export function publish(name: string, title: string, command: string, report: Report, order: string[]): void {
  mkdirSync(RESULTS, { recursive: true });
  const result: Result = {
    name,
    title,
    machine: machine(),
    date: new Date().toISOString().slice(0, 10),
    command,
    figures: report.figures,
    chart: report.chart !== undefined,
    headline: report.headline ?? [],
  };
  if (report.chart) writeFileSync(join(RESULTS, `${name}.svg`), barChart(report.chart));
  const detail = [
    `# ${name}: ${title}`,
    `Machine: ${result.machine}; measured ${result.date}. Reproduce: \`${command}\` (writes this file).`,
    ...(report.chart ? [`![${report.chart.title}](${name}.svg)`] : []),
    report.method,
    report.tables,
  ];
  writeFileSync(join(RESULTS, `${name}.md`), `${detail.join('\n\n')}\n`);
  writeFileSync(join(RESULTS, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  refreshPages(order);
}

/** Rewrites the generated parts of BENCHMARKS.md, README.md and docs/*.md from the results files. */
export function refreshPages(order: string[]): void {
  const results = readResults();
  const update = (file: string, change: (text: string) => string) => {
    if (!existsSync(file)) return;
    const text = readFileSync(file, 'utf8');
    const next = change(text);
    if (next !== text) writeFileSync(file, next);
  };
  const figures = figuresOf(results);
  update(join(ROOT, 'BENCHMARKS.md'), (text) =>
    fillFigures(withSummary(text, renderSummary(results, order)), figures),
  );
  const guides = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(ROOT, 'docs', f));
  for (const page of [join(ROOT, 'README.md'), ...guides]) update(page, (text) => fillFigures(text, figures));
}
