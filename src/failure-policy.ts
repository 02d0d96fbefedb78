import { from, Observable, type ObservableInput, type Subscriber, type Subscription } from 'rxjs';
import { followResult } from './engine/handler-result';
import type { HandlerContext } from './engine/mailbox';
import { callUser, THREW } from './internal/call-user';
import type { MessageObserver } from './internal/message-observer';
import { sharedSlot } from './internal/shared-slot';
import { textOf } from './internal/text-of';
import { warnCallbackFailed } from './internal/warn';
import { wrongAnswer } from './internal/wrong-answer';
import { isKeyFailure } from './key-failure';
import { describe, functionOption, integerOption, MAX_TIMER_MS, optionsObject } from './validate';

/** What a dead-letter handler is told about the message it receives. Safe to keep after the call. */
export interface FailureContext<K> {
  /**
   * The message's key; undefined when the key selector failed for it (threw, or returned no key): such a
   * message comes to the dead letter at once, with what the selector threw, since a key function gives
   * the same answer every time.
   */
  readonly key: K | undefined;
  /** Attempts made, the first one included. */
  readonly attempts: number;
  /**
   * Index of the lane the key's mailbox is pinned to; -1 on thread lanes for a message no thread has
   * (its key selector failed, or it could not be posted).
   */
  readonly laneIndex: number;
}

/** What `onFailure` is told about one failed attempt at a message. Safe to keep after the call. */
export interface FailureReport<T, K> {
  /** The message; for a batch retried as a batch, its first message. */
  readonly message: T;
  /** The message's key; undefined when its key selector failed (threw, or returned no key). */
  readonly key: K | undefined;
  /** The attempt that failed, 1 for the first. */
  readonly attempt: number;
  /** What the handler (or the key selector) threw or errored with. */
  readonly error: unknown;
  /**
   * Where the message came from, as its receiver describes it (`topic 'orders' partition 3 offset
   * 1234`, `stream 'orders' entry 1700000000000-0`); undefined for a source that does not say.
   */
  readonly source: string | undefined;
  /** The delay before the next attempt, in ms; undefined when the policy gives up on the message. */
  readonly retryInMs: number | undefined;
}

/** Exponential backoff between attempts: `min(maxMs, initialMs × factor^(retry − 1))`, then jittered. */
export interface BackoffOptions {
  /** Delay before the first retry, in ms. Number ≥ 0. Default 100. */
  initialMs?: number;
  /** Upper bound of any delay, in ms (jitter included). Number ≥ `initialMs`. Default 10,000. */
  maxMs?: number;
  /** Growth of the delay from one retry to the next. Number ≥ 1. Default 2. */
  factor?: number;
  /**
   * Spread of each delay as a fraction of it: the delay is drawn uniformly from
   * `delay × [1 − jitter, 1 + jitter]`, so keys that failed together do not retry together.
   * Number in [0, 1]. Default 0.5.
   */
  jitter?: number;
}

