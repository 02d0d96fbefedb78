import { NOTHING, openReceiver, PullSession, Receiver, type ReceiverSink } from '../src';
import { promiseChain } from './baselines/promise-chain';

/** Open-loop arrival schedules for latency benchmarks: messages arrive on time, whether or not the pattern keeps up. */

/** A deterministic random number generator (mulberry32), so every contender gets the same schedule. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The `p`th percentile (0–100) of sorted values: the smallest value at or above that share of them. */
export function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Paces arrivals: on every event-loop turn (`setImmediate`), message i is due once i / perMs ms have
 * passed since `start` (all at once when perMs is Infinity); `arrive` is told the count due whenever it
 * grows, until all `count` have arrived or `stopped` returns true.
 */
export function paceArrivals(
  count: number,
  perMs: number,
  start: number,
  arrive: (due: number) => void,
  stopped: () => boolean,
): void {
  let arrived = 0;
  const tick = () => {
    if (stopped()) return;
    const due = Number.isFinite(perMs)
      ? Math.min(count, Math.floor((performance.now() - start) * perMs) + 1)
      : count;
    if (due > arrived) {
      arrived = due;
      arrive(due);
    }
    if (arrived < count) setImmediate(tick);
  };
  tick();
}

/**
 * A pulled session over a schedule, as a broker's log is: messages that have arrived wait in it until
 * keyedDispatch asks for them, so the window backpressures the source.
 */
export class ScheduleSession<T> extends PullSession<T> {
  taken = 0;
  private arrived = 0;

  constructor(
    private readonly input: readonly T[],
    sink: ReceiverSink<T>,
  ) {
    super(sink);
  }

  arrive(count: number): void {
    this.arrived = count;
    this.drain();
  }

  protected override take(): T | typeof NOTHING {
    return this.taken < this.arrived ? this.input[this.taken++] : NOTHING;
  }
}

/** The receiver of one run over a schedule: keyedDispatch opens one session on it. */
export class ScheduleReceiver<T> extends Receiver<T> {
  session: ScheduleSession<T> | undefined;

  constructor(private readonly input: readonly T[]) {
    super('schedule');
  }

  [openReceiver](sink: ReceiverSink<T>): ScheduleSession<T> {
    this.session = new ScheduleSession(this.input, sink);
    return this.session;
  }
}

/**
 * The per-key promise chain fed by an open-loop schedule: its producer offers what has arrived, awaiting
 * a free slot whenever 256 are unfinished.
 */
export function openLoopChain<T, K>(
  input: readonly T[],
  key: (m: T) => K,
  handle: (m: T) => Promise<unknown>,
  done: (m: T) => void,
  maxInFlight: number,
): { arrive(count: number): void; stop(): void; taken(): number } {
  let taken = 0;
  let arrived = 0;
  let stopped = false;
  let producing = false;
  const chain = promiseChain(key, handle, (m) => stopped || done(m), maxInFlight);
  const produce = async () => {
    producing = true;
    while (!stopped && taken < arrived) {
      if (chain.full) await chain.free();
      else chain.offer(input[taken++]);
    }
    producing = false;
  };
  return {
    arrive(count) {
      arrived = count;
      if (!producing) void produce();
    },
    stop: () => {
      stopped = true;
    },
    taken: () => taken,
  };
}
