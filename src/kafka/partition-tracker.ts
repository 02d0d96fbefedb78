import type { TopicPartition, TopicPartitionOffset } from './adapter';
import { decodeFinished, encodeFinished, type FinishedRun } from './finished-offsets';
import type { KafkaBytes, KafkaHeaders, KafkaMessage, KafkaRecord } from './message';
import { RecordBuffer } from './record-buffer';

/**
 * The message `keyedDispatch` dispatches. It remembers its partition's tracker and its place in it, so
 * settling it is an array write, not a lookup.
 */
export class TrackedKafkaMessage implements KafkaMessage {
  readonly key: KafkaBytes | null;
  readonly value: KafkaBytes | null;
  readonly headers: KafkaHeaders;
  readonly offset: string;
  readonly timestamp: string;
  // Private fields, so a message posted to a thread lane carries the record alone, not its partition's
  // buffer: structured cloning copies own properties only.
  readonly #tracker: PartitionTracker;
  readonly #seq: number;

  constructor(
    readonly topic: string,
    readonly partition: number,
    record: KafkaRecord,
    tracker: PartitionTracker,
    seq: number,
  ) {
    this.key = record.key;
    this.value = record.value;
    this.headers = record.headers ?? {};
    this.offset = record.offset;
    this.timestamp = record.timestamp;
    this.#tracker = tracker;
    this.#seq = seq;
  }

  /** The partition tracker (of one assignment) this message belongs to. */
  get tracker(): PartitionTracker {
    return this.#tracker;
  }

  /** The message's position in its tracker. */
  get seq(): number {
    return this.#seq;
  }
}

/** Finished entries kept before the tracker's arrays are compacted. */
const COMPACT_AT = 4096;

/** `links` value of a received message that has not finished. */
const UNFINISHED = -1;

/**
 * One partition during one assignment: the fetched messages not yet delivered, and every received
 * message from the first unfinished one on with whether it has finished, so the commit position is the
 * highest contiguous finished offset + 1 even though messages of different keys finish out of order. The
 * offsets that finished above it go into the commit's metadata, and the ones a previous owner recorded
 * there are skipped when fetched.
 *
 * Every operation costs O(1) amortized per message, and a commit costs what it writes: finished messages
 * are kept as maximal runs (each run's first and last entries link to each other), so a commit steps
 * from run to run, and nothing above a message left for redelivery is kept at all (no commit can reach
 * past it in this assignment). Offsets are numbers counted from the first one seen, so no offset needs a
 * BigInt of its own.
 */
export class PartitionTracker implements TopicPartition {
  /** Fetched and not yet delivered (no demand yet), in offset order. */
  readonly buffer: RecordBuffer = new RecordBuffer(this);
  /** The first offset seen (committed or received): every other offset is counted from it. */
  private origin: bigint | null = null;
  /** `origin` as a number, NaN when it is not a safe integer (then offsets take the BigInt path). */
  private originNumber = Number.NaN;
  /** Offset (counted from `origin`) of each received message, from sequence number `base` on. */
  private deltas: number[] = [];
  /**
   * Per received message from `base` on: `UNFINISHED`, or, once finished, at the first entry of a run of
   * finished messages the sequence number of its last, and at the last the sequence number of its first.
   */
  private links: number[] = [];
  /** Sequence number of `deltas[0]`: messages are numbered as they are received. */
  private base = 0;
  /** Sequence number of the first unfinished message (or the next one to be received). */
  private head = 0;
  /** Messages received so far: the next one's sequence number. */
  private received = 0;
  /** Offset of the last message of the finished contiguous prefix; null while it is empty. */
  private lastFinished: number | null = null;
  /** Offset of the last received message; null before the first. */
  private lastReceived: number | null = null;
  /** Sequence number of the highest finished message kept; -1 while none has. */
  private highestFinished = -1;
  /** Some message has finished (or been skipped as finished): there is a position to commit. */
  private anyFinished = false;
  /**
   * Sequence number and offset of the lowest message that failed and waits for redelivery (Infinity
   * while none has): nothing at or above it is kept, and the metadata stops below it (see `fail`).
   */
  private failedSeq = Number.POSITIVE_INFINITY;
  private failedAt = Number.POSITIVE_INFINITY;
  /** Runs a previous owner recorded as finished, counted from `origin`, in order; `[0, nextInherited)` passed. */
  private inherited: FinishedRun[] = [];
  private nextInherited = 0;
  /**
   * Waiting for the partition's commit metadata (what to skip): fetched batches wait in `pending` and
   * nothing is delivered meanwhile.
   */
  loading = false;
  /** Batches fetched while `loading`. */
  pending: Array<readonly KafkaRecord[]> = [];
  /** Delivered and not yet settled or discarded: what a revoke waits for. */
  inFlight = 0;
  /** Fetching of this partition is paused: its buffer is full, or it is held. */
  paused = false;
  /** Its latest batch ended below its high watermark: its next fetch brings more records. */
  behind = false;
  /** The high watermark its latest fetch that brought records told, or null when none told one. */
  highWatermark: string | null = null;
  /** When `highWatermark` was read (ms since the epoch). */
  highWatermarkAt = 0;
  /**
   * Set when a fetched batch filled the buffer and holds the client's fetching (`FetchHold`): resolved
   * when fetching may go on (see `KafkaConsumerListener.batch`), or the partition is let go.
   */
  room: { promise: Promise<void>; resolve: () => void } | null = null;

