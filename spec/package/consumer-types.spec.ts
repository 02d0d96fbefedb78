import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import { linkModules } from './link-modules';
import { consumerProject, ROOT } from './packed';

const run = promisify(execFile);

/**
 * TypeScript users of the packed package. Most compile against rxjs and nothing else: none of the optional
 * peers (broker clients, OpenTelemetry, prom-client) and no `@types/node` (a bundled service, a Deno or Bun
 * project, a library that keeps Node's types out). Our declarations must compile for them, strict and with
 * `skipLibCheck` off, with declaration emit of values our functions return, on TypeScript 7 and 5.9 and
 * under every module resolution both offer (TypeScript 7 has no node10): what we hand over is typed by
 * shape (`Uint8Array`, not `Buffer`), never through Node's types. Timers in rxjs's own types come from the
 * DOM library, the default.
 */

/** The main entry, thread lanes and runtime included. */
const MAIN = `
import {
  DispatchMetrics,
  type DispatchRuntime,
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  retryPolicy,
  ThreadExecutor,
  type ThreadHandler,
  threadHandler,
  transfer,
} from 'keyed-dispatch';

export const dispatch = keyedDispatch({ key: (n: number) => n % 2, handle: (n) => [n], failurePolicy: retryPolicy<number, number>() });
export const source = fromIterable([1, 2, 3]);
export const executor = new ThreadExecutor({ workers: 2, resourceLimits: { maxOldGenerationSizeMb: 64 } });
export const handle = threadHandler<{ id: string; body: ArrayBuffer }, number>('./price.js', 'price', {
  transfer: (m) => [m.body],
});
export const marked = transfer({ done: true }, [new ArrayBuffer(8)]);
// @ts-expect-error a typed array does not move to a thread, its buffer does
export const wrong = transfer({ done: true }, [new Uint8Array(8)]);
export const metrics = new DispatchMetrics();
export const lanes = new KeyedExecutor({ lanes: 2 }).lanes;
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

/** Every subpath but Kafka's. */
const SUBPATHS = `
import { serveDashboard } from 'keyed-dispatch/dashboard';
import { fromJetStream, type JetStreamConsumer } from 'keyed-dispatch/nats';
import { exportToOpenTelemetry } from 'keyed-dispatch/otel';
import { exportToPrometheus } from 'keyed-dispatch/prometheus';
import { fromRedisStreams, type RedisClient } from 'keyed-dispatch/redis';

declare const consumer: JetStreamConsumer;
declare const redis: RedisClient;

export const jetStream = fromJetStream({ consumer });
export const streams = fromRedisStreams({ redis, streams: ['orders'], group: 'g', consumerName: 'c' });
export const dashboard = serveDashboard;
export const exporters = [exportToOpenTelemetry, exportToPrometheus];
`;

/** The Kafka subpath: records in, records out, read and written as bytes without Node's \`Buffer\`. */
const KAFKA = `
import { keyedDispatch, retryPolicy } from 'keyed-dispatch';
import {
  deadLetterToTopic,
  fromKafka,
  type KafkaBytes,
  type KafkaJsProducer,
  type KafkaJsConsumer,
  type KafkaMessage,
  type KafkaRecord,
  kafkaKey,
  keyedProducer,
} from 'keyed-dispatch/kafka';

declare const consumer: KafkaJsConsumer;
declare const producer: KafkaJsProducer;

