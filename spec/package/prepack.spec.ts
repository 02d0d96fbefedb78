import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from './packed';

/**
 * The files a fresh clone of this working copy holds: the tracked ones and the new ones git does not
 * ignore, as they are now (so `dist/` and every other build output stay behind). `node_modules` is
 * linked, as `npm ci` would have installed it.
 */
function freshCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyed-dispatch-checkout-'));
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  for (const file of listed.split('\0')) {
    if (file === '' || !existsSync(join(ROOT, file))) continue; // deleted in the working copy
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(dir, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Every file package.json points a user at: main, module, types, typesVersions and each "exports" target. */
function filesNamedBy(manifest: Record<string, unknown>): string[] {
  const named = new Set<string>();
  const collect = (value: unknown): void => {
    if (typeof value === 'string') named.add(value.replace(/^\.\//, ''));
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(collect);
  };
  collect([manifest.main, manifest.module, manifest.types, manifest.typesVersions, manifest.exports]);
  return [...named].sort();
}

describe('npm pack from a fresh clone', () => {
  let checkout: string;
  let packed: string[];
  beforeAll(() => {
    checkout = freshCheckout();
    expect(existsSync(join(checkout, 'dist'))).toBe(false);
    const out = join(checkout, 'packed');
    mkdirSync(out);
    execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: checkout, stdio: 'pipe' });
    const [tarball] = readdirSync(out);
    packed = execFileSync('tar', ['-tzf', join(out, tarball)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.replace(/^package\//, ''));
  }, 300_000);
  afterAll(() => {
    if (checkout !== undefined) rmSync(checkout, { recursive: true, force: true });
  });

  it('builds dist/ first (prepack), so the tarball ships the code of the main entry in both formats', () => {
    expect(packed).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.mjs', 'dist/index.d.ts']));
  });

  it('ships every file package.json names, for every subpath in "exports", and the thread-lane worker', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const named = filesNamedBy(manifest);
    expect(named).toEqual(
      expect.arrayContaining(['dist/kafka/index.mjs', 'dist/dashboard/index.d.ts', 'package.json']),
    );
    expect(named.filter((file) => !packed.includes(file))).toEqual([]);
    expect(packed).toContain('dist/thread-worker.js');
  });
});
