import { join } from 'node:path';
import {
  type KeyedBatchDispatchOptions,
  KeyedExecutor,
  type Settlement,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';

/** The module of the batch handlers, on either kind of lane. */
export const BATCH_HANDLERS = join(__dirname, 'batch-handlers.js');

/**
 * What the batch handlers write, in shared memory (a `SharedArrayBuffer` stays shared when a message
 * carrying it is cloned to a thread): every call with its messages, when it started and ended, each
 * message's runs, and a gate that holds the handlers of messages that ask for it.
 */
export class Journal {
  readonly calls = new Int32Array(new SharedArrayBuffer(4));
  readonly log = new Int32Array(new SharedArrayBuffer(4 * 65_536));
  readonly times = new Float64Array(new SharedArrayBuffer(8 * 16_384));
  readonly runs = new Int32Array(new SharedArrayBuffer(4 * 4096));
  readonly gate = new Int32Array(new SharedArrayBuffer(4));

  /** The handler calls so far, in the order they started: the ids of each one's messages and its times. */
  batches(): Array<{ ids: number[]; start: number; end: number }> {
    const out: Array<{ ids: number[]; start: number; end: number }> = [];
    const used = Atomics.load(this.log, 0);
    for (let at = 1; at < 1 + used; ) {
      const call = this.log[at] as number;
      const length = this.log[at + 1] as number;
      const ids = Array.from(this.log.subarray(at + 2, at + 2 + length));
      out[call] = { ids, start: this.times[2 * call] as number, end: this.times[2 * call + 1] as number };
      at += 2 + length;
    }
    return out;
  }

  /** The ids of each call's messages, in the order the calls started. */
  ids(): number[][] {
    return this.batches().map((b) => b.ids);
  }

  /** Lets the handlers waiting at the gate go on, and those to come pass. */
  open(): void {
    Atomics.store(this.gate, 0, 1);
  }
}

/** A message of the batch specs; the handlers read the fields they need. */
export interface Item {
  key: string;
  id: number;
  journal: Journal;
  ms?: number;
  gate?: boolean;
  poison?: boolean;
  failRuns?: number;
  exitOn?: number;
  /** How the `mangle` handler treats its array (see batch-handlers.js). */
  mangle?: 'shift' | 'push' | 'reverse' | 'later';
  exitFrom?: number;
}

/** What the batch handlers emit: one value per call. */
export interface Stored {
  key: string;
  ids: number[];
  lane: number;
  thread: number;
}

/** `count` messages of `key`, ids from `from`, with `extra` fields. */
export function items(journal: Journal, key: string, from: number, count: number, extra: Partial<Item> = {}) {
  return Array.from({ length: count }, (_, i): Item => ({ key, id: from + i, journal, ...extra }));
}

/** One kind of lane for batches: its executor and a batch handler of the fixture module for it. */
export interface BatchLaneKind {
  readonly name: string;
  readonly threads: boolean;
  executor(lanes: number): { executor: KeyedExecutor | ThreadExecutor; close(): Promise<void> };
  handler(
    exportName: 'store' | 'storeNow' | 'emitThenFail' | 'nothing' | 'uncloneableThenWait' | 'mangle',
  ): KeyedBatchDispatchOptions<Item, string, Stored>['handle'];
}

export const batchLaneKinds: Array<[string, BatchLaneKind]> = [
  [
    'event-loop lanes',
    {
      name: 'event-loop lanes',
      threads: false,
      executor(lanes) {
        const executor = new KeyedExecutor({ lanes });
        return { executor, close: () => executor.close() };
      },
      handler(exportName) {
        return require(BATCH_HANDLERS)[exportName];
      },
    },
  ],
  [
    'thread lanes',
    {
      name: 'thread lanes',
      threads: true,
      executor(lanes) {
        const executor = new ThreadExecutor({ workers: lanes });
        return { executor, close: () => executor.close() };
      },
      handler(exportName) {
        return threadHandler<Item[], Stored>(BATCH_HANDLERS, exportName);
      },
    },
  ],
];

/** Each spec of the enclosing block gets one lane of `kind` (closed after it) and a fresh journal. */
export function onOneLane(kind: BatchLaneKind): {
  readonly executor: KeyedExecutor | ThreadExecutor;
  readonly journal: Journal;
} {
  let lanes: ReturnType<BatchLaneKind['executor']>;
  let journal: Journal;
  beforeEach(() => {
    lanes = kind.executor(1);
    journal = new Journal();
  });
  afterEach(() => lanes.close());
  return {
    get executor() {
      return lanes.executor;
    },
    get journal() {
      return journal;
    },
  };
}

/** Settlements as `id outcome`, in the order the receiver was told. */
export function settlementLog(): { log: string[]; onSettled: (m: Item, outcome: Settlement) => void } {
  const log: string[] = [];
  return { log, onSettled: (m, outcome) => log.push(`${m.id} ${outcome}`) };
}