/** Options of `retryPolicy`. Invalid values throw a `TypeError` naming the option when the policy is created. */
export interface RetryPolicyOptions<T, K> {
  /**
   * Attempts per message, the first one included; 1 means no retry, `Infinity` retries until the
   * handler succeeds (the key's later messages wait meanwhile). Integer ≥ 1, or `Infinity`. Default 3.
   */
  maxAttempts?: number;
  /** Delays between attempts. Default: 100 ms doubling up to 10 s, jitter 0.5. */
  backoff?: BackoffOptions;
  /**
   * Whether an error is worth another attempt (a version conflict, a timeout). Errors it rejects go
   * straight to the dead letter. For a batch, it is asked with the batch's first message; a batch whose
   * error it rejects is taken apart at once. Default: every error is retryable. Asked synchronously:
   * an answer that is not a boolean (an async function's Promise) errors the output with a `TypeError`,
   * as a `retryable` that throws does.
   */
  retryable?: (error: unknown, message: T) => boolean;
  /**
   * Receives a message whose attempts are spent (or whose error is not retryable), with the last
   * error, and a message whose key selector failed, with what it threw (no retries, `context.key`
   * undefined). Once what it returns completes, the message is settled `dead-lettered`: its receiver
   * acknowledges it, the dead letter being its handling. It runs inside the key's mailbox (on the main
   * thread, for thread lanes): the key's next message waits until what it returns completes (values it
   * emits are ignored); a return that is not an object (nothing, a number, a boolean) is ignored. If
   * it throws or errors, that error errors the output, as a handler error does without a policy. Default: none (the message is settled `failed`, and its receiver's `onFailed`
   * says what becomes of it).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a callback with nothing to wait for returns nothing.
  deadLetter?: (message: T, error: unknown, context: FailureContext<K>) => ObservableInput<unknown> | void;
  /**
   * Source of the jitter, a number from 0 to 1. Default `Math.random`; pass a fixed one for reproducible
   * delays (`() => 1` gives each delay's upper bound). Asked synchronously when a retry is scheduled:
   * one that throws, or returns anything but a number from 0 to 1 (NaN, 2, a Promise), errors the output
   * with that error or a `TypeError` naming the key, as `retryable` does.
   */
  random?: () => number;
  /**
   * Told each failed attempt, before the retry is scheduled or the policy gives up: to log it, count
   * it, alert on it. A message whose key selector failed is reported once (`key` undefined). For a
   * batch retried as a batch, told once per failed attempt of the batch, with its first message. A
   * throw or a rejection from it changes nothing for the message: a process warning
   * (`KeyedDispatchWarning`) reports it. Default: none (failures are still counted in the
   * dispatcher's stats, `failedAttempts`).
   */
  onFailure?: (report: FailureReport<T, K>) => void;
}

/**
 * What a dispatcher offers the policy around its handler: where a message came from, for reports, and
 * a count of failed attempts.
 */
export interface PolicyHost<T> {
  /** Where `message` came from, as its receiver describes it; undefined when it does not say. */
  sourceOf(message: T): string | undefined;
  /**
   * An attempt at `messages` failed (a message's, a batch's, or a key selector's): counted once in the
   * stats; a health check reads it as progress of those messages (see `HealthCheck`).
   */
  failedAttempt(messages: readonly T[]): void;
  /** Told where the policy gives up on a message, when a dispatcher is traced. */
  readonly observer?: MessageObserver<T>;
}

/** A handler as a dispatcher calls it: of one message, or of a batch when `T` is an array. */
export type Handle<T, K, R> = (message: T, context: HandlerContext<K>) => ObservableInput<R>;

/**
 * A failure policy around any handler of `T` (messages, or batches of them): what a dispatcher puts
 * around its handler where the handler runs (see `withPolicy`, `withBatchPolicy`).
 */
export type PolicyWrap<T, K> = <R>(handle: Handle<T, K, R>) => Handle<T, K, R>;

/** What `keyedDispatch` does with a handler's error. Create one with `retryPolicy`. */
export interface FailurePolicy<T, K> {
  /** Tells a failure policy from other option values. */
  readonly kind: 'failure-policy';
  /** Phantom field that carries the message and key types; never set. */
  readonly __types?: {
    /** The type of the messages the policy handles. */
    message: T;
    /** The type of their keys. */
    key: K;
  };
}

/** What a policy puts around a handler of messages (`wrap`) or of batches (`wrapBatch`). */
interface Wrappers<T, K> {
  wrap<R>(handle: Handle<T, K, R>, host: PolicyHost<T>): Handle<T, K, R>;
  wrapBatch<R>(handle: Handle<T[], K, R>, host: PolicyHost<T>): Handle<T[], K, R>;
}

/**
 * The wrapper of each policy, and the brand of `GaveUp`: shared slots, so a policy or error made by
 * another copy of the library (its CommonJS build beside the ESM one) is still recognised.
 */
