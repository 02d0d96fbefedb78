import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runExample } from '../support/run-example';

const ROOT = join(__dirname, '..', '..');
const EXAMPLE_TIMEOUT = 180_000;

describe('examples', () => {
  it('the README quick start is examples/quick-start.ts, importing the package by name', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const source = readFileSync(join(ROOT, 'examples', 'quick-start.ts'), 'utf8');
    const shown = readme.split('## Quick start')[1].split('```ts\n')[1].split('```')[0];
    expect(shown).toBe(source.replace("from '../src';", "from 'keyed-dispatch';"));
  });

  it(
    'quick-start handles every deposit in order per account and exits by itself',
    async () => {
      const run = await runExample('quick-start.ts');
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('done: 3 accounts');
      // Deposits i = 1..12 go to acc-(i % 3); each account's running balance grows in send order.
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
});
