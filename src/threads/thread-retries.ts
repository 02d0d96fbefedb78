import { asyncScheduler, from, Observable, type Subscriber, type Subscription, throwError } from 'rxjs';
import type { HandlerContext } from '../engine/mailbox';
import { type Handle, type PolicyWrap, pieceOf } from '../failure-policy';
import { WHOLE } from './protocol';
import type { PostedMessage } from './thread-lanes';

/** One message the policy is dealing with. */
interface Entry<T, K> {
  /** Its posting; null for a message whose key selector failed (it never reaches a thread). */
  readonly posted: PostedMessage | null;
  readonly message: T;
  readonly key: K;
  /** The failure its thread reported, which the policy's first call of the handler returns. */
  first: { error: unknown } | null;
  /** Set once the message left its thread for good (its thread died and could not take it back). */
  gone: { error: unknown } | null;
  /** The run going on in its thread, waiting for its end. */
  waiter: Subscriber<never> | null;
  subscription: Subscription | null;
  ended: boolean;
}

/** What the thread router does for `ThreadRetries`. */
export interface RetriesOwner<T, K, R> {
  emit(value: R): void;
  /** Its thread runs a held message again: itself (`WHOLE`), or item `item` of it alone. */
  retry(posted: PostedMessage, item: number): void;
  /** The policy is done with `message`: handled in the end (`failed` false), or given up on. */
  decided(posted: PostedMessage | null, message: T, key: K, failed: boolean, error: unknown): void;
}

/**
 * The failure policy of a dispatcher on thread lanes, on the main thread, where the policy's functions
 * live. A message whose run failed stays held in its thread (its key waits there, other keys go on);
 * here the policy retries it — after its backoff, its thread runs it again — or takes a failed batch
 * apart, and gives up with the dead letter, which runs here. Then the thread lets the key go on.
 */
export class ThreadRetries<T, K, R> {
  private readonly entries = new Set<Entry<T, K>>();
  private readonly byPosting = new Map<PostedMessage, Entry<T, K>>();

  constructor(
    private readonly policy: PolicyWrap<T, K>,
    private readonly owner: RetriesOwner<T, K, R>,
  ) {}

  /**
   * A run of a held message ended in its thread: the end of the retry the policy waits for, or the first
   * failure, which starts the policy.
   */
  ran(posted: PostedMessage, failed: boolean, error: unknown): void {
    const entry = this.byPosting.get(posted);
    if (entry === undefined) {
      this.start(posted, posted.message as T, posted.key as K, posted.placement.slot.index, error, false);
      return;
    }
    const waiter = entry.waiter;
    entry.waiter = null;
    if (failed) waiter?.error(error);
    else waiter?.complete();
  }

  /**
   * The message left its thread with `error` (it could not be posted, or its thread died for good):
   * every run the policy asks for fails with it, so the policy ends with its dead letter.
   */
  gone(posted: PostedMessage, error: unknown): void {
    const entry = this.byPosting.get(posted);
    if (entry === undefined) {
      this.start(posted, posted.message as T, posted.key as K, posted.placement.slot.index, error, true);
      return;
    }
    entry.gone = { error };
    const waiter = entry.waiter;
    entry.waiter = null;
    waiter?.error(error);
  }

  /**
   * A message no thread will run: its key selector failed (the policy sends it to the dead letter at
   * once), or it could not be posted with `error` (each run the policy asks for fails with it).
   */
  unposted(key: K, message: T, error: unknown): void {
    this.start(null, message, key, -1, error, true);
  }

  /** Messages the policy deals with that no thread holds. */
  outsideThreads(): T[] {
    const messages: T[] = [];
    for (const entry of this.entries) if (entry.gone !== null) messages.push(entry.message);
    return messages;
  }

  /** The dispatcher stops: backoffs and dead letters are cancelled (the threads cancel their runs). */
  cancel(): void {
    const entries = [...this.entries];
    this.entries.clear();
    this.byPosting.clear();
    for (const entry of entries) {
      entry.ended = true;
      entry.subscription?.unsubscribe();
    }
  }

  private start(
    posted: PostedMessage | null,
    message: T,
    key: K,
    laneIndex: number,
    error: unknown,
    gone: boolean,
  ): void {
    const entry: Entry<T, K> = {
      posted,
      message,
      key,
      first: { error },
      gone: gone ? { error } : null,
      waiter: null,
      subscription: null,
      ended: false,
    };
    this.entries.add(entry);
    if (posted !== null) this.byPosting.set(posted, entry);
    // Backoff timers run here; the key waits in its thread meanwhile.
    const context: HandlerContext<K> = { key, scheduler: asyncScheduler, laneIndex };
    let subscription: Subscription;
    try {
      subscription = from(this.policy(this.remote<R>(entry))(message, context)).subscribe({
        next: (value) => this.owner.emit(value),
        error: (err) => this.end(entry, true, err),
        complete: () => this.end(entry, false, undefined),
      });
    } catch (err) {
      this.end(entry, true, err);
      return;
    }
    if (!entry.ended) entry.subscription = subscription;
  }

  /**
   * The handler the policy calls for `entry`: its first call returns the failure the thread reported;
   * each later call has the thread run the message again (or one item of it) and follows that run.
   */
  private remote<V>(entry: Entry<T, K>): Handle<T, K, V> {
    return (payload) => {
      const failure = entry.first ?? entry.gone;
      entry.first = null;
      if (failure !== null) return throwError(() => failure.error);
      const posted = entry.posted as PostedMessage;
      const item = payload === posted.message ? WHOLE : (pieceOf(payload) ?? WHOLE);
      return new Observable<V>((subscriber) => {
        entry.waiter = subscriber as Subscriber<never>;
        this.owner.retry(posted, item);
        return () => {
          if (entry.waiter === subscriber) entry.waiter = null;
        };
      });
    };
  }

  private end(entry: Entry<T, K>, failed: boolean, error: unknown): void {
    if (entry.ended) return;
    entry.ended = true;
    this.entries.delete(entry);
    if (entry.posted !== null) this.byPosting.delete(entry.posted);
    this.owner.decided(entry.posted, entry.message, entry.key, failed, error);
  }
}