const wrappers = sharedSlot<Wrappers<any, any>>('FailurePolicy.wrap');
const gaveUpBrands = sharedSlot<true>('GaveUp');

/** True for a policy made by `retryPolicy`. */
export function isFailurePolicy(value: unknown): value is FailurePolicy<unknown, unknown> {
  return wrappers.of(value) !== undefined;
}

/** `handle` with `policy` around it: its failures retried, then dead-lettered. */
export function withPolicy<T, K, R>(
  policy: FailurePolicy<T, K>,
  handle: Handle<T, K, R>,
  host: PolicyHost<T>,
): Handle<T, K, R> {
  return (wrappers.of(policy) as Wrappers<T, K>).wrap(handle, host);
}

/**
 * A batch handler with `policy` around it. A failed batch is retried as a batch (`retryable` is asked
 * with its first message); once its attempts are spent, or its error is not retryable, the batch is
 * taken apart: its messages run one at a time, in order, each as a batch of one with attempts of its
 * own, so only the messages that keep failing are dead-lettered. It then errors with a `BatchFailures`
 * naming them, or completes when every message was handled in the end.
 */
export function withBatchPolicy<T, K, R>(
  policy: FailurePolicy<T, K>,
  handle: Handle<T[], K, R>,
  host: PolicyHost<T>,
): Handle<T[], K, R> {
  return (wrappers.of(policy) as Wrappers<T, K>).wrapBatch(handle, host);
}

/**
 * Raised by a wrapped handler once the policy has given up on a message: the dispatcher settles the
 * message as failed with `cause` and goes on with the stream instead of erroring it.
 */
export class GaveUp extends Error {
  override name = 'GaveUp';
  constructor(
    override readonly cause: unknown,
    readonly attempts: number,
    /** The dead letter dealt with the message: it is settled `dead-lettered`, not `failed`. */
    readonly deadLettered: boolean,
  ) {
    super(`gave up after ${attempts} attempt(s)`);
    gaveUpBrands.attach(this, true);
  }
}

/** True for a `GaveUp` of any copy of the library. */
export function isGaveUp(error: unknown): error is GaveUp {
  return gaveUpBrands.of(error) === true;
}

const batchFailuresBrands = sharedSlot<true>('BatchFailures');
/** On a batch of one that a policy made of a batch it took apart: the message's position in that batch. */
const pieces = sharedSlot<number>('BatchPiece');

/** Where a batch of one that a policy made when it took a batch apart comes from (undefined for any other batch). */
export function pieceOf(batch: unknown): number | undefined {
  return pieces.of(batch);
}

/**
 * Raised by a batch handler under a policy once it has taken a failed batch apart: the `GaveUp` of
 * each message the policy gave up on, by position in the batch (undefined for those handled). With
 * `failure`, the policy itself failed (a dead letter threw) on the message after the last outcome.
 */
export class BatchFailures extends Error {
  override name = 'BatchFailures';
  constructor(
    readonly outcomes: ReadonlyArray<GaveUp | undefined>,
    readonly failure?: { error: unknown },
  ) {
    super(
      `gave up on ${outcomes.filter((o) => o !== undefined).length} message(s) of a batch of ${outcomes.length}`,
    );
    batchFailuresBrands.attach(this, true);
  }
}

/** True for a `BatchFailures` of any copy of the library. */
export function isBatchFailures(error: unknown): error is BatchFailures {
  return batchFailuresBrands.of(error) === true;
}

interface ResolvedRetryPolicy<T, K> {
  maxAttempts: number;
  initialMs: number;
  maxMs: number;
  factor: number;
  jitter: number;
  retryable: (error: unknown, message: T) => boolean;
  deadLetter: RetryPolicyOptions<T, K>['deadLetter'];
  random: () => number;
  onFailure: RetryPolicyOptions<T, K>['onFailure'];
}

