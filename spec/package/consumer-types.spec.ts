import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consumerProject, ROOT } from './packed';

/**
 * A TypeScript user of the packed package who installed rxjs and none of the optional peers (broker
 * clients, OpenTelemetry, prom-client): our declarations must compile for them, under every module
 * resolution, with declaration emit of values our functions return. `@types/node` is there as in any
 * Node project (thread lanes name `worker_threads` types).
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

  it.each(MODES)(
    'type-checks and emits declarations under $name resolution',
    (mode) => {
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
            types: ['node'],
          },
          files: ['consumer.ts'],
        }),
      );
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      let output = '';
      try {
        execFileSync(process.execPath, [tsc, '-p', project.dir], { encoding: 'utf8', stdio: 'pipe' });
      } catch (err) {
        output = String((err as { stdout?: string }).stdout ?? err);
      }
      expect(output).toBe('');
    },
    120_000,
  );
});
