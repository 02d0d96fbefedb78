import { RingQueue } from '../internal/ring-queue';
import type { HotKey } from '../stats';

/** A key's per-key batches (`keyedBatchDispatch`). */
export interface KeyBatches<T> {
  /** The batch on the lanes and not finished, if any. */
  running: T[] | null;
  /** Batches waiting for `running` to finish, oldest first; the newest takes messages while it has room. */
  next: T[][];
}

/** Everything one key holds in a dispatcher: one record per active key, in its `KeyTable`. */
export class KeyRecord<T, K> {
  /** Admitted messages of the key not finished (running, or queued on the lanes): at most `maxPerKey`. */
  unfinished = 0;
  /** Messages past the key's share, waiting outside the window, oldest first; null while it has none. */
  parked: RingQueue<T> | null = null;
  /** Its batches, with per-key batches; null otherwise. */
  batches: KeyBatches<T> | null = null;
  /**
   * Where the key's items run, set by its lanes (its mailbox on event-loop lanes, its thread on thread
   * lanes); null while it has none there.
   */
  placement: unknown = null;
  /** A placement its lanes keep for the next one (on event-loop lanes its mailbox); null when none. */
  spare: unknown = null;
  /** Idle and kept in the table under its key (see `KeyTable`). */
  filed = false;
  /** The next record in the table's pool of unfiled records while there. */
  nextFree: KeyRecord<T, K> | null = null;

  constructor(public key: K) {}
}

/** Idle records a table keeps filed under their last key; the same number again unfiled. */
export const POOL_LIMIT = 1024;

/** Once the filed pool is full, one idle record in this many takes the place of a filed one. */
const REFRESH_EVERY = 16;

/** Idle records between two looks at whether filing pays. */
export const CHECK_EVERY = 4096;

/** The filed pool's size while filing does not pay: enough to notice when keys start coming back. */
export const PROBE_LIMIT = 64;

/**
 * The keys of one dispatcher: one record per key with anything in the window, parked or on the lanes,
 * and the one admission decision (`admits`). The key queries read it, and nothing else keeps state per
 * key.
 *
 * An idle record stays in the map under its key while the filed pool has room, so a key that comes
 * back finds it with one lookup, instead of a deletion now and an insertion then (and the rehash that
 * every few hundred insertions allocates a new table). Once `POOL_LIMIT` records are filed, an idle one
 * leaves the map for the unfiled pool, which serves new keys, except one in `REFRESH_EVERY`, which
 * takes the place of a filed one: the filed pool follows a key space that moves. The one it replaces is
 * found by a hand that walks the map in the order its keys came into it, resuming where it stopped.
 *
 * In a key space too large to recur within the pool (100,000 keys), filed records are almost never
 * taken back, and the thousand of them only make the map larger for every other key. So every
 * `CHECK_EVERY` idle records the table looks at how many filed ones were taken back: fewer than half a
 * take per filed slot, and the filed pool shrinks to `PROBE_LIMIT`; as many per probe, and it may grow
 * back to `POOL_LIMIT`. Memory never grows with the number of keys seen.
 */
export class KeyTable<T, K> {
  private readonly byKey = new Map<K, KeyRecord<T, K>>();
  /** Messages parked, all keys together. */
  parkedCount = 0;
  /** Walks `byKey` for filed records to let go (see `nextFiled`). */
  private hand: Iterator<KeyRecord<T, K>> = this.byKey.values();
  /** Idle records kept under their last key. */
  filed = 0;
  /** The unfiled pool: a stack linked through `nextFree`. */
  private unfiled: KeyRecord<T, K> | null = null;
  private unfiledCount = 0;
  private untilRefresh = REFRESH_EVERY;
  /** How many may be filed now: `POOL_LIMIT` while filing pays, else `PROBE_LIMIT`. */
  private fileLimit = POOL_LIMIT;
  private untilCheck = CHECK_EVERY;
  /** Filed records taken back since the last look. */
  private revived = 0;

  constructor(
    /** Unfinished messages one key may hold in the window (`maxPerKey`). */
    private readonly maxPerKey: number,
  ) {}

  /**
   * The one admission decision: a message of `record`'s key enters the window when its share has room
   * and none of its messages waits parked before it (`fromParking`: it is the oldest parked one);
   * else it parks.
   */
  admits(record: KeyRecord<T, K>, fromParking = false): boolean {
    return record.unfinished < this.maxPerKey && (fromParking || record.parked === null);
  }

  /** The record of `key`: its live one, the one filed under it, or one from the pool (or new). */
  take(key: K): KeyRecord<T, K> {
    const known = this.byKey.get(key);
    if (known !== undefined) {
      if (known.filed) {
        known.filed = false;
        this.filed--;
        this.revived++;
      }
      return known;
    }
    let record = this.unfiled;
    if (record === null) record = new KeyRecord<T, K>(key);
    else {
      this.unfiled = record.nextFree;
      record.nextFree = null;
      record.filed = false;
      record.key = key;
      this.unfiledCount--;
    }
    this.byKey.set(key, record);
    return record;
  }

