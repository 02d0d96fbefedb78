import type { EventLoopLanes } from './engine/event-loop-lanes';
import { type EndingRecord, endedFacts, type HealthFacts } from './health/facts';
import { sharedSlot } from './internal/shared-slot';
import type { TransportFault, TransportOperation } from './transport-fault';
import type { TransportLag } from './transport-lag';

/** Transport failures a receiver survived, by what failed. */
export type TransportFaultCounts = Readonly<Record<TransportOperation, number>>;

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
  /** Messages settled as failed or dead-lettered: a failure policy gave up on them, or none handled the failure. */
  readonly failed: number;
  /** Of `failed`, the messages the failure policy's `deadLetter` took (settled `dead-lettered`). */
  readonly deadLettered: number;
  /**
   * Failed attempts: each time a message's handler (or its key selector) failed, whether it was retried
   * or not; a message that failed twice and then succeeded counts 2, a failed batch 1.
   */
  readonly failedAttempts: number;
  /** Messages of a plain source waiting outside the window (`onOverflow: 'buffer'`). */
  readonly overflow: number;
  /** Messages of keys at their share (`maxPerKey`), waiting outside the window. */
  readonly parked: number;
  /** The share of the window one key may hold. */
  readonly maxPerKey: number;
  /** The most messages that may wait parked outside the window. */
  readonly maxParked: number;
  /**
   * Failures of the receiver's transport that it survived and retried (see `onTransportError`), by what
   * failed; all 0 for sources that report none.
   */
  readonly transportFaults: TransportFaultCounts;
  /** The last message settled as failed or dead-lettered, or null: one slot, replaced by each. */
  readonly lastFailure: MessageFailure | null;
  /** The last transport failure the receiver survived, or null: one slot, replaced by each. */
  readonly lastTransportFault: TransportFaultSeen | null;
  /**
   * How far the consumer is behind its transport, one entry per source of messages (a Kafka partition,
   * a Redis stream, a JetStream consumer); see `TransportLag`. Read from the receiver when the stats are
   * read, never per message; empty for sources that report none (plain Observables, `LocalBus`).
   */
  readonly transportLag: readonly TransportLag[];
}

/** A message settled as failed or dead-lettered, in `DispatchSnapshot.lastFailure`. */
export interface MessageFailure {
  /** What its handler threw, or its key selector (the error a failure policy gave up on). */
  readonly error: unknown;
  /** Its key; undefined when the key selector failed. */
  readonly key: unknown;
  /** Where it came from, when its receiver says (`topic 'orders' partition 3 offset 1234`). */
  readonly source: string | undefined;
  /** How it settled: `dead-lettered` when the failure policy's `deadLetter` took it. */
  readonly outcome: 'failed' | 'dead-lettered';
  /** When it settled, in ms since the epoch. */
  readonly time: number;
}

/** A transport fault, with when it happened, in `DispatchSnapshot.lastTransportFault`. */
export interface TransportFaultSeen extends TransportFault {
  /** When the receiver reported it, in ms since the epoch. */
  readonly time: number;
}

/**
 * What a dispatcher asks its receiver for at a time as its window frees: `max(1, floor(maxInFlight /
 * 16))`. A window holding more than `maxInFlight − batch` takes nothing in until it drains below.
 */
export function intakeBatch(maxInFlight: number): number {
  return Math.max(1, Math.floor(maxInFlight / 16));
}

/** A dispatcher's own counters: a snapshot but for what its receiver tells (`transportLag`). */
export type DispatcherCounts = Omit<DispatchSnapshot, 'transportLag'>;

/** What a running dispatcher offers its stats object (and, through it, health checks). */
export interface DispatchCounters extends HealthFacts {
  /** Its receiver's session, asked for the transport's lag when the stats are read; null for plain sources. */
  readonly session: { transportLag?(): readonly TransportLag[] } | null;
  /** The lanes on this thread the dispatcher's handlers run on, which metrics measure; null on thread lanes. */
  readonly localLanes: EventLoopLanes | null;
  /** Reports handler runs that hold their lane `thresholdMs` or longer, on either kind of lane; returns the function that stops it. */
  watchLongTurns(thresholdMs: number, listener: (laneIndex: number, durationMs: number) => void): () => void;
  snapshot(): DispatcherCounts;
  /** Unfinished messages of `key` (0 when it has no mailbox). */
  backlogOf(key: unknown): number;
  /** The `n` keys with the most unfinished messages (parked ones included), largest first. */
  hotKeys(n: number): HotKey[];
  /**
   * The messages in the window (running, waiting out a retry, queued in their key's mailbox): the oldest
   * unfinished message is one of them, as a key's parked messages came after its admitted ones and the
   * overflow after all.
   */
  windowMessages(): unknown[];
}

