import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consumerProject, ROOT } from './packed';

/**
 * A TypeScript user of the packed package who installed rxjs and none of the optional peers (broker
 * clients, OpenTelemetry, prom-client): our declarations must compile for them, under every module
 * resolution, with declaration emit of values our functions return. `@types/node` is there as in any
 * Node project (the Kafka subpath names `Buffer`); the main entry compiles without it (rxjs's own types
 * then take timers from the DOM library, TypeScript's default).
 */
const CONSUMER = `
import { fromIterable, keyedDispatch, retryPolicy } from 'keyed-dispatch';
import { kafkaKey } from 'keyed-dispatch/kafka';
import { fromJetStream, type JetStreamConsumer } from 'keyed-dispatch/nats';
import { exportToOpenTelemetry } from 'keyed-dispatch/otel';
import { exportToPrometheus } from 'keyed-dispatch/prometheus';
import { fromRedisStreams, type RedisClient } from 'keyed-dispatch/redis';
import { serveDashboard } from 'keyed-dispatch/dashboard';

declare const consumer: JetStreamConsumer;
declare const redis: RedisClient;

export const r = fromJetStream({ consumer });
export const s = fromRedisStreams({ redis, streams: ['orders'], group: 'g', consumer: 'c' });
export const dispatch = keyedDispatch({ key: (n: number) => n % 2, handle: (n) => [n], onFailure: retryPolicy<number, number>() });
export const source = fromIterable([1, 2, 3]);
export const exporters = [exportToOpenTelemetry, exportToPrometheus, serveDashboard, kafkaKey];
`;

/** The main entry alone, thread lanes and runtime included: Node's own types are not needed for it. */
const MAIN_ONLY = `
import { DispatchMetrics, DispatchRuntime, ThreadExecutor, type ThreadHandler, threadHandler, transfer } from 'keyed-dispatch';

export const executor = new ThreadExecutor({ workers: 2, resourceLimits: { maxOldGenerationSizeMb: 64 } });
export const handle = threadHandler<{ id: string; body: ArrayBuffer }, number>('./price.js', 'price', {
  transfer: (m) => [m.body],
});
export const marked = transfer({ done: true }, [new ArrayBuffer(8)]);
// @ts-expect-error a typed array does not move to a thread, its buffer does
export const wrong = transfer({ done: true }, [new Uint8Array(8)]);
export const metrics = new DispatchMetrics();
export type Runtime = DispatchRuntime;
declare const pricing: {
  price: (m: { id: string }) => Promise<number>;
  broken: (m: { id: string }) => number;
};
// Typed from the module's export: message and value types follow it.
export const typed: ThreadHandler<{ id: string }, number> = threadHandler<typeof pricing.price>(
  '/handlers/price.mjs',
  'price',
);
// @ts-expect-error an export that does not return an ObservableInput is no thread handler
export const broken = threadHandler<typeof pricing.broken>('/handlers/price.mjs', 'broken');
`;

// The ESM declarations through `exports`, the CommonJS ones through `typesVersions`; `attw --pack` in CI
// checks every resolution mode finds them.
const MODES = [
  { name: 'nodenext (ESM project)', module: 'nodenext', moduleResolution: 'nodenext', type: 'module' },
  { name: 'node10 (CommonJS project)', module: 'commonjs', moduleResolution: 'node10', type: 'commonjs' },
];

describe('the packed package, used from TypeScript without the optional peers', () => {
  let project: ReturnType<typeof consumerProject>;
  beforeAll(() => {
    project = consumerProject(['rxjs', '@types/node']);
    writeFileSync(join(project.dir, 'consumer.ts'), CONSUMER);
  }, 240_000);
  afterAll(() => project?.remove());

  /** What tsc prints for `file` under `mode` (nothing when it compiles), with the given ambient types. */
  function compile(mode: (typeof MODES)[number], file: string, types: string[]): string {
    writeFileSync(join(project.dir, 'package.json'), JSON.stringify({ name: 'consumer', type: mode.type }));
    writeFileSync(
      join(project.dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: mode.module,
          moduleResolution: mode.moduleResolution,
          target: 'es2022',
          strict: true,
          skipLibCheck: false,
          declaration: true,
          emitDeclarationOnly: true,
          outDir: 'out',
          types,
        },
        files: [file],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    try {
      execFileSync(process.execPath, [tsc, '-p', project.dir], { encoding: 'utf8', stdio: 'pipe' });
      return '';
    } catch (err) {
      return String((err as { stdout?: string }).stdout ?? err);
    }
  }

  it.each(MODES)(
    'type-checks and emits declarations under $name resolution',
    (mode) => {
      expect(compile(mode, 'consumer.ts', ['node'])).toBe('');
    },
    120_000,
  );

  it.each(MODES)(
    'type-checks the main entry without @types/node under $name resolution',
    (mode) => {
      writeFileSync(join(project.dir, 'main-only.ts'), MAIN_ONLY);
      expect(compile(mode, 'main-only.ts', [])).toBe('');
    },
    120_000,
  );
});