  /** The buffer filled: sets `room`, unless it is set already. */
  holdForRoom(): void {
    if (this.room !== null) return;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.room = { promise, resolve };
  }

  /** Resolves `room`, if a fetch waits for it. */
  releaseRoom(): void {
    const room = this.room;
    this.room = null;
    room?.resolve();
  }
  /**
   * Delivered messages of this partition waiting outside the dispatcher's window (their key at its
   * share). While there are any, the partition is held: nothing more of it is delivered.
   */
  parked = 0;
  /**
   * Its place among the receiver's partitions with messages to deliver (written only by
   * `ReadyPartitions`): the list it is in, -1 when in none, and its neighbours there.
   */
  readyAt = -1;
  readyPrev: PartitionTracker | null = null;
  readyNext: PartitionTracker | null = null;
  /** Revoked (or closing): nothing more is delivered from it. */
  revoked = false;
  /** Resolved when `inFlight` reaches zero after a revoke. */
  private idleWaiters: Array<() => void> = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  /** Registers a fetched message; returns its sequence number in this tracker. */
  receive(offset: string): number {
    const at = this.deltaOf(offset);
    this.lastReceived = at;
    const seq = this.received++;
    if (seq < this.failedSeq) {
      this.deltas.push(at);
      this.links.push(UNFINISHED);
    }
    return seq;
  }

  /**
   * Takes in the previous owner's commit (read back on assignment): its finished offsets are skipped.
   * Metadata longer than `metadataMaxBytes` counts as none (see `decodeFinished`).
   */
  inherit(offset: string | null, metadata: string | null, metadataMaxBytes: number): void {
    if (offset === null) return;
    const committed = this.deltaOf(offset);
    this.inherited = decodeFinished(metadata, offset, metadataMaxBytes);
    for (const run of this.inherited) {
      run.from += committed;
      run.to += committed;
    }
    this.nextInherited = 0;
  }

  /** Whether the record at `offset` already finished under a previous owner. Offsets come in order. */
  skips(offset: string): boolean {
    const inherited = this.inherited;
    if (this.nextInherited >= inherited.length) return false;
    const at = this.deltaOf(offset);
    while (this.nextInherited < inherited.length && inherited[this.nextInherited].to <= at)
      this.nextInherited++;
    return this.nextInherited < inherited.length && inherited[this.nextInherited].from <= at;
  }

  /** Marks the message numbered `seq` finished, joining it to the runs beside it. */
  finish(seq: number): void {
    this.anyFinished = true;
    const i = seq - this.base;
    const links = this.links;
    // Above a failed message (not kept), or finished already.
    if (i < 0 || i >= links.length || links[i] !== UNFINISHED) return;
    if (seq > this.highestFinished) this.highestFinished = seq;
    links[i] = seq;
    const first = i > 0 && links[i - 1] !== UNFINISHED ? links[i - 1] : seq;
    const last = i + 1 < links.length && links[i + 1] !== UNFINISHED ? links[i + 1] : seq;
    links[first - this.base] = last;
    links[last - this.base] = first;
    if (seq !== this.head) return;
    this.head = last + 1;
    this.lastFinished = this.deltas[last - this.base];
    const done = this.head - this.base;
    if (done >= COMPACT_AT && done * 2 >= links.length) {
      this.deltas = this.deltas.slice(done);
      this.links = links.slice(done);
      this.base = this.head;
    }
  }

  /**
   * The message numbered `seq` failed and is left for redelivery: it stays unfinished, and the commit
   * metadata stops below it. Its key's later messages may finish meanwhile; a next owner that skipped
   * them would run the failed one after them. Without knowing keys, everything above it is handled again
   * after a restart or a rebalance, as with a plain commit — so nothing above it needs keeping.
   */
  fail(seq: number): void {
    const i = seq - this.base;
    if (seq >= this.failedSeq || i < 0 || i >= this.deltas.length) return;
    this.failedSeq = seq;
    this.failedAt = this.deltas[i];
    this.deltas.length = i + 1;
    this.links.length = i + 1;
    if (this.highestFinished > seq) this.highestFinished = seq - 1;
  }

