// Batch handlers for the batch specs, on either kind of lane. Plain CommonJS: the specs require it for
// event-loop lanes, and each worker thread imports it for thread lanes.
const { threadId } = require('node:worker_threads');

/**
 * Writes the call into the journal every message carries (`m.journal`, shared memory the spec reads, see
 * journal.ts): its number, when it started, and the ids of its messages.
 */
function record(batch) {
  const { calls, log, times } = batch[0].journal;
  const call = Atomics.add(calls, 0, 1);
  const at = 1 + Atomics.add(log, 0, 2 + batch.length);
  log[at] = call;
  log[at + 1] = batch.length;
  batch.forEach((m, i) => {
    log[at + 2 + i] = m.id;
  });
  times[2 * call] = performance.timeOrigin + performance.now();
  return call;
}

/** Counts one more run of each message of the batch; returns each one's runs so far. */
function countRuns(batch) {
  const { runs } = batch[0].journal;
  return batch.map((m) => Atomics.add(runs, m.id, 1) + 1);
}

function waitForGate(gate) {
  return new Promise((resolve) => {
    const poll = () => (Atomics.load(gate, 0) === 1 ? resolve() : setTimeout(poll, 1));
    poll();
  });
}

/**
 * A bulk store: one call for the whole batch. It waits for the journal's gate to open when the batch's
 * first message asks (`gate: true`), then `ms` (the first message's, default 0). It fails when a message
 * of the batch is `poison`, or while a message has run fewer than its `failRuns` times; otherwise it emits
 * one value for the batch: its key, its ids, and where it ran.
 */
exports.store = async (batch, ctx) => {
  const call = record(batch);
  const runs = countRuns(batch);
  const first = batch[0];
  if (first.gate) await waitForGate(first.journal.gate);
  if (first.ms) await new Promise((resolve) => setTimeout(resolve, first.ms));
  first.journal.times[2 * call + 1] = performance.timeOrigin + performance.now();
  const poison = batch.find((m) => m.poison);
  if (poison) throw new Error(`poison message ${poison.id}`);
  const failing = batch.findIndex((m, i) => runs[i] <= (m.failRuns ?? 0));
  if (failing >= 0) throw new Error(`run ${runs[failing]} of message ${batch[failing].id} failed`);
  return { key: first.key, ids: batch.map((m) => m.id), lane: ctx.laneIndex, thread: threadId };
};

/** The same bulk store, synchronous: returns its value at once (an array of one value). */
exports.storeNow = (batch, ctx) => {
  const call = record(batch);
  batch[0].journal.times[2 * call + 1] = performance.timeOrigin + performance.now();
  return [{ key: batch[0].key, ids: batch.map((m) => m.id), lane: ctx.laneIndex, thread: threadId }];
};

/**
 * The bulk store, except that it first emits a value for the batch and then fails when a message of
 * the batch is `poison` or has run no more than its `failRuns` times (after `ms`, the first message's);
 * and a message's run numbered its `exitOn` (runs counted per message, as `store` does), or any from
 * its `exitFrom` on, takes its thread down.
 */
exports.emitThenFail = (batch, ctx) => {
  const { Observable } = require('rxjs');
  record(batch);
  const runs = countRuns(batch);
  return new Observable((subscriber) => {
    subscriber.next({
      key: batch[0].key,
      ids: batch.map((m) => m.id),
      lane: ctx.laneIndex,
      thread: threadId,
    });
    const timer = setTimeout(() => {
      if (batch.some((m, i) => m.exitOn === runs[i] || runs[i] >= (m.exitFrom ?? Number.POSITIVE_INFINITY)))
        process.exit(3);
      const poison = batch.find((m, i) => m.poison || runs[i] <= (m.failRuns ?? 0));
      if (poison) subscriber.error(new Error(`poison message ${poison.id}`));
      else subscriber.complete();
    }, batch[0].ms ?? 0);
    return () => clearTimeout(timer);
  });
};

/** A handler that forgets to return anything. */
exports.nothing = (batch) => {
  record(batch);
};

/**
 * A batch handler that emits, at once, a value that cannot be cloned to the main thread, then completes
 * after `ms` (the first message's). It counts its runs going on in `runs[ACTIVE]`, and records in
 * `runs[OVERLAP]` the most that were ever going on together, when more than one.
 */
exports.uncloneableThenWait = (batch) => {
  const { Observable } = require('rxjs');
  record(batch);
  const { runs } = batch[0].journal;
  return new Observable((subscriber) => {
    const active = Atomics.add(runs, exports.ACTIVE, 1) + 1;
    if (active > 1) Atomics.store(runs, exports.OVERLAP, active);
    subscriber.next({ call: () => 0 });
    const timer = setTimeout(() => subscriber.complete(), batch[0].ms ?? 0);
    return () => {
      clearTimeout(timer);
      Atomics.sub(runs, exports.ACTIVE, 1);
    };
  });
};
exports.ACTIVE = 4000;
exports.OVERLAP = 4001;

/**
 * The bulk store of a handler that treats its array as its own, as `batch.mangle` (the first message's)
 * says: `'shift'` consumes it (`while (batch.length) batch.shift()`), `'push'` appends a message of its
 * own, `'reverse'` sorts it backwards, `'later'` keeps it and empties it from a timer while it runs. It reads
 * the ids first, then mangles, then fails as `store` does (a poison message, or fewer runs than `failRuns`).
 */
exports.mangle = async (batch, ctx) => {
  record(batch);
  const runs = countRuns(batch);
  const { key, mangle } = batch[0];
  const ids = batch.map((m) => m.id);
  const poison = batch.find((m) => m.poison);
  const failing = batch.findIndex((m, i) => runs[i] <= (m.failRuns ?? 0));
  if (mangle === 'shift') while (batch.length) batch.shift();
  else if (mangle === 'push') batch.push({ ...batch[0], id: 999 });
  else if (mangle === 'reverse') batch.sort((a, b) => b.id - a.id);
  else if (mangle === 'later') setTimeout(() => batch.splice(0));
  await new Promise((resolve) => setTimeout(resolve, 1));
  if (poison) throw new Error(`poison message ${poison.id}`);
  if (failing >= 0) throw new Error(`run ${runs[failing]} of message ${ids[failing]} failed`);
  return { key, ids, lane: ctx.laneIndex, thread: threadId };
};