const text = new TextDecoder();
export const orders = fromKafka({ consumer, topics: ['orders'] });
export const billed = orders.pipe(
  keyedDispatch({
    key: kafkaKey,
    handle: (m: KafkaMessage) => [m.value === null ? '' : text.decode(m.value), m.key?.toString('utf8')],
  }),
);
// What a record hands over reads as text the way Node's Buffer does, and any Uint8Array stands in for it.
export const trace = (m: KafkaMessage): string | undefined => {
  const header = m.headers.trace;
  return header === undefined || Array.isArray(header) ? undefined : header.toString('utf8');
};
export const record: KafkaRecord = { offset: '0', key: new TextEncoder().encode('k'), value: null, timestamp: '0' };
export const bytes: KafkaBytes = new Uint8Array(0);
export const out = keyedProducer(producer, {
  topic: 'billed',
  key: (m: { id: string }) => m.id,
  value: (m) => new TextEncoder().encode(m.id),
  headers: () => ({ trace: new Uint8Array([1]), hops: [new Uint8Array([2]), 'b'] }),
});
export const explicit = keyedProducer<{ id: string }>(producer, { topic: 'billed', key: (m) => m.id });
export const parked = orders.pipe(
  keyedDispatch({
    key: kafkaKey,
    handle: (m: KafkaMessage) => [m.offset],
    failurePolicy: retryPolicy({ maxAttempts: 2, deadLetter: deadLetterToTopic(producer, 'orders.dlt') }),
  }),
);
`;

/**
 * The Kafka subpath with the clients it describes by shape, in a project that has Node's types (as every
 * kafkajs or @platformatic/kafka user has): their own consumers and producer must fit.
 */
const KAFKA_CLIENTS = `
import { Consumer, Producer } from '@platformatic/kafka';
import { Kafka } from 'kafkajs';
import {
  deadLetterToTopic,
  fromKafka,
  fromPlatformaticKafka,
  kafkajsAdapter,
  keyedProducer,
  platformaticAdapter,
} from 'keyed-dispatch/kafka';
import { map } from 'rxjs';