  /** The position to commit (the first unfinished offset), or null when nothing has finished. */
  position(): string | null {
    const at = this.positionDelta();
    return at === null ? null : this.offsetText(at);
  }

  /**
   * The position to commit, with metadata listing the offsets above it that finished (within
   * `metadataMaxBytes`; none when 0), or null when nothing has finished.
   */
  commitPoint(metadataMaxBytes: number): TopicPartitionOffset | null {
    const at = this.positionDelta();
    if (at === null) return null;
    const offset = this.offsetText(at);
    const point: TopicPartitionOffset = { topic: this.topic, partition: this.partition, offset };
    if (metadataMaxBytes > 0) {
      const runs = below(this.finishedRuns(at), this.failedAt - at);
      const metadata = encodeFinished(runs, metadataMaxBytes, offset);
      if (metadata !== undefined) point.metadata = metadata;
    }
    return point;
  }

  /**
   * Records from the first unfinished offset up to the high watermark: what this consumer has left to
   * finish. Null while no high watermark or no offset is known.
   */
  lag(): number | null {
    const at = this.firstUnfinished();
    if (this.highWatermark === null || at === null) return null;
    const left = BigInt(this.highWatermark) - BigInt(this.offsetText(at));
    return left > 0n ? Number(left) : 0;
  }

  /** A delivered message settled or was discarded. */
  release(): void {
    if (--this.inFlight === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves once no delivered message of this tracker is running. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // Internals

  private positionDelta(): number | null {
    if (!this.anyFinished) return null;
    if (this.lastFinished !== null) return this.lastFinished + 1;
    return this.head - this.base < this.deltas.length
      ? this.deltas[this.head - this.base]
      : (this.lastReceived as number) + 1;
  }

  /**
   * The first unfinished offset: the position to commit, or before anything finished, the first
   * received offset (or, with none received, the committed one); null while no offset is known.
   */
  private firstUnfinished(): number | null {
    const at = this.positionDelta();
    if (at !== null || this.origin === null) return at;
    return this.deltas.length > 0 ? this.deltas[this.head - this.base] : 0;
  }

  /**
   * Runs of finished offsets above `position`, counted from it, lazily (a commit reads only what fits):
   * received ones run by run, then inherited ones not yet reached by fetching.
   */
  private *finishedRuns(position: number): Generator<FinishedRun> {
    const { links, deltas, base } = this;
    let held: FinishedRun | null = null;
    const last = Math.min(this.highestFinished, base + links.length - 1);
    for (let seq = this.head + 1; seq <= last; seq++) {
      const end = links[seq - base];
      if (end === UNFINISHED) continue;
      // Consecutive received messages with none unfinished between: offsets between them do not exist.
      if (held !== null) yield held;
      held = { from: deltas[seq - base] - position, to: deltas[end - base] + 1 - position };
      seq = end;
    }
    const received = this.lastReceived === null ? position : this.lastReceived + 1;
    const inherited = this.inherited;
    for (let i = this.nextInherited; i < inherited.length; i++) {
      // The committed offset itself is unfinished by definition: runs start above it.
      const start = Math.max(Math.max(inherited[i].from, received) - position, 1);
      const end = inherited[i].to - position;
      if (end <= start) continue;
      if (held !== null && held.to >= start) {
        held.to = Math.max(held.to, end);
        continue;
      }
      if (held !== null) yield held;
      held = { from: start, to: end };
    }
    if (held !== null) yield held;
  }

  /** `offset` counted from `origin` (the first offset seen becomes it). */
  private deltaOf(offset: string): number {
    if (this.origin === null) {
      this.origin = BigInt(offset);
      this.originNumber = Number.isSafeInteger(Number(offset)) ? Number(offset) : Number.NaN;
      return 0;
    }
    const at = Number(offset);
    if (Number.isSafeInteger(at) && !Number.isNaN(this.originNumber)) return at - this.originNumber;
    return Number(BigInt(offset) - this.origin);
  }

  /** The offset `delta` counts, as a decimal string. */
  private offsetText(delta: number): string {
    const at = this.originNumber + delta;
    if (Number.isSafeInteger(at)) return String(at);
    return ((this.origin as bigint) + BigInt(delta)).toString();
  }
}

/** `runs` cut off at `limit` (exclusive), lazily. */
function* below(runs: Iterable<FinishedRun>, limit: number): Generator<FinishedRun> {
  for (const run of runs) {
    if (run.from >= limit) return;
    if (run.to < limit) yield run;
    else {
      yield { from: run.from, to: limit };
      return;
    }
  }
}