/**
 * A failure policy for `keyedDispatch({ failurePolicy })`: a failed handler is run again after a backoff,
 * up to `maxAttempts` attempts, for errors `retryable` accepts; then the message goes to `deadLetter`,
 * is settled as failed (the receiver can nack it or route it to a dead-letter queue) and the stream
 * goes on. Retries happen inside the key's mailbox: the backoff timer runs on the mailbox's lane, which
 * serves other keys meanwhile, while the key's later messages wait, so per-key order holds. On thread
 * lanes the policy runs on the main thread while the key's thread holds the failed message (retries run
 * there, the dead letter here). With `keyedBatchDispatch` a failed batch is retried as a batch, then
 * taken apart so that only the messages that keep failing are dead-lettered.
 * Values emitted by a failed attempt have already been emitted; a retry emits its own.
 */
export function retryPolicy<T, K>(options: RetryPolicyOptions<T, K> = {}): FailurePolicy<T, K> {
  optionsObject('retryPolicy', options, [
    'maxAttempts',
    'backoff',
    'retryable',
    'deadLetter',
    'random',
    'onFailure',
  ] satisfies Array<keyof RetryPolicyOptions<T, K>>);
  const backoff = options.backoff === undefined ? {} : options.backoff;
  if (backoff === null || typeof backoff !== 'object') {
    throw new TypeError(
      `retryPolicy: expected \`backoff\` to be an options object, got ${describe(backoff)}`,
    );
  }
  const initialMs = numberOption('backoff.initialMs', backoff.initialMs, 100, 0, MAX_TIMER_MS);
  const policy: ResolvedRetryPolicy<T, K> = {
    // Infinity: retried until it succeeds.
    maxAttempts:
      options.maxAttempts === Number.POSITIVE_INFINITY
        ? options.maxAttempts
        : integerOption('retryPolicy', 'maxAttempts', options.maxAttempts, 3, 1),
    initialMs,
    maxMs: numberOption('backoff.maxMs', backoff.maxMs, Math.max(10_000, initialMs), initialMs, MAX_TIMER_MS),
    factor: numberOption('backoff.factor', backoff.factor, 2, 1, Number.POSITIVE_INFINITY),
    jitter: numberOption('backoff.jitter', backoff.jitter, 0.5, 0, 1),
    retryable:
      options.retryable === undefined
        ? always
        : functionOption('retryPolicy', 'retryable', options.retryable),
    deadLetter:
      options.deadLetter === undefined
        ? undefined
        : functionOption('retryPolicy', 'deadLetter', options.deadLetter),
    random:
      options.random === undefined ? Math.random : functionOption('retryPolicy', 'random', options.random),
    onFailure:
      options.onFailure === undefined
        ? undefined
        : functionOption('retryPolicy', 'onFailure', options.onFailure),
  };
  const failurePolicy: FailurePolicy<T, K> = { kind: 'failure-policy' };
  // Not enumerable: the public object stays `{ kind }`.
  wrappers.attach(failurePolicy, { wrap, wrapBatch });
  return failurePolicy;

  function wrapBatch<R>(handle: Handle<T[], K, R>, host: PolicyHost<T>): Handle<T[], K, R> {
    /**
     * Message `index` of `batch` alone, as a batch of one under the policy as it is. The batch of one
     * says where it comes from (`pieceOf`): on thread lanes, the thread that holds the batch runs it.
     */
    const one = (batch: T[], index: number, context: HandlerContext<K>): ObservableInput<R> => {
      const piece = index === 0 && batch.length === 1 ? batch : [batch[index] as T];
      if (piece !== batch) pieces.attach(piece, index);
      return wrap<R>((_message, ctx) => handle(piece, ctx), host)(batch[index] as T, context);
    };
    // The batch's own attempts have no dead letter: giving up on the batch means taking it apart.
    // A batch is reported as its first message, as `retryable` is asked.
    const onFailure = policy.onFailure;
    const asBatch: ResolvedRetryPolicy<T[], K> = {
      ...policy,
      retryable: (error, batch) => policy.retryable(error, batch[0] as T),
      deadLetter: undefined,
      onFailure: onFailure && ((report) => onFailure({ ...report, message: report.message[0] as T })),
    };
    const batchHost: PolicyHost<T[]> = {
      sourceOf: (batch) => host.sourceOf(batch[0] as T),
      failedAttempt: ([batch]) => host.failedAttempt(batch as T[]),
    };
    const attempts = (
      batch: T[],
      context: HandlerContext<K>,
      first: (attempts: Attempts<T[], K, R>) => () => void,
    ): Observable<R> =>
      new Observable<R>((subscriber) => {
        const isolation = new Isolation(one, batch, context, subscriber);
        const stop = first(
          new Attempts(asBatch, batchHost, handle, batch, context, {
            next: (value) => subscriber.next(value),
            complete: () => subscriber.complete(),
            error: (err) => (isGaveUp(err) ? isolation.start() : subscriber.error(err)),
          }),
        );
        return () => {
          stop();
          isolation.cancel();
        };
      });
    return (batch, context) => {
      if (batch.length === 1) return one(batch, 0, context);
      let input: ObservableInput<R>;
      try {
        input = handle(batch, context);
      } catch (err) {
        return attempts(batch, context, (a) => a.failed(err));
      }
      // An array cannot fail any more, as with `wrap`.
      if (Array.isArray(input)) return input;
      return attempts(batch, context, (a) => a.follow(input));
    };
  }

  function wrap<R>(handle: Handle<T, K, R>, host: PolicyHost<T>): Handle<T, K, R> {
    return (message, context) => {
      const key: unknown = context.key;
      if (isKeyFailure(key)) {
        return new Observable<R>((subscriber) =>
          new Attempts(policy, host, handle, message, context, subscriber).deadLetter(key.error),
        );
      }
      let input: ObservableInput<R>;
      try {
        input = handle(message, context);
      } catch (err) {
        return new Observable<R>((subscriber) =>
          new Attempts(policy, host, handle, message, context, subscriber).failed(err),
        );
      }
      // An array cannot fail any more: no wrapping, so the policy costs nothing on that path.
      if (Array.isArray(input)) return input;
      return new Observable<R>((subscriber) =>
        new Attempts(policy, host, handle, message, context, subscriber).follow(input),
      );
    };
  }
}

