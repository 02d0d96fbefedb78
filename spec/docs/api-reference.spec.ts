import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const readJson = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));

describe('API reference', () => {
  it('documents every entry point of the package: the root and each subpath of "exports"', () => {
    const subpaths = Object.keys(readJson('package.json').exports).filter(
      (path) => path !== './package.json',
    );
    const sources = subpaths.map((path) => (path === '.' ? 'src/index.ts' : `src/${path.slice(2)}/index.ts`));
    expect([...readJson('typedoc.json').entryPoints].sort()).toEqual(sources.sort());
  });

  it('fails on an undocumented public export', () => {
    const config = readJson('typedoc.json');
    expect(config.validation.notDocumented).toBe(true);
    expect(config.treatWarningsAsErrors).toBe(true);
  });
});