  /** `message` waits outside the window, behind its key's other parked messages. */
  park(record: KeyRecord<T, K>, message: T): void {
    (record.parked ??= new RingQueue<T>()).push(message);
    this.parkedCount++;
  }

  /** Takes the key's oldest parked message out (the caller checked `unparks`). */
  unpark(record: KeyRecord<T, K>): T {
    const parked = record.parked as RingQueue<T>;
    const message = parked.shift() as T;
    if (parked.size === 0) record.parked = null;
    this.parkedCount--;
    return message;
  }

  /** Takes out the parked messages `matches` accepts, keeping the others in order; returns those taken. */
  removeParkedWhere(matches: (message: T) => boolean): T[] {
    const removed: T[] = [];
    for (const record of this.byKey.values()) {
      if (record.parked === null) continue;
      removed.push(...record.parked.removeWhere(matches));
      if (record.parked.size === 0) record.parked = null;
    }
    this.parkedCount -= removed.length;
    return removed;
  }

  /** Records holding anything (not filed), in the order their keys came in. */
  live(): Array<KeyRecord<T, K>> {
    const live: Array<KeyRecord<T, K>> = [];
    for (const record of this.byKey.values()) if (!record.filed) live.push(record);
    return live;
  }

  /** Keys holding anything. */
  get liveCount(): number {
    return this.byKey.size - this.filed;
  }

  /** Files `record` (or lets it go) once it holds nothing: nothing in the window, parked or on the lanes. */
  letGoIfIdle(record: KeyRecord<T, K>): void {
    const idle = record.placement === null && record.unfinished === 0 && record.parked === null;
    if (!idle || record.filed || record.batches?.running) return;
    record.filed = true;
    if (this.filed < this.fileLimit) this.filed++;
    else this.releaseWhenFull(record);
    if (--this.untilCheck === 0) this.checkFiling();
  }

  /** Unfinished messages of `key`: in the window and parked. */
  backlogOf(key: K): number {
    const record = this.byKey.get(key);
    return record === undefined ? 0 : record.unfinished + (record.parked?.size ?? 0);
  }

  /** The `n` keys with the most unfinished messages, parked ones included, largest first. */
  hotKeys(n: number): HotKey[] {
    const hot: HotKey[] = [];
    for (const { key, unfinished, parked } of this.byKey.values()) {
      const waiting = parked?.size ?? 0;
      if (unfinished + waiting > 0) hot.push({ key, backlog: unfinished + waiting, parked: waiting });
    }
    return hot.sort((a, b) => b.backlog - a.backlog).slice(0, n);
  }

  /** The parked messages, key by key. */
  parkedMessages(): T[] {
    const messages: T[] = [];
    for (const { parked } of this.byKey.values()) if (parked !== null) messages.push(...parked.toArray());
    return messages;
  }

  /** Forgets every record. */
  clear(): void {
    this.byKey.clear();
    this.hand = this.byKey.values();
    this.filed = 0;
    this.parkedCount = 0;
    this.unfiled = null;
    this.unfiledCount = 0;
  }

  /** Sizes the filed pool by how often filed records were taken back since the last look. */
  private checkFiling(): void {
    this.fileLimit = this.revived * 2 >= this.fileLimit ? POOL_LIMIT : PROBE_LIMIT;
    this.untilCheck = CHECK_EVERY;
    this.revived = 0;
    while (this.filed > this.fileLimit) {
      this.leave(this.nextFiled());
      this.filed--;
    }
  }

  /** The filed pool is full: `record` leaves the map, or, one time in `REFRESH_EVERY`, a filed one does. */
  private releaseWhenFull(record: KeyRecord<T, K>): void {
    if (--this.untilRefresh > 0) {
      this.leave(record);
      return;
    }
    this.untilRefresh = REFRESH_EVERY;
    // `record` is filed in its place (if the hand finds `record` itself, it leaves as above).
    this.leave(this.nextFiled());
  }

  /** The next filed record in the map from where the hand stopped, in the order keys came in. */
  private nextFiled(): KeyRecord<T, K> {
    for (;;) {
      const step = this.hand.next();
      if (step.done) this.hand = this.byKey.values();
      else if (step.value.filed) return step.value;
    }
  }

  /** A filed record leaves the map, onto the unfiled stack if it has room. */
  private leave(record: KeyRecord<T, K>): void {
    this.byKey.delete(record.key);
    if (this.unfiledCount === POOL_LIMIT) return;
    record.nextFree = this.unfiled;
    this.unfiled = record;
    this.unfiledCount++;
  }
}
