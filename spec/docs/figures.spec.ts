import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  figureMismatches,
  figuresOf,
  fillFigures,
  handWrittenFigures,
  RESULTS,
  ROOT,
  readResults,
} from '../../bench/figures';
import { scenarios } from '../../bench/run';
import { renderSummary, summaryOf } from '../../bench/summary';

// Every benchmark figure has one source, the results `npm run bench` writes to bench/results/: the
// guides quote a figure only inside a marker that names it, and BENCHMARKS.md's summary is generated.

const results = readResults();
const figures = figuresOf(results);
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');
const GUIDES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];

describe('benchmark figures', () => {
  it.each([...GUIDES, 'BENCHMARKS.md'])('%s shows each figure it quotes as the results say', (page) => {
    expect(figureMismatches(read(page), figures)).toEqual([]);
  });

  it.each(GUIDES)('%s quotes no benchmark figure by hand', (page) => {
    expect(handWrittenFigures(read(page))).toEqual([]);
  });

  it("BENCHMARKS.md's summary is the one the results make, at most 8 KB in all", () => {
    const page = read('BENCHMARKS.md');
    expect(summaryOf(page)).toBe(renderSummary(results, Object.keys(scenarios)));
    expect(Buffer.byteLength(page)).toBeLessThanOrEqual(8 * 1024);
  });

  it('each result is a scenario of npm run bench, with its detail saying how to reproduce it', () => {
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) {
      expect(Object.keys(scenarios)).toContain(result.name);
      const detail = join(RESULTS, `${result.name}.md`);
      expect(existsSync(detail)).toBe(true);
      expect(readFileSync(detail, 'utf8')).toContain(`Reproduce: \`npm run bench -- ${result.name}`);
    }
  });

  it('a page that shows a figure other than its result, or names none, fails the check', () => {
    const [id, text] = [...figures][0];
    const page = `faster: <!-- bench ${id} -->${text}<!-- /bench -->`;
    expect(figureMismatches(page, figures)).toEqual([]);
    const wrong = page.replace(`-->${text}<`, '-->999×<');
    expect(figureMismatches(wrong, figures)).toEqual([`${id}: the page says 999×, the results say ${text}`]);
    expect(fillFigures(wrong, figures)).toBe(page);
    expect(figureMismatches('<!-- bench core.no-such -->1×<!-- /bench -->', figures)).toEqual([
      'core.no-such: no such figure in bench/results',
    ]);
  });

  it('a guide whose quoted figure is changed by hand fails the check', () => {
    const quoting = GUIDES.map(read).find((page) => page.includes('<!-- bench '));
    expect(quoting).toBeDefined();
    const edited = (quoting as string).replace(/(<!-- bench [\w.-]+ -->)[^<]*/, '$1999×');
    expect(figureMismatches(edited, figures)).toHaveLength(1);
  });

  it('a figure typed by hand is found, outside code and markers', () => {
    expect(handWrittenFigures('It runs 17× faster.\nAt 140 k msgs/s it keeps up.')).toHaveLength(2);
    expect(handWrittenFigures('`2×` in code and <!-- bench a.b -->3×<!-- /bench --> in a marker')).toEqual(
      [],
    );
  });
});