const kafka = new Kafka({ brokers: ['127.0.0.1:9092'] });
export const kafkajs = fromKafka({ consumer: kafka.consumer({ groupId: 'g' }), admin: kafka.admin(), topics: ['t'] });
export const kafkajsClient = fromKafka({ kafka, group: { groupId: 'g', sessionTimeout: 10_000 }, topics: ['t'] });
export const kafkajsOwn = kafkajsAdapter(kafka.consumer({ groupId: 'g' }), { topics: ['t'] });
export const producer = keyedProducer(kafka.producer(), {
  topic: 't',
  key: (m: { id: string }) => m.id,
  value: (m) => Buffer.from(m.id),
  headers: () => ({ trace: Buffer.from('x'), hops: [Buffer.from('a'), 'b'] }),
});
export const typedArrays = keyedProducer<{ id: string }>(kafka.producer(), {
  topic: 't',
  key: (m) => m.id,
  value: (m) => new TextEncoder().encode(m.id),
  headers: () => ({ trace: new Uint8Array([1]) }),
});
// What the receivers hand over is Node's Buffer at run time; a project with Node's types may say so.
export const read = kafkajs.pipe(map((m) => (m.value === null ? null : Buffer.from(m.value))));
const consumer = new Consumer({ clientId: 'c', bootstrapBrokers: ['127.0.0.1:9092'], groupId: 'g' });
export const platformatic = fromPlatformaticKafka({ consumer, topics: ['t'] });
export const platformaticOwn = platformaticAdapter(consumer, { topics: ['t'] });
const platformaticProducer = new Producer({ clientId: 'p', bootstrapBrokers: ['127.0.0.1:9092'] });
export const platformaticKeyed = keyedProducer(platformaticProducer, { topic: 't', key: (m: { id: string }) => m.id });
export const deadLetters = [deadLetterToTopic(platformaticProducer, 'dlt'), deadLetterToTopic(kafka.producer(), 'dlt')];
`;

const COMPILERS = [
  { compiler: 'TypeScript 7', tsc: join(ROOT, 'node_modules', 'typescript-7', 'bin', 'tsc') },
  { compiler: 'TypeScript 5.9', tsc: join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc') },
];

// ESM projects find the `.d.mts` declarations through the `import` condition, CommonJS ones the `.d.ts`
// through `require`; `attw --pack` in CI checks the same for every resolution.
const MODES = [
  { mode: 'node16, ESM project', module: 'node16', moduleResolution: 'node16', type: 'module' },
  { mode: 'node16, CommonJS project', module: 'node16', moduleResolution: 'node16', type: 'commonjs' },
  { mode: 'nodenext, ESM project', module: 'nodenext', moduleResolution: 'nodenext', type: 'module' },
  { mode: 'nodenext, CommonJS project', module: 'nodenext', moduleResolution: 'nodenext', type: 'commonjs' },
  { mode: 'bundler', module: 'esnext', moduleResolution: 'bundler', type: 'module' },
];

/**
 * What a runtime that is neither Node nor a browser (Deno, Bun, a worker platform) declares itself for a
 * project on the ECMAScript library alone: rxjs's own types name `setTimeout`, and the Kafka consumer's
 * code above decodes bytes with `TextDecoder`. Nothing of ours may need more.
 */
const HOST_GLOBALS = `
declare function setTimeout(handler: () => void, ms?: number): number;
declare class TextEncoder {
  encode(text?: string): Uint8Array;
}
declare class TextDecoder {
  decode(bytes?: Uint8Array): string;
}
`;

/** A consumer project: its files, its package type and compiler options, and what it installed besides rxjs. */
interface Consumer {
  files: Record<string, string>;
  type: string;
  module: string;
  moduleResolution: string;
  /** The `lib` option; TypeScript's default (the target's library with the DOM's) when absent. */
  lib?: string[];
  types: string[];
  skipLibCheck: boolean;
  installed: string[];
}

/** What each consumer without Node types imports; Kafka's subpath in a consumer of its own, so each fails alone. */
const IMPORTS: Array<{ entries: string; files: Record<string, string> }> = [
  { entries: 'the main entry and every other subpath', files: { 'main.ts': MAIN, 'subpaths.ts': SUBPATHS } },
  { entries: 'the Kafka subpath', files: { 'kafka.ts': KAFKA } },
];
const WITHOUT_NODE_CASES = COMPILERS.flatMap((compiler) =>
  MODES.flatMap((mode) =>
    IMPORTS.map((imports) => ({
      ...compiler,
      ...mode,
      ...imports,
      types: [],
      skipLibCheck: false,
      installed: [],
    })),
  ),
);

// ECMAScript's library alone, without the DOM's (no `URL`) nor Node's: every entry at once, its ESM
// declarations with one compiler and its CommonJS ones with the other (each consumer costs CI seconds).
const ES_ONLY_CASES = COMPILERS.map((compiler, i) => ({
  ...compiler,
  ...MODES[2 + i],
  entries: 'every entry',
  files: { 'main.ts': MAIN, 'subpaths.ts': SUBPATHS, 'kafka.ts': KAFKA, 'host-globals.d.ts': HOST_GLOBALS },
  lib: ['es2024'],
  types: [],
  skipLibCheck: false,
  installed: [],
}));

// Nodenext ESM: @platformatic/kafka is an ES module only. The clients' own declarations are theirs to
// check (they need more than Node's types), so `skipLibCheck` is on.
const CLIENT_CASES = COMPILERS.map((compiler) => ({
  ...compiler,
  ...MODES[2],
  files: { 'kafka-clients.ts': KAFKA_CLIENTS },
  types: ['node'],
  skipLibCheck: true,
  installed: ['@types/node', 'kafkajs', '@platformatic/kafka'],
}));

/** Every consumer, each in a folder of its own. */
const FOLDERS = new Map<object, string>(
  [...WITHOUT_NODE_CASES, ...ES_ONLY_CASES, ...CLIENT_CASES].map((consumer, i) => [
    consumer,
    `consumer-${i}`,
  ]),
);

/** What tsc reported for one consumer (nothing when it compiles), and the files its program read. */
interface Compiled {
  errors: string;
  read: string[];
}

// What `tsc --build --verbose` says about its progress (and the list of projects it starts with), as
// opposed to a diagnostic.
const PROGRESS = / - (Projects in this build|Project '|Building project '|Updating )|^ +\* /;

describe('the packed package, used from TypeScript', () => {
  let project: ReturnType<typeof consumerProject>;
  beforeAll(() => {
    project = consumerProject(['rxjs']);
  }, 240_000);
  afterAll(() => project?.remove());

  /**
   * Each compiler checks all its consumers in one `tsc --build`, started on first use: one process instead
   * of one per consumer saves most of the time (TypeScript 5.9 takes about 2 s to start), and each consumer
   * is still a program of its own, with its package type, tsconfig and modules.
   */
  const builds = new Map<string, Promise<Map<string, Compiled>>>();
  function build(tsc: string): Promise<Map<string, Compiled>> {
    let built = builds.get(tsc);
    if (built === undefined) {
      built = buildAll(
        tsc,
        [...WITHOUT_NODE_CASES, ...ES_ONLY_CASES, ...CLIENT_CASES].filter((consumer) => consumer.tsc === tsc),
      );
      builds.set(tsc, built);
    }
    return built;
  }

  async function buildAll(tsc: string, consumers: Array<Consumer & { tsc: string }>) {
    const folders = consumers.map((consumer) => {
      const folder = FOLDERS.get(consumer) as string;
      const dir = join(project.dir, folder);
      mkdirSync(dir);
      linkModules(dir, consumer.installed);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: consumer.type }));
      for (const [file, source] of Object.entries(consumer.files)) writeFileSync(join(dir, file), source);
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: consumer.module,
            moduleResolution: consumer.moduleResolution,
            target: 'es2022',
            lib: consumer.lib,
            strict: true,
            skipLibCheck: consumer.skipLibCheck,
            declaration: true,
            emitDeclarationOnly: true,
            outDir: 'out',
            types: consumer.types,
          },
          files: Object.keys(consumer.files),
        }),
      );
      return folder;
    });
    // `--verbose` heads each consumer's output with "Building project '…consumer-N/tsconfig.json'";
    // TypeScript 7 builds projects in parallel, mixing their outputs, unless it runs single-threaded.
    const oneByOne = tsc.includes('typescript-7') ? ['--singleThreaded'] : [];
    const output = await run(
      process.execPath,
      [tsc, '-b', ...folders, '--verbose', '--listFiles', ...oneByOne],
      {
        cwd: project.dir,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    ).then(
      ({ stdout }) => stdout,
      (err: { stdout?: string }) => String(err.stdout ?? err),
    );
    const lines = new Map<string, string[]>();
    // What it printed before building any consumer (a tsconfig it could not read, say).
    const before: string[] = [];
    let current = before;
    for (const line of output.split('\n')) {
      const heading = /Building project '(?:.*[\\/])?(consumer-\d+)[\\/]tsconfig\.json'/.exec(line);
      if (heading !== null) lines.set(heading[1] as string, (current = []));
      else if (line !== '' && !PROGRESS.test(line)) current.push(line);
    }
    if (before.length > 0) throw new Error(`tsc --build: ${before.join('\n')}`);
    return new Map(
      [...lines].map(([folder, own]): [string, Compiled] => [
        folder,
        {
          errors: own.filter((line) => !isAbsolute(line)).join('\n'),
          read: own.filter((line) => isAbsolute(line)),
        },
      ]),
    );
  }

  /** What tsc reported for the consumer (nothing when it compiles), and the files its program read. */
  async function compile(consumer: Consumer & { tsc: string }): Promise<Compiled> {
    const folder = FOLDERS.get(consumer) as string;
    const compiled = (await build(consumer.tsc)).get(folder);
    if (compiled === undefined) throw new Error(`tsc --build did not build ${folder}`);
    return compiled;
  }

  describe('without Node types and without the optional peers', () => {
    it('has no Node types installed', () => {
      expect(existsSync(join(project.dir, 'node_modules', '@types'))).toBe(false);
    });

    it.each(WITHOUT_NODE_CASES)(
      '$entries type-checks and emits declarations with $compiler under $mode resolution',
      async (consumer) => {
        const { errors, read } = await compile(consumer);
        expect(errors).toBe('');
        expect(read.filter((file) => /[\\/]@types[\\/]/.test(file))).toEqual([]);
        expect(read.some((file) => file.includes(join('keyed-dispatch', 'dist')))).toBe(true);
      },
      120_000,
    );
  });

  it.each(ES_ONLY_CASES)(
    '$entries type-checks on the ECMAScript library alone, without the DOM and Node types, with $compiler under $mode resolution',
    async (consumer) => {
      const { errors, read } = await compile(consumer);
      expect(errors).toBe('');
      expect(read.filter((file) => /[\\/]lib\.dom[.\w]*\.d\.ts$|[\\/]@types[\\/]/.test(file))).toEqual([]);
    },
    120_000,
  );

  it.each(CLIENT_CASES)(
    "the Kafka subpath takes kafkajs's and @platformatic/kafka's own clients with $compiler",
    async (consumer) => {
      expect((await compile(consumer)).errors).toBe('');
    },
    120_000,
  );
});
