import { from, Observable, type ObservableInput, type Subscriber, type Subscription } from 'rxjs';
import type { HandlerContext } from './engine/mailbox';
import { sharedSlot } from './internal/shared-slot';
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
  /** Index of the lane the key's mailbox is pinned to. */
  readonly laneIndex: number;
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
  /** Attempts per message, the first one included; 1 means no retry. Integer ≥ 1. Default 3. */
  maxAttempts?: number;
  /** Delays between attempts. Default: 100 ms doubling up to 10 s, jitter 0.5. */
  backoff?: BackoffOptions;
  /**
   * Whether an error is worth another attempt (a version conflict, a timeout). Errors it rejects go
   * straight to the dead letter. Default: every error is retryable.
   */
  retryable?: (error: unknown, message: T) => boolean;
  /**
   * Receives a message whose attempts are spent (or whose error is not retryable), with the last
   * error, and a message whose key selector failed, with what it threw (no retries, `context.key`
   * undefined). Once what it returns completes, the message is settled `dead-lettered`: its receiver
   * acknowledges it, the dead letter being its handling. It runs inside the key's mailbox: the key's next message waits until what it returns
   * completes (values it emits are ignored); a return that is not an object (nothing, a number, a
   * boolean) is ignored. If it throws or errors, that error errors the output, as a handler error does
   * without a policy. Default: none (the message is settled `failed`, and its receiver's `onFailed`
   * says what becomes of it).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a callback with nothing to wait for returns nothing.
  deadLetter?: (message: T, error: unknown, context: FailureContext<K>) => ObservableInput<unknown> | void;
  /** Source of the jitter, a number in [0, 1). Default `Math.random`; pass a fixed one for reproducible delays. */
  random?: () => number;
}

type Handle<T, K, R> = (message: T, context: HandlerContext<K>) => ObservableInput<R>;

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

/** Wraps a handler so its failures are retried, then dead-lettered, inside the key's mailbox. */
type Wrap<T, K> = <R>(handle: Handle<T, K, R>) => Handle<T, K, R>;

/**
 * The wrapper of each policy, and the brand of `GaveUp`: shared slots, so a policy or error made by
 * another copy of the library (its CommonJS build beside the ESM one) is still recognised.
 */
const wrappers = sharedSlot<Wrap<any, any>>('FailurePolicy.wrap');
const gaveUpBrands = sharedSlot<true>('GaveUp');

/** True for a policy made by `retryPolicy`. */
export function isFailurePolicy(value: unknown): value is FailurePolicy<unknown, unknown> {
  return typeof wrappers.of(value) === 'function';
}

/** `handle` with `policy` around it: its failures retried, then dead-lettered. */
export function withPolicy<T, K, R>(policy: FailurePolicy<T, K>, handle: Handle<T, K, R>): Handle<T, K, R> {
  return (wrappers.of(policy) as Wrap<T, K>)(handle);
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

interface ResolvedRetryPolicy<T, K> {
  maxAttempts: number;
  initialMs: number;
  maxMs: number;
  factor: number;
  jitter: number;
  retryable: (error: unknown, message: T) => boolean;
  deadLetter: RetryPolicyOptions<T, K>['deadLetter'];
  random: () => number;
}

/**
 * A failure policy for `keyedDispatch({ failurePolicy })`: a failed handler is run again after a backoff,
 * up to `maxAttempts` attempts, for errors `retryable` accepts; then the message goes to `deadLetter`,
 * is settled as failed (the receiver can nack it or route it to a dead-letter queue) and the stream
 * goes on. Retries happen inside the key's mailbox: the backoff timer runs on the mailbox's lane, which
 * serves other keys meanwhile, while the key's later messages wait, so per-key order holds.
 * Values emitted by a failed attempt have already been emitted; a retry emits its own.
 */
export function retryPolicy<T, K>(options: RetryPolicyOptions<T, K> = {}): FailurePolicy<T, K> {
  optionsObject('retryPolicy', options, [
    'maxAttempts',
    'backoff',
    'retryable',
    'deadLetter',
    'random',
  ] satisfies Array<keyof RetryPolicyOptions<T, K>>);
  const backoff = options.backoff === undefined ? {} : options.backoff;
  if (backoff === null || typeof backoff !== 'object') {
    throw new TypeError(
      `retryPolicy: expected \`backoff\` to be an options object, got ${describe(backoff)}`,
    );
  }
  const initialMs = numberOption('backoff.initialMs', backoff.initialMs, 100, 0, MAX_TIMER_MS);
  const policy: ResolvedRetryPolicy<T, K> = {
    maxAttempts: integerOption('retryPolicy', 'maxAttempts', options.maxAttempts, 3, 1),
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
  };
  const failurePolicy: FailurePolicy<T, K> = { kind: 'failure-policy' };
  // Not enumerable: the public object stays `{ kind }`.
  wrappers.attach(failurePolicy, wrap);
  return failurePolicy;

  function wrap<R>(handle: Handle<T, K, R>): Handle<T, K, R> {
    return (message, context) => {
      const key: unknown = context.key;
      if (isKeyFailure(key)) {
        return new Observable<R>((subscriber) =>
          new Attempts(policy, handle, message, context, subscriber).deadLetter(key.error),
        );
      }
      let input: ObservableInput<R>;
      try {
        input = handle(message, context);
      } catch (err) {
        return new Observable<R>((subscriber) =>
          new Attempts(policy, handle, message, context, subscriber).failed(err),
        );
      }
      // An array cannot fail any more: no wrapping, so the policy costs nothing on that path.
      if (Array.isArray(input)) return input;
      return new Observable<R>((subscriber) =>
        new Attempts(policy, handle, message, context, subscriber).follow(input),
      );
    };
  }
}

/** The delay before retry number `retry` (1 for the first retry). */
export function backoffDelay(
  policy: Pick<ResolvedRetryPolicy<unknown, unknown>, 'initialMs' | 'maxMs' | 'factor' | 'jitter' | 'random'>,
  retry: number,
): number {
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** (retry - 1));
  const jittered = base * (1 + policy.jitter * (2 * policy.random() - 1));
  return Math.min(policy.maxMs, Math.max(0, jittered));
}

