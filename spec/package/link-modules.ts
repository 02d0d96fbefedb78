import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './packed';

/**
 * Links the given modules of this repository's node_modules into `dir`'s node_modules, their commands
 * into its node_modules/.bin, as `npm install` puts them there.
 */
export function linkModules(dir: string, modules: readonly string[]): void {
  const bin = join(dir, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  for (const name of modules) {
    const source = join(ROOT, 'node_modules', name);
    const target = join(dir, 'node_modules', name);
    mkdirSync(join(target, '..'), { recursive: true });
    symlinkSync(source, target, 'dir');
    const commands = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')).bin ?? {};
    const named: Record<string, string> =
      typeof commands === 'string' ? { [name.split('/').pop() as string]: commands } : commands;
    for (const [command, file] of Object.entries(named)) symlinkSync(join(source, file), join(bin, command));
  }
}
