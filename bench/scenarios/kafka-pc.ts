import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const POM = join(ROOT, 'bench', 'kafka-pc', 'pom.xml');
const SOURCE = join(ROOT, 'bench', 'kafka-pc', 'src', 'main', 'java', 'bench', 'ParallelConsumerBench.java');
/** Jars and classes live under the ignored bench output folder, so a rerun downloads nothing. */
const OUT = join(ROOT, '.bench-out', 'kafka-pc');
const LIBS = join(OUT, 'libs');
const CLASSES = join(OUT, 'classes');

/**
 * The command that runs the Confluent Parallel Consumer program (bench/kafka-pc): fetches its runtime
 * jars from Maven Central the first time (or when the pom changed) and compiles it when the source is
 * newer than its class. Needs Java 17+ and Maven; only the kafka benchmark uses it.
 */
export function parallelConsumerCommand(): string[] {
  const pomHash = createHash('sha256').update(readFileSync(POM)).digest('hex');
  const marker = join(LIBS, '.pom.sha256');
  if (!existsSync(marker) || readFileSync(marker, 'utf8') !== pomHash) {
    execFileSync(
      'mvn',
      [
        '-B',
        '-q',
        '-f',
        POM,
        'dependency:copy-dependencies',
        '-DincludeScope=runtime',
        `-DoutputDirectory=${LIBS}`,
      ],
      { stdio: 'inherit' },
    );
    writeFileSync(marker, pomHash);
  }
  const compiled = join(CLASSES, 'bench', 'ParallelConsumerBench.class');
  if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(SOURCE).mtimeMs) {
    mkdirSync(CLASSES, { recursive: true });
    execFileSync('javac', ['-d', CLASSES, '-cp', join(LIBS, '*'), SOURCE], { stdio: 'inherit' });
  }
  return [
    'java',
    '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
    '-cp',
    `${CLASSES}:${join(LIBS, '*')}`,
    'bench.ParallelConsumerBench',
  ];
}