/** The attempts at one message: follows the running one, waits out a backoff, or runs the dead letter. */
class Attempts<T, K, R> {
  /** Attempts started so far. */
  private attempt = 1;
  /** The running attempt, backoff timer or dead-letter handler: cancelled if the dispatcher tears down. */
  private running: Subscription | null = null;
  private done = false;

  constructor(
    private readonly policy: ResolvedRetryPolicy<T, K>,
    private readonly handle: Handle<T, K, R>,
    private readonly message: T,
    private readonly context: HandlerContext<K>,
    private readonly subscriber: Subscriber<R>,
  ) {}

  /** Subscribes to an attempt's result; returns the teardown of everything this object starts. */
  follow(input: ObservableInput<R>): () => void {
    if (isPromiseLike<R>(input)) {
      // Promises are followed directly: no Observable layer on the common async path.
      input.then(
        (value) => {
          if (this.done) return;
          this.subscriber.next(value);
          this.subscriber.complete();
        },
        (err) => {
          if (!this.done) this.failed(err);
        },
      );
      return () => this.cancel();
    }
    const attempt = this.attempt;
    let subscription: Subscription;
    try {
      subscription = from(input).subscribe({
        next: (value) => this.subscriber.next(value),
        error: (err) => this.failed(err),
        complete: () => this.subscriber.complete(),
      });
    } catch (err) {
      // `from` rejects a value that is not an ObservableInput: a failure like any other.
      return this.failed(err);
    }
    // A synchronous failure already moved on to a backoff or a dead letter: keep that one.
    if (this.attempt === attempt && this.running === null && !this.done) this.running = subscription;
    return () => this.cancel();
  }

  failed(error: unknown): () => void {
    const { policy, message } = this;
    let retry: boolean;
    try {
      retry = this.attempt < policy.maxAttempts && Boolean(policy.retryable(error, message));
    } catch (err) {
      this.subscriber.error(err);
      return () => this.cancel();
    }
    this.running = null;
    if (retry) {
      this.running = this.context.scheduler.schedule(() => this.retry(), backoffDelay(policy, this.attempt));
    } else {
      this.giveUp(error);
    }
    return () => this.cancel();
  }

  /** Straight to the dead letter: the message's key selector failed with `error`. */
  deadLetter(error: unknown): () => void {
    this.giveUp(error);
    return () => this.cancel();
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
    if (deadLetter === undefined) {
      this.subscriber.error(new GaveUp(error, this.attempt, false));
      return;
    }
    const gaveUp = new GaveUp(error, this.attempt, true);
    const key: unknown = this.context.key;
    const context: FailureContext<K> = {
      key: isKeyFailure(key) ? undefined : (key as K),
      attempts: this.attempt,
      laneIndex: this.context.laneIndex,
    };
    let output: unknown;
    try {
      output = deadLetter(this.message, error, context);
    } catch (err) {
      this.subscriber.error(err);
      return;
    }
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

function isPromiseLike<R>(value: unknown): value is PromiseLike<R> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<R>).then === 'function';
}

function always(): boolean {
  return true;
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