/** The delay before retry number `retry` (1 for the first retry), jittered by `drawn`, a number from 0 to 1. */
export function backoffDelay(
  policy: Pick<ResolvedRetryPolicy<unknown, unknown>, 'initialMs' | 'maxMs' | 'factor' | 'jitter'>,
  retry: number,
  drawn: number,
): number {
  // Past a thousand retries `factor ** n` is Infinity, and 0 × Infinity is NaN: no growth from 0.
  const base =
    policy.initialMs === 0 ? 0 : Math.min(policy.maxMs, policy.initialMs * policy.factor ** (retry - 1));
  const jittered = base * (1 + policy.jitter * (2 * drawn - 1));
  return Math.min(policy.maxMs, Math.max(0, jittered));
}

/** The attempts at one message: follows the running one, waits out a backoff, or runs the dead letter. */
class Attempts<T, K, R> {
  /** Attempts started so far. */
  private attempt = 1;
  /** The running attempt, backoff timer or dead-letter handler: cancelled if the dispatcher tears down. */
  private running: Subscription | null = null;
  private done = false;
  /**
   * Where a failure of the policy's own user code goes (`retryable`, `random`, `deadLetter` throwing,
   * rejecting or answering amiss): the output errors, as a handler error does without a policy.
   */
  private readonly policyFailed = (err: unknown): void => this.subscriber.error(err);

  constructor(
    private readonly policy: ResolvedRetryPolicy<T, K>,
    private readonly host: PolicyHost<T>,
    private readonly handle: Handle<T, K, R>,
    private readonly message: T,
    private readonly context: HandlerContext<K>,
    private readonly subscriber: Pick<Subscriber<R>, 'next' | 'error' | 'complete'>,
  ) {}

