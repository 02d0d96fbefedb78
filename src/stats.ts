import type { KeyedExecutor } from './executor';
import type { ThreadExecutor } from './threads/thread-executor';

/** A dispatcher's counters at one moment. */
export interface DispatchSnapshot {
  /** Admitted messages whose handler has not finished (running or queued). */
  readonly inFlight: number;
  /** The window: the most messages in flight at once. */
  readonly maxInFlight: number;
  /** Highest `inFlight` seen so far. */
  readonly maxInFlightSeen: number;
  /** Mailboxes that exist now (one per key with unfinished messages). */
  readonly liveMailboxes: number;
  /** Messages taken in so far. */
  readonly admitted: number;
  /** Messages whose handler completed. */
  readonly settled: number;
  /** Messages whose handler errored. */
  readonly failed: number;
  /** Messages of a plain source waiting outside the window (`onOverflow: 'buffer'`). */
  readonly overflow: number;
}

/** What a running dispatcher offers its stats object. */
export interface DispatchCounters {
  /** The executor whose lanes the dispatcher runs on. */
  readonly executor: KeyedExecutor | ThreadExecutor;
  snapshot(): DispatchSnapshot;
  /** Unfinished messages of `key` (0 when it has no mailbox). */
  backlogOf(key: unknown): number;
  /** The `n` keys with the most unfinished messages, largest first. */
  hotKeys(n: number): Array<{ key: unknown; backlog: number }>;
}

/** Receives handler durations from a dispatcher: one handler in `every` is timed (reading the clock is not free). */
export interface HandlerTimer {
  readonly every: number;
  record(durationMs: number): void;
}

const none: DispatchSnapshot = {
  inFlight: 0,
  maxInFlight: 0,
  maxInFlightSeen: 0,
  liveMailboxes: 0,
  admitted: 0,
  settled: 0,
  failed: 0,
  overflow: 0,
};

/**
 * Live counters of one `keyedDispatch` subscription, read on demand: passing one costs the hot path
 * nothing. After the subscription ends it keeps the final values.
 */
export class DispatchStats {
  /** The running dispatcher, or null before it starts and after it ends. */
  protected source: DispatchCounters | null = null;
  /** The values at the end of the last subscription. */
  private final: DispatchSnapshot = none;

  /** @internal the dispatcher's handler timer; plain stats time nothing. */
  handlerTimer(): HandlerTimer | null {
    return null;
  }

  /** @internal called by the dispatcher when it starts. */
  attach(source: DispatchCounters): void {
    this.source = source;
  }

  /** @internal called by the dispatcher when it ends. */
  detach(source: DispatchCounters): void {
    if (this.source !== source) return;
    this.final = source.snapshot();
    this.source = null;
  }

  snapshot(): DispatchSnapshot {
    return this.source ? this.source.snapshot() : this.final;
  }

  get inFlight(): number {
    return this.snapshot().inFlight;
  }

  get liveMailboxes(): number {
    return this.snapshot().liveMailboxes;
  }

  get maxInFlightSeen(): number {
    return this.snapshot().maxInFlightSeen;
  }

  backlogOf(key: unknown): number {
    return this.source ? this.source.backlogOf(key) : 0;
  }

  hotKeys(n = 10): Array<{ key: unknown; backlog: number }> {
    return this.source ? this.source.hotKeys(n) : [];
  }
}