/** A key with unfinished messages, in `hotKeys`. */
export interface HotKey {
  /** The key, as `key` returned it. */
  readonly key: unknown;
  /** Its unfinished messages: running, queued in its mailbox, and parked. */
  readonly backlog: number;
  /** Of those, how many wait outside the window because the key holds its whole share (`maxPerKey`). */
  readonly parked: number;
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
  deadLettered: 0,
  failedAttempts: 0,
  overflow: 0,
  parked: 0,
  maxPerKey: 0,
  maxParked: 0,
  transportFaults: { fetch: 0, commit: 0, heartbeat: 0, connection: 0 },
  lastFailure: null,
  lastTransportFault: null,
  transportLag: [],
};

/** What a dispatcher tells its stats object while it runs; kept off the public classes. */
export interface StatsLink {
  /** The dispatcher's handler timer, or null when nothing is timed. */
  handlerTimer(): HandlerTimer | null;
  /** The dispatcher started. */
  attach(source: DispatchCounters): void;
  /** The dispatcher ended; false when `source` was not the one attached. */
  detach(source: DispatchCounters): boolean;
  /** The dispatcher's health facts: live while it runs, final once it ended; null before it started. */
  facts(): HealthFacts | null;
}

/**
 * The link of each stats object, where a dispatcher of another copy of the library (the CommonJS build
 * beside the ESM one) finds it too.
 */
const links = sharedSlot<StatsLink>('DispatchStats.link');

/** How a dispatcher reaches `stats`. */
export function statsLink(stats: DispatchStats): StatsLink {
  return links.of(stats) as StatsLink;
}

/**
 * Whether `value` is a `DispatchStats` (or `DispatchMetrics`), of this copy of the library or of another:
 * one with a link. Not `instanceof`, which would keep the class in every bundle of `keyedDispatch`.
 */
export function isDispatchStats(value: unknown): value is DispatchStats {
  return links.of(value) !== undefined;
}

/** Gives `stats` its link (a subclass replaces its parent's, calling it as it sees fit). */
export function linkStats(stats: DispatchStats, link: StatsLink): void {
  links.attach(stats, link, true);
}

/**
 * Live counters of one `keyedDispatch` subscription, read on demand: passing one costs the hot path
 * nothing. After the subscription ends it keeps the final values.
 */
export class DispatchStats {
  /** The running dispatcher, or null before it starts and after it ends. */
  #source: DispatchCounters | null = null;
  /** The values at the end of the last subscription. */
  #final: DispatchSnapshot = none;
  /** How the last subscription ended; null before the first. */
  #finalEnd: EndingRecord | null = null;

  constructor() {
    linkStats(this, {
      handlerTimer: () => null,
      attach: (source) => {
        this.#source = source;
      },
      facts: () => this.#source ?? (this.#finalEnd && endedFacts(this.#finalEnd)),
      detach: (source) => {
        if (this.#source !== source) return false;
        this.#final = snapshotOf(source);
        this.#finalEnd = source.end;
        this.#source = null;
        return true;
      },
    });
  }

  /** The dispatcher's counters now; after it ended, their final values. */
  snapshot(): DispatchSnapshot {
    return this.#source ? snapshotOf(this.#source) : this.#final;
  }

  /** Admitted messages whose handler has not finished (running or queued). */
  get inFlight(): number {
    return this.snapshot().inFlight;
  }

  /** Mailboxes that exist now (one per key with unfinished messages). */
  get liveMailboxes(): number {
    return this.snapshot().liveMailboxes;
  }

  /** Highest `inFlight` seen so far. */
  get maxInFlightSeen(): number {
    return this.snapshot().maxInFlightSeen;
  }

  /** Unfinished messages of `key` now (0 when it has none, and after the subscription ended). */
  backlogOf(key: unknown): number {
    return this.#source ? this.#source.backlogOf(key) : 0;
  }

  /** The `n` keys with the most unfinished messages now, largest first. */
  hotKeys(n = 10): HotKey[] {
    return this.#source ? this.#source.hotKeys(n) : [];
  }
}

/** A running dispatcher's counters with its receiver's lag. */
function snapshotOf(source: DispatchCounters): DispatchSnapshot {
  return { ...source.snapshot(), transportLag: lagOf(source) };
}

/**
 * The receiver's lag: none from a plain source, or from a session whose `transportLag` throws (it must
 * not: reading the stats must not fail for it).
 */
function lagOf(source: DispatchCounters): readonly TransportLag[] {
  try {
    return source.session?.transportLag?.() ?? [];
  } catch {
    return [];
  }
}
