/**
 * How many functions of `src/` a message crosses on event-loop lanes: every method and exported
 * function of the library's core modules (not the `#private` ones) is wrapped in a counter, the core
 * cell `async (m) => m` runs at 1,000 keys, and the functions called at least once for every other
 * message are listed with their files. Also counts the declarations of classes, interfaces, types and
 * enums in `engine/` and `dispatch/`.
 *
 *   node -r ts-node/register/transpile-only bench/functions-crossed.ts [tree]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const tree = process.argv[2] ?? join(__dirname, '..');
const SRC = join(tree, 'src');
const MESSAGES = 20_000;
/** Folders whose modules a dispatch on event-loop lanes loads (transports and exporters stay out). */
const FOLDERS = ['dispatch', 'engine', 'internal', 'receivers', 'runtime', 'metrics', 'health', ''];

const calls = new Map<string, number>();
/** Classes wrapped already: an index re-exports them. */
const wrapped = new WeakSet<object>();

function counted(name: string, fn: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  calls.set(name, 0);
  return function (this: unknown, ...args: unknown[]) {
    calls.set(name, (calls.get(name) ?? 0) + 1);
    return fn.apply(this, args);
  };
}

function wrapClass(file: string, cls: { name: string; prototype: object }): void {
  if (wrapped.has(cls.prototype)) return;
  wrapped.add(cls.prototype);
  for (const name of Object.getOwnPropertyNames(cls.prototype)) {
    const d = Object.getOwnPropertyDescriptor(cls.prototype, name);
    if (name === 'constructor' || d === undefined || typeof d.value !== 'function') continue;
    Object.defineProperty(cls.prototype, name, {
      ...d,
      value: counted(`${file} ${cls.name}.${name}`, d.value),
    });
  }
}

function wrapModule(path: string): void {
  const file = relative(SRC, path);
  const exports = require(path) as Record<string, unknown>;
  for (const [name, value] of Object.entries(exports)) {
    if (typeof value !== 'function') continue;
    if (/^class\b/.test(Function.prototype.toString.call(value))) wrapClass(file, value as never);
    else {
      try {
        exports[name] = counted(`${file} ${name}`, value as never);
      } catch {
        // A re-export (a getter): counted where it is defined.
      }
    }
  }
}

function sources(folder: string): string[] {
  const dir = join(SRC, folder);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

const files = FOLDERS.flatMap(sources);
for (const path of files) wrapModule(path);

/** Declarations of classes, interfaces, types and enums in engine/ and dispatch/. */
function declarations(): number {
  let n = 0;
  for (const path of [...sources('engine'), ...sources('dispatch')]) {
    const text = readFileSync(path, 'utf8');
    n += (text.match(/^(export )?(abstract )?(class|interface|type|enum|const enum) \w+/gm) ?? []).length;
  }
  return n;
}

(async () => {
  const { cell } = require(join(tree, 'bench', 'scenarios', 'core')) as typeof import('./scenarios/core');
  const run = cell({
    shape: 'async',
    keys: 1_000,
    messages: MESSAGES,
    contenders: ['ours'],
    warmups: 0,
    rounds: 1,
  }).ours as () => Promise<unknown>;
  await run();
  for (const name of calls.keys()) calls.set(name, 0);
  await run();
  const crossed = [...calls].filter(([, n]) => n >= MESSAGES / 2).sort(([a], [b]) => a.localeCompare(b));
  const inFiles = new Set(crossed.map(([name]) => name.split(' ')[0]));
  for (const [name, n] of crossed) console.log(`${(n / MESSAGES).toFixed(2).padStart(6)}  ${name}`);
  console.log(
    `${crossed.length} functions in ${inFiles.size} files; ${declarations()} declarations in engine/ + dispatch/`,
  );
  process.exit(0);
})();
