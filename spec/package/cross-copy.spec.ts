import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureBuilt, ROOT } from './packed';

/**
 * A program can load the package twice: its CommonJS build from one dependency, its ESM build from
 * another. Objects made by one copy must work with the other, and every subpath must share its format's
 * copy of the core. Runs the built package in a child process (Jest cannot import ESM here).
 */
const PROGRAM = `
import { createRequire } from 'node:module';
import { lastValueFrom, toArray } from 'rxjs';
const require = createRequire(import.meta.url);
const cjs = require('./dist/index.js');
const cjsKafka = require('./dist/kafka/index.js');
const cjsRedis = require('./dist/redis/index.js');
const esm = await import('./dist/index.mjs');
const esmKafka = await import('./dist/kafka/index.mjs');
const handlers = ${JSON.stringify(join(ROOT, 'spec', 'fixtures', 'lane-handlers.js'))};

const result = {
  kafkaReceiverIsReceiverInCjs: cjsKafka.KafkaReceiver.prototype instanceof cjs.Receiver,
  kafkaReceiverIsReceiverInEsm: esmKafka.KafkaReceiver.prototype instanceof esm.Receiver,
  subpathSharesCoreInCjs: cjsRedis.Receiver === cjs.Receiver,
  esmReceiverIsCjsReceiver: esm.fromIterable([1]) instanceof cjs.Receiver,
  cjsReceiverIsEsmReceiver: cjs.fromIterable([1]) instanceof esm.Receiver,
  plainObservableIsNoReceiver: new (require('rxjs').Observable)(() => {}) instanceof esm.Receiver,
  bareProtocolObjectIsNoReceiver:
    { [esm.openReceiver]: () => null, acknowledgeOnReceipt: () => null } instanceof esm.Receiver,
};

// A CommonJS policy gives up inside an ESM dispatcher: the message settles as failed, the stream goes on.
result.crossPolicyValues = await lastValueFrom(
  esm.fromIterable([1, 2, 3]).pipe(
    esm.keyedDispatch({
      key: (n) => n,
      handle: (n) => { if (n === 2) throw new Error('bad message'); return [n]; },
      failurePolicy: cjs.retryPolicy({ maxAttempts: 1 }),
    }),
    toArray(),
  ),
);

// A CommonJS thread executor runs an ESM dispatcher's thread handler.
const executor = new cjs.ThreadExecutor({ workers: 1 });
try {
  const ran = await lastValueFrom(
    esm.fromIterable([{ key: 'a', n: 1 }, { key: 'b', n: 2 }]).pipe(
      esm.keyedDispatch({ key: (m) => m.key, handle: esm.threadHandler(handlers, 'echo'), executor }),
      toArray(),
    ),
  );
  result.crossThreadValues = ran.map((r) => r.n).sort();
} finally {
  await executor.close();
}
// A CommonJS event-loop executor runs an ESM dispatcher, also one a runtime starts; a CommonJS
// DispatchMetrics counts an ESM dispatcher, lanes included, and an ESM DispatchStats a CommonJS one.
const lanes = new cjs.KeyedExecutor({ lanes: 2 });
const metrics = new cjs.DispatchMetrics();
result.crossExecutorValues = (await lastValueFrom(
  esm.fromIterable([1, 2, 3, 4]).pipe(
    esm.keyedDispatch({ key: (n) => n % 2, handle: (n) => [n * 10], executor: lanes, stats: metrics }),
    toArray(),
  ),
)).sort((a, b) => a - b);
// The order of starts, as one copy alone gives it: a synchronous source's first admission batch is
// taken in whole before any lane runs, so the lanes then take turns across keys.
const startOrder = async (lib, executor) => {
  const started = [];
  await lastValueFrom(
    lib.fromIterable([1, 2, 3, 4, 5, 6]).pipe(
      lib.keyedDispatch({ key: (n) => n % 2, handle: (n) => { started.push(n); return [n]; }, executor }),
      toArray(),
    ),
  );
  return started.join(' ');
};
result.startOrderOneCopy = await startOrder(cjs, new cjs.KeyedExecutor({ lanes: 2 }));
result.startOrderMixed = await startOrder(esm, lanes);
const snapshot = metrics.read();
result.crossMetrics = { settled: snapshot.settled, lanes: snapshot.lanes.length };
const stats = new esm.DispatchStats();
await lastValueFrom(cjs.fromIterable([1, 2, 3]).pipe(cjs.keyedDispatch({ key: (n) => n, handle: (n) => [n], stats })));
result.crossStatsSettled = stats.snapshot().settled;
const runtimeValues = [];
const runtime = new esm.DispatchRuntime({
  executor: lanes,
  components: [{
    name: 'doubler',
    source: esm.fromIterable([5, 6]),
    dispatch: { key: (n) => n, handle: (n) => [n * 2] },
    output: { next: (v) => runtimeValues.push(v) },
  }],
});
await runtime.start();
await runtime.stopGracefully({ timeoutMs: 5000 });
result.crossRuntimeValues = runtimeValues.sort();
console.log(JSON.stringify(result));
`;

describe('two copies of the package (CommonJS and ESM) in one program', () => {
  let result: Record<string, unknown>;
  beforeAll(() => {
    ensureBuilt();
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', PROGRAM], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    result = JSON.parse(output.trim().split('\n').pop() as string);
  }, 240_000);

  it('shares one copy of the core between the subpaths of a format', () => {
    expect(result.subpathSharesCoreInCjs).toBe(true);
    expect(result.kafkaReceiverIsReceiverInCjs).toBe(true);
    expect(result.kafkaReceiverIsReceiverInEsm).toBe(true);
  });

  it("tells the other copy's receivers as receivers, and neither a plain Observable nor a bare object with the protocol method", () => {
    expect(result.esmReceiverIsCjsReceiver).toBe(true);
    expect(result.cjsReceiverIsEsmReceiver).toBe(true);
    expect(result.plainObservableIsNoReceiver).toBe(false);
    expect(result.bareProtocolObjectIsNoReceiver).toBe(false);
  });

  it("applies the other copy's failure policy: a message it gives up on settles failed, the rest go on", () => {
    expect(result.crossPolicyValues).toEqual([1, 3]);
  });

  it("runs a thread handler on the other copy's thread executor", () => {
    expect(result.crossThreadValues).toEqual([1, 2]);
  });

  it("runs a dispatcher on the other copy's KeyedExecutor, for keyedDispatch and for a runtime", () => {
    expect(result.crossExecutorValues).toEqual([10, 20, 30, 40]);
    expect(result.crossRuntimeValues).toEqual([10, 12]);
    // The admission batch holds the other copy's lanes too: keys take turns as with one copy.
    expect(result.startOrderMixed).toBe(result.startOrderOneCopy);
  });

  it("counts into the other copy's DispatchStats and DispatchMetrics, lanes included", () => {
    expect(result.crossMetrics).toEqual({ settled: 4, lanes: 2 });
    expect(result.crossStatsSettled).toBe(3);
  });
});
