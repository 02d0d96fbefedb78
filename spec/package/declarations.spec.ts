import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, ROOT } from './packed';

/**
 * The shipped declarations name no internal member: public classes keep theirs in `#private` fields,
 * which a `.d.ts` shows as one `#private;` line. (Protected members stay: they are what a receiver
 * subclassing `PullSession` uses.)
 */
function declarations(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarations(path);
    return /\.d\.m?ts$/.test(entry.name) ? [path] : [];
  });
}

describe('the shipped declarations', () => {
  beforeAll(() => ensureBuilt());

  it('name no private member', () => {
    const files = declarations(join(ROOT, 'dist'));
    expect(files.length).toBeGreaterThan(0);
    const named = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => /^\s+private\s/.test(line))
        .map((line) => `${file.slice(ROOT.length + 1)}: ${line.trim()}`),
    );
    expect(named).toEqual([]);
  });
});
