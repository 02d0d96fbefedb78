import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

/**
 * Bundles the consumer-group member process (scale-out-consumer.ts) into `out` and returns its path: it
 * imports the package by name, which the bundle resolves to the sources (tsconfig `paths`), as Jest
 * does for the specs. The clients and rxjs stay external.
 */
export function buildMemberScript(out: string): string {
  const script = join(out, 'member.js');
  mkdirSync(out, { recursive: true });
  buildSync({
    entryPoints: [join(__dirname, 'scale-out-consumer.ts')],
    outfile: script,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: ['kafkajs', '@platformatic/kafka', '@confluentinc/kafka-javascript', 'rxjs'],
    tsconfig: join(__dirname, '..', '..', 'tsconfig.json'),
    logLevel: 'warning',
  });
  return script;
}
