import { join } from 'node:path';
import { type KeyedDispatchOptions, KeyedExecutor, ThreadExecutor, threadHandler } from 'keyed-dispatch';

/** The fixture module every lane spec runs its handlers from, on either kind of lane. */
export const FIXTURES = join(__dirname, '..', 'fixtures', 'lane-handlers.js');

/** What a message carries in the lane specs; handlers read what they need. */
export interface Msg {
  key: string;
  n: number;
  [field: string]: unknown;
}

/** What the fixture handlers emit: where a message ran. */
export interface Ran {
  key: string;
  n: number;
  lane: number;
  thread: number;
  op?: string;
}

/** One kind of lane: how to make its executor and how to name a fixture handler for it. */
export interface LaneKind {
  readonly name: string;
  /** True for thread lanes (worker threads), false for event-loop lanes. */
  readonly threads: boolean;
  /** The executor class name, as errors name it. */
  readonly executorName: 'KeyedExecutor' | 'ThreadExecutor';
  executor(lanes: number): { executor: KeyedExecutor | ThreadExecutor; close(): Promise<void> };
  handler(exportName: string): KeyedDispatchOptions<Msg, string, Ran>['handle'];
}

const eventLoop: LaneKind = {
  name: 'event-loop lanes',
  threads: false,
  executorName: 'KeyedExecutor',
  executor(lanes) {
    const executor = new KeyedExecutor({ lanes });
    return { executor, close: () => executor.close() };
  },
  handler(exportName) {
    return require(FIXTURES)[exportName];
  },
};

const threads: LaneKind = {
  name: 'thread lanes',
  threads: true,
  executorName: 'ThreadExecutor',
  executor(lanes) {
    const executor = new ThreadExecutor({ workers: lanes });
    return { executor, close: () => executor.close() };
  },
  handler(exportName) {
    return threadHandler<Msg, Ran>(FIXTURES, exportName);
  },
};

export const laneKinds: Array<[string, LaneKind]> = [
  [eventLoop.name, eventLoop],
  [threads.name, threads],
];

/** The values per key, in emission order. */
export function byKey(values: Ran[]): Map<string, Ran[]> {
  const out = new Map<string, Ran[]>();
  for (const v of values) {
    const list = out.get(v.key) ?? [];
    list.push(v);
    out.set(v.key, list);
  }
  return out;
}
