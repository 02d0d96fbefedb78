// Batch handlers of batch-revoke.spec.ts. Plain CommonJS: the spec requires it for event-loop lanes, and
// each worker thread imports it for thread lanes.
const { existsSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/**
 * While this file exists, `blocks` holds the first batch of each run of its thread. The file is the
 * signal because the spec's process and its threads share nothing else: the messages are Kafka records.
 */
const HOLD = join(tmpdir(), `batch-revoke-hold-${process.pid}`);
exports.HOLD = HOLD;
const text = new TextDecoder();

/** When the call started, and each record's partition, offset, record key and number within its key. */
function describeBatch(batch, started) {
  return {
    started,
    records: batch.map((m) => {
      const { key, seq } = JSON.parse(text.decode(m.value));
      return { partition: m.partition, offset: Number(m.offset), key, seq };
    }),
  };
}

/**
 * A slow bulk store (100 ms a batch) that waits without holding its lane: the other keys' batches run
 * meanwhile.
 */
exports.waits = async (batch) => {
  const started = Date.now(); // the wall clock: the spec compares it across threads
  await new Promise((resolve) => setTimeout(resolve, 100));
  return describeBatch(batch, started);
};

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** A run of batches is under way on this thread: they run back to back, in one turn of its event loop. */
let running = false;

/**
 * A slow bulk store (25 ms a batch) that keeps its thread busy: the other keys' batches posted to the
 * thread wait behind it, handed over and not started. The first batch of a run waits while `HOLD`
 * exists (up to 10 s), so the batches posted with it are sure to wait behind it.
 */
exports.blocks = (batch) => {
  const started = Date.now(); // the wall clock: the spec compares it across threads
  if (!running) {
    running = true;
    setImmediate(() => {
      running = false;
    });
    while (existsSync(HOLD) && Date.now() - started < 10_000) sleep(2);
  }
  sleep(25);
  return [describeBatch(batch, started)];
};
