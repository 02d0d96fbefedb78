import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The shape of src/ as a graph of relative imports (type-only ones too: a circle of types is still a
 * circle a reader has to hold in mind). The lane kind is one seam: outside threads/, only the public
 * index, the options that recognise a thread handler and the runtime (the type of its `executor`
 * option) import from threads/, so the thread stack
 * (worker_threads, the worker script) stays out of a dispatch on event-loop lanes.
 */
const SRC = resolve(__dirname, '../../src');

/** Files outside threads/ that may import from it. */
const THREAD_IMPORTERS = ['index.ts', 'options.ts', 'runtime/dispatch-runtime.ts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g;

function importsOf(file: string, files: ReadonlySet<string>): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const target = relative(SRC, resolve(SRC, dirname(file), match[1] ?? match[2]));
    const path = [`${target}.ts`, join(target, 'index.ts')].find((p) => files.has(p));
    if (path !== undefined) found.push(path);
  }
  return found;
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file, new Set(files))]));

/** Every import circle, each as the path of files that closes it, found by a depth-first walk. */
function circles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (state.get(file) === undefined) visit(file);
  return found;
}

describe('the imports of src/', () => {
  it('finds the imports it checks', () => {
    expect(graph.get('index.ts')).toContain('executor.ts');
    expect(graph.get('options.ts')?.some((f) => f.startsWith('threads/'))).toBe(true);
  });

  it('form no circle', () => {
    expect(circles().map((circle) => circle.join(' -> '))).toEqual([]);
  });

  it('reach threads/ only from the public index, the options and the runtime', () => {
    const outside = [...graph]
      .filter(
        ([file, imports]) => !file.startsWith('threads/') && imports.some((f) => f.startsWith('threads/')),
      )
      .map(([file]) => file);
    expect(outside.filter((file) => !THREAD_IMPORTERS.includes(file))).toEqual([]);
  });

  it('keep the dispatcher core free of thread lanes', () => {
    expect(graph.get('dispatch/dispatch-core.ts')?.filter((f) => f.startsWith('threads/'))).toEqual([]);
  });
});
