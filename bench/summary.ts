import type { Result } from './figures';

/**
 * The generated part of BENCHMARKS.md, between `<!-- summary:begin -->` and `<!-- summary:end -->`: the
 * headline table, the charts and one line per scenario, all from the results files, in `order`.
 */

export const BEGIN = '<!-- summary:begin -->';
export const END = '<!-- summary:end -->';

export function renderSummary(results: readonly Result[], order: readonly string[]): string {
  const byName = new Map(results.map((r) => [r.name, r]));
  const measured = order.flatMap((name) => byName.get(name) ?? []);
  const machines = [...new Set(measured.map((r) => r.machine))];
  const dates = [...new Set(measured.map((r) => r.date))].sort();
  const rows = measured.flatMap((r) =>
    r.headline.map(([what, ...against]) => {
      const cells = [`${what} ([${r.name}](bench/results/${r.name}.md))`, ...against];
      return `| ${cells.map((c) => c.replace(/\{([\w.-]+)\}/g, (_, id) => r.figures[id])).join(' | ')} |`;
    }),
  );
  const lines = [
    BEGIN,
    `Measured on ${machines.join('; ')}, ${dates.length > 1 ? `${dates[0]} to ${dates[dates.length - 1]}` : dates[0]}.`,
    '',
    '| scenario | against what users write instead | against the strongest peer |',
    '|---|---|---|',
    ...rows,
    '',
    ...measured.filter((r) => r.chart).map((r) => `![${r.name}](bench/results/${r.name}.svg)`),
    '',
    '## Scenarios',
    '',
    ...order.map((name) => {
      const r = byName.get(name);
      return r
        ? `- [${name}](bench/results/${name}.md): ${r.title}.`
        : `- ${name}: not measured yet (\`npm run bench -- ${name}\`).`;
    }),
    END,
  ];
  return lines.join('\n');
}

/** `page` with its summary block replaced by `summary`. */
export function withSummary(page: string, summary: string): string {
  const i = page.indexOf(BEGIN);
  const j = page.indexOf(END);
  if (i < 0 || j < i) throw new Error('BENCHMARKS.md has no summary markers');
  return page.slice(0, i) + summary + page.slice(j + END.length);
}

/** The summary block of `page` as it is. */
export function summaryOf(page: string): string {
  return page.slice(page.indexOf(BEGIN), page.indexOf(END) + END.length);
}