  /** Subscribes to an attempt's result; returns the teardown of everything this object starts. */
  follow(input: ObservableInput<R>): () => void {
    const attempt = this.attempt;
    const subscription = followResult(input, this.context.key, {
      resolved: (value) => {
        if (this.done) return;
        this.subscriber.next(value);
        this.subscriber.complete();
      },
      rejected: (err) => {
        if (!this.done) this.failed(err);
      },
      observer: () => ({
        next: (value) => this.subscriber.next(value),
        error: (err) => this.failed(err),
        complete: () => this.subscriber.complete(),
      }),
    });
    // A synchronous failure already moved on to a backoff or a dead letter: keep that one.
    if (subscription !== null && this.attempt === attempt && this.running === null && !this.done)
      this.running = subscription;
    return () => this.cancel();
  }

  /**
   * The attempt failed: retry after a backoff or give up. A `retryable` or `random` that throws or
   * answers wrongly errors the output, whether the failure was synchronous, a rejection or an erroring
   * Observable (this runs in their callbacks, where nothing else would catch it).
   */
  failed(error: unknown): () => void {
    this.running = null;
    const retry = this.attempt < this.policy.maxAttempts ? this.retryable(error) : false;
    if (retry === false) {
      this.report(error, undefined);
      this.giveUp(error);
    } else if (retry === true) {
      const delay = this.backoff();
      if (delay !== undefined) {
        this.report(error, delay);
        this.running = this.context.scheduler.schedule(() => this.retry(), delay);
      }
    }
    return () => this.cancel();
  }

  /**
   * The delay before the next attempt. A `random` answer outside [0, 1] (NaN, a string, a Promise) throws,
   * as `retryable`'s non-boolean does; 1 itself is taken, so a fixed `() => 1` gives the longest delay.
   */
  private backoff(): number | undefined {
    const drawn: unknown = callUser(this.policy.random, undefined, undefined, undefined, this.policyFailed);
    if (typeof drawn === 'number' && drawn >= 0 && drawn <= 1)
      return backoffDelay(this.policy, this.attempt, drawn);
    if (drawn !== THREW)
      this.policyFailed(wrongAnswer('retryPolicy: `random`', drawn, this.forKey(), 'a number from 0 to 1'));
    return undefined;
  }

  /** What `retryable` answers, a boolean; undefined once it failed (threw, or answered anything else). */
  private retryable(error: unknown): boolean | undefined {
    const answer: unknown = callUser(
      this.policy.retryable,
      error,
      this.message,
      undefined,
      this.policyFailed,
    );
    if (typeof answer === 'boolean') return answer;
    if (answer !== THREW)
      this.policyFailed(wrongAnswer('retryPolicy: `retryable`', answer, this.forKey(), 'a boolean'));
    return undefined;
  }

  private forKey(): string {
    return `for key ${textOf(this.context.key)}`;
  }

  /** Straight to the dead letter: the message's key selector failed with `error`. */
  deadLetter(error: unknown): () => void {
    this.report(error, undefined);
    this.giveUp(error);
    return () => this.cancel();
  }

  /** Counts a failed attempt and tells `onFailure`, whose own failure is ignored. */
  private report(error: unknown, retryInMs: number | undefined): void {
    this.host.failedAttempt([this.message]);
    const onFailure = this.policy.onFailure;
    if (onFailure === undefined) return;
    const key: unknown = this.context.key;
    const report: FailureReport<T, K> = {
      message: this.message,
      key: isKeyFailure(key) ? undefined : (key as K),
      attempt: this.attempt,
      error,
      source: this.host.sourceOf(this.message),
      retryInMs,
    };
    callUser(onFailure, report, undefined, undefined, onFailureFailed);
  }

  private retry(): void {
    if (this.done) return;
    this.attempt++;
    this.running = null;
    let input: ObservableInput<R>;
    try {
      input = this.handle(this.message, this.context);
    } catch (err) {
      this.failed(err);
      return;
    }
    this.follow(input);
  }

