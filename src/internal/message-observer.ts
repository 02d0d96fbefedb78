import type { MessageWait } from './message-wait';
import { sharedSlot } from './shared-slot';

/**
 * What a traced dispatcher is told about single messages beyond their handler's runs: where they park,
 * where the failure policy gives up on them, and, on thread lanes, how long they waited before posting.
 * Internal: `traced` installs one through the options object; without one nothing of this runs.
 */
export interface MessageObserver<T> {
  /** The message parked: its key holds its share of the window. */
  parked(message: T): void;
  /** The message left the parking area (into the window, or taken back). */
  unparked(message: T): void;
  /**
   * The policy gave up on the message after `attempts`, with no dead letter: it settles `failed`. `key`
   * is undefined when the key selector failed for it.
   */
  failed(message: T, key: unknown, error: unknown, attempts: number): void;
  /** The policy gives up and `call`s the dead letter; returns what `call` returned, or what follows it. */
  deadLetter(message: T, key: unknown, error: unknown, attempts: number, call: () => unknown): unknown;
  /** When the message started waiting for its handler, for a thread to tell; undefined when not known. */
  waited(message: T): MessageWait | undefined;
}

const observers = sharedSlot<MessageObserver<any>>('MessageObserver');

/** Installs `observer` on a `keyedDispatch` options object (not enumerable: the options show none of it). */
export function observeMessages<T>(options: object, observer: MessageObserver<T>): void {
  observers.attach(options, observer);
}

/** The observer installed on `options`, if any. */
export function messageObserverOf<T>(options: unknown): MessageObserver<T> | undefined {
  return observers.of(options);
}
