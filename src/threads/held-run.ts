import type { ObservableInput, Subscriber, Subscription } from 'rxjs';
import { followResult } from '../engine/handler-result';
import type { HandlerContext } from '../engine/mailbox';
import { WHOLE } from './protocol';

type HandlerFn = (message: unknown, context: HandlerContext<unknown>) => ObservableInput<unknown>;

/**
 * A message's handler in a thread, for a dispatcher with a failure policy (see "Held messages" in
 * protocol.ts). It runs the message; when that run fails, it reports the failure and does not end, so
 * the key's next message waits in the mailbox, and the main thread decides: `retry` runs it again (each
 * run's end reported, the message still held), `release` ends it. Only this thread's own key waits:
 * the lane serves other mailboxes meanwhile.
 */
export class HeldRun {
  /** The run going on: a later callback of an earlier (cancelled) run finds a newer number and is ignored. */
  private runs = 0;
  /** The run going on, or the retry waiting for its turn on the lane. */
  private running: Subscription | null = null;

  constructor(
    private readonly fn: HandlerFn,
    private readonly message: unknown,
    /** The key's mailbox, valid until this handler ends: retries run on its lane. */
    private readonly context: HandlerContext<unknown>,
    private readonly subscriber: Subscriber<unknown>,
    /** Tells the main thread how a run of a held message ended. */
    private readonly report: (failed: boolean, error?: unknown) => void,
    /** True once a run failed (or for a held message sent again after its thread died). */
    private held: boolean,
  ) {}

  /** Runs the message (`WHOLE`) or item `item` of it, a batch taken apart, as a batch of one. */
  start(item: number): void {
    const run = ++this.runs;
    const message = item === WHOLE ? ownCopy(this.message) : [(this.message as unknown[])[item]];
    let input: ObservableInput<unknown>;
    try {
      input = this.fn(message, this.context);
    } catch (err) {
      this.ended(run, true, err);
      return;
    }
    const running = followResult(input, this.context.key, {
      resolved: (value) => {
        if (run !== this.runs) return;
        this.subscriber.next(value);
        this.ended(run, false);
      },
      rejected: (err) => this.ended(run, true, err),
      observer: () => ({
        next: (value) => {
          if (run === this.runs) this.subscriber.next(value);
        },
        error: (err) => this.ended(run, true, err),
        complete: () => this.ended(run, false),
      }),
    });
    // Kept only while it runs: one that ended at once left nothing to cancel.
    if (running !== null && run === this.runs && !running.closed) this.running = running;
  }

  /** Runs it again on its key's lane (see `start`). */
  retry(item: number): void {
    // The main thread holds it, even when a value that could not cross failed a run still going here:
    // that run stops first, and the retry's end is reported instead of ending the handler.
    this.cancel();
    this.held = true;
    this.running = this.context.scheduler.schedule(() => {
      this.running = null;
      this.start(item);
    });
  }

  /** The policy is done with it: the handler ends, and the key's next message may start. */
  release(): void {
    this.cancel();
    this.subscriber.complete();
  }

  /** Stops the run going on, if any (the dispatcher ended, or the message was released). */
  cancel(): void {
    this.runs++;
    const running = this.running;
    this.running = null;
    running?.unsubscribe();
  }

  private ended(run: number, failed: boolean, error?: unknown): void {
    if (run !== this.runs) return;
    this.running = null;
    if (!failed && !this.held) {
      this.subscriber.complete();
      return;
    }
    this.held = true;
    this.report(failed, error);
  }
}

/**
 * Each run of a held message gets an array of its own (a batch, or a message that is an array), so what
 * one run did to it reaches neither a retry nor the items a batch taken apart is run from.
 */
function ownCopy(message: unknown): unknown {
  return Array.isArray(message) ? message.slice() : message;
}