  private giveUp(error: unknown): void {
    const deadLetter = this.policy.deadLetter;
    const observer = this.host.observer;
    const given: unknown = this.context.key;
    const key = isKeyFailure(given) ? undefined : (given as K);
    if (deadLetter === undefined) {
      observer?.failed(this.message, key, error, this.attempt);
      this.subscriber.error(new GaveUp(error, this.attempt, false));
      return;
    }
    const gaveUp = new GaveUp(error, this.attempt, true);
    const context: FailureContext<K> = { key, attempts: this.attempt, laneIndex: this.context.laneIndex };
    const call = () => callUser(deadLetter, this.message, error, context, this.policyFailed);
    const output =
      observer === undefined ? call() : observer.deadLetter(this.message, key, error, this.attempt, call);
    if (output === THREW) return;
    // Only an object (Observable, Promise, array, iterable) is something to wait for; anything else
    // (nothing, a number, a flag a logger returned) is ignored.
    if (output === null || (typeof output !== 'object' && typeof output !== 'function')) {
      this.subscriber.error(gaveUp);
      return;
    }
    try {
      this.running = from(output as ObservableInput<unknown>).subscribe({
        error: (err) => this.subscriber.error(err),
        complete: () => this.subscriber.error(gaveUp),
      });
    } catch (err) {
      this.subscriber.error(err);
    }
  }

  private cancel(): void {
    this.done = true;
    const running = this.running;
    this.running = null;
    running?.unsubscribe();
  }
}

/**
 * A batch taken apart: its messages one at a time, in order, each under the policy of its own. It
 * completes when every message was handled in the end, else errors with a `BatchFailures`; a failure
 * that is not the policy giving up (a dead letter that threw) errors it at once.
 */
class Isolation<T, K, R> {
  /** Per message run so far: the `GaveUp` of those the policy gave up on, undefined for the others. */
  private readonly outcomes: Array<GaveUp | undefined> = [];
  private running: Subscription | null = null;
  private cancelled = false;

  constructor(
    private readonly one: (batch: T[], index: number, context: HandlerContext<K>) => ObservableInput<R>,
    private readonly batch: T[],
    private readonly context: HandlerContext<K>,
    private readonly subscriber: Subscriber<R>,
  ) {}

  /** Runs the messages, from the first; one that ends at once lets the next start in this loop, not deeper. */
  start(): void {
    while (!this.cancelled) {
      const index = this.outcomes.length;
      if (index === this.batch.length) {
        if (this.outcomes.every((o) => o === undefined)) this.subscriber.complete();
        else this.subscriber.error(new BatchFailures(this.outcomes));
        return;
      }
      let starting = true;
      let ended = false;
      const settled = (outcome: GaveUp | undefined) => {
        this.running = null;
        this.outcomes.push(outcome);
        ended = true;
        if (!starting) this.start();
      };
      const running = from(this.one(this.batch, index, this.context)).subscribe({
        next: (value) => this.subscriber.next(value),
        // A dead letter that failed errors the output, as it does outside a batch, naming its message.
        error: (err) =>
          isGaveUp(err)
            ? settled(err)
            : this.subscriber.error(new BatchFailures(this.outcomes, { error: err })),
        complete: () => settled(undefined),
      });
      starting = false;
      if (!ended) {
        this.running = running;
        return;
      }
    }
  }

  cancel(): void {
    this.cancelled = true;
    this.running?.unsubscribe();
    this.running = null;
  }
}

function always(): boolean {
  return true;
}

/** A failing `onFailure` is a bug in monitoring code: reported, never in the message's way. */
function onFailureFailed(error: unknown): void {
  warnCallbackFailed('retryPolicy onFailure', 'the message goes on as before', error);
}

/** Validates an optional number option within [min, max]. */
function numberOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value < min || value > max) {
    const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `between ${min} and ${max}`;
    throw new TypeError(`retryPolicy: expected \`${name}\` to be a number ${range}, got ${describe(value)}`);
  }
  return value;
}
