import { asapScheduler, type Subscription } from 'rxjs';
import type { LaneLoop } from '../engine/lane-loop';
import { isBatchFailures, isGaveUp } from '../failure-policy';
import type { KeyBatches, KeyRecord, KeyTable } from './key-table';
import type { Dispatcher, Router } from './router';

type Record<T, K> = KeyRecord<T, K>;

/**
 * Per-key batches in front of a router of either lane kind. A key has one batch at a time in the
 * router below, which runs it as one item of the key (on thread lanes it crosses as one posting); the
 * key's messages that arrive meanwhile gather into its next batch (at most `maxBatch` each), handed
 * over as soon as the running one is done. A key with nothing running hands its first batch over at
 * the end of the burst that brought its first message (a microtask later; virtual time in
 * `TestScheduler.run`), so messages that arrive together travel together; nothing ever waits for a
 * batch to fill. Every message counts in the window and in its key's share, and each is settled when
 * its batch is done.
 */
export class BatchRouter<T, K, R> implements Router<T, K>, Dispatcher<T[], K, R> {
  private readonly inner: Router<T[], K>;
  /** Keys with nothing running that got a first batch in the current burst, handed over at its end. */
  private starting: Array<Record<T, K>> = [];
  private startLater: Subscription | null = null;
  private closed = false;

  constructor(
    private readonly dispatcher: Dispatcher<T, K, R>,
    private readonly maxBatch: number,
    inner: (dispatcher: Dispatcher<T[], K, R>) => Router<T[], K>,
    /** The lane loop of this thread (`LaneBackend.loop`), held while a burst's first batches are handed over. */
    private readonly loop: LaneLoop,
  ) {
    this.inner = inner(this);
  }

  get keys(): KeyTable<unknown, K> {
    return this.dispatcher.keys;
  }

  open(): void {
    this.inner.open();
  }

  route(record: Record<T, K>, message: T): void {
    const batches = (record.batches ??= { running: null, next: [] });
    const newest = batches.next[batches.next.length - 1];
    if (newest !== undefined && newest.length < this.maxBatch) newest.push(message);
    else batches.next.push([message]);
    if (batches.running === null && newest === undefined) this.startAtBurstEnd(record);
  }

  private startAtBurstEnd(record: Record<T, K>): void {
    this.starting.push(record);
    this.startLater ??= asapScheduler.schedule(() => {
      this.startLater = null;
      const records = this.starting;
      this.starting = [];
      // Every batch is handed over before any lane runs: the keys take their turns in order.
      this.loop.batchAdmissions();
      try {
        for (const record of records) if (record.batches?.running === null) this.handOver(record);
      } finally {
        this.loop.flushAdmissions();
      }
    });
  }

  /** The key's oldest waiting batch goes to the router below. */
  private handOver(record: Record<T, K>): void {
    const batches = record.batches as KeyBatches<T>;
    const batch = batches.next.shift();
    if (batch === undefined || this.closed) return;
    batches.running = batch;
    // One batch of a key at a time. At the end of a burst, from a scheduled action: never within a turn.
    this.inner.route(record as KeyRecord<unknown, K>, batch);
  }

  discard(matches: (message: T) => boolean): T[] {
    const discarded: T[] = [];
    // One question per message: `matches` is user code, and may not answer the same twice.
    const answers = new Map<T[], boolean[]>();
    const answersFor = (batch: T[]): boolean[] => {
      let answer = answers.get(batch);
      if (answer === undefined) answers.set(batch, (answer = batch.map((m) => matches(m))));
      return answer;
    };
    // A batch handed over and not started is taken back whole when it holds any message taken (on a
    // thread it is one posting); the rest of it is handed over again, ahead of the key's next batches.
    // A batch of a key other than the record's may mix sources (a Kafka revoke takes some partitions).
    const withdrawn = new Set(this.inner.discard((batch) => answersFor(batch).includes(true)));
    for (const record of this.keys.live() as unknown as Array<Record<T, K>>) {
      const batches = record.batches;
      if (batches === null) continue;
      if (batches.running !== null && withdrawn.has(batches.running)) {
        batches.next.unshift(batches.running);
        batches.running = null;
      }
      for (const batch of batches.next) {
        const taken = answersFor(batch);
        if (!taken.includes(true)) continue;
        const kept = batch.filter((m, i) => {
          if (taken[i]) discarded.push(m);
          return !taken[i];
        });
        const removed = batch.length - kept.length;
        batch.splice(0, batch.length, ...kept);
        this.dispatcher.withdrawn(record as KeyRecord<unknown, K>, removed);
      }
      batches.next = batches.next.filter((batch) => batch.length > 0);
      if (batches.running === null) this.handOver(record);
    }
    return discarded;
  }

  unfinished(): T[] {
    const messages = this.inner.unfinished().flat();
    for (const { batches } of this.keys.live() as unknown as Array<Record<T, K>>)
      if (batches !== null) for (const batch of batches.next) messages.push(...batch);
    return messages;
  }

  close(): void {
    this.closed = true;
    this.startLater?.unsubscribe();
    this.startLater = null;
    this.inner.close();
  }

  // Dispatcher: what the router below reports for a batch, passed on for each of its messages.
  emit(value: R): void {
    this.dispatcher.emit(value);
  }

  done(batch: T[], record: Record<T, K>): void {
    this.report(batch, record, (m) => this.dispatcher.done(m, record));
  }

  /** A batch handed over was taken back: `discard` puts it back in line. */
  withdrawn(): void {}

  /**
   * A policy that took the batch apart names the messages it gave up on (the others were handled), and
   * the one it failed on, if any, which errors the output (those after it stay unsettled); one that
   * gave up on a batch of one names it by its error. Any other error errors the output, as a handler
   * error does, naming the batch's first message.
   */
  failed(batch: T[], record: Record<T, K>, error: unknown): void {
    if (isBatchFailures(error)) {
      const { outcomes, failure } = error;
      const count = failure === undefined ? batch.length : outcomes.length + 1;
      this.report(
        batch,
        record,
        (m, i) => {
          const gaveUp = outcomes[i];
          if (i === outcomes.length) this.dispatcher.failed(m, record, failure?.error);
          else if (gaveUp === undefined) this.dispatcher.done(m, record);
          else this.dispatcher.failed(m, record, gaveUp);
        },
        count,
      );
    } else if (isGaveUp(error)) {
      this.report(batch, record, (m) => this.dispatcher.failed(m, record, error));
    } else {
      this.report(batch, record, (m) => this.dispatcher.failed(m, record, error), 1);
    }
  }

  terminate(error: unknown): unknown[] {
    return this.dispatcher.terminate(error);
  }

  /**
   * Reports the first `count` messages of the key's running batch with `each`, one by one, each leaving
   * the key's count as it goes (a message of the key parked outside the window takes its place and
   * waits for the next batch); then the key's next batch is handed over.
   */
  private report(
    batch: T[],
    record: Record<T, K>,
    each: (message: T, index: number) => void,
    count = batch.length,
  ): void {
    const batches = record.batches;
    if (batches === null || batches.running !== batch) return;
    for (let i = 0; i < count && !this.closed; i++) each(batch[i] as T, i);
    batches.running = null;
    if (this.closed) return;
    if (batches.next.length > 0) this.handOver(record);
    else this.keys.letGoIfIdle(record as KeyRecord<unknown, K>);
  }
}
