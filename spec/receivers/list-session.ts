import {
  NOTHING,
  PullSession,
  type ReceiverSink,
  type SettledListener,
  type Settlement,
} from 'keyed-dispatch';

/** Everything a session told its sink, in order. */
export class RecordingSink<T> implements ReceiverSink<T> {
  readonly events: string[] = [];
  readonly delivered: T[] = [];
  /** Queued in the consumer and not started: what `discard` may take back. */
  readonly queued: T[] = [];
  /** Called inside `next`, to act from within a delivery. */
  onNext: (message: T) => void = () => undefined;
  private depth = 0;
  maxDepth = 0;

  next(message: T): void {
    this.maxDepth = Math.max(this.maxDepth, ++this.depth);
    this.events.push(`next ${String(message)}`);
    this.delivered.push(message);
    try {
      this.onNext(message);
    } finally {
      this.depth--;
    }
  }

  error(err: unknown): void {
    this.events.push(`error ${(err as Error).message}`);
  }

  complete(): void {
    this.events.push('complete');
  }

  settleFailed(err: unknown): void {
    this.events.push(`settle failed ${(err as Error).message}`);
  }

  discard(matches: (message: T) => boolean): T[] {
    const taken = this.queued.filter(matches);
    this.queued.splice(0, this.queued.length, ...this.queued.filter((m) => !matches(m)));
    return taken;
  }
}

export interface Hooks {
  acknowledge?: (message: string, outcome: Settlement) => void | Promise<void>;
  stopFetching?: () => void;
  close?: () => void | Promise<void>;
}

/** A session over a list the spec fills: `take()` hands out its items; hooks record what the core calls. */
export class ListSession extends PullSession<string> {
  readonly items: string[] = [];
  readonly calls: string[] = [];

  constructor(
    sink: ReceiverSink<string>,
    private readonly hooks: Hooks = {},
    onSettled?: SettledListener<string>,
  ) {
    super(sink, onSettled);
  }

  push(...items: string[]): void {
    this.items.push(...items);
    this.drain();
  }

  protected override take(): string | typeof NOTHING {
    return this.items.shift() ?? NOTHING;
  }

  protected override acknowledge(message: string, outcome: Settlement): void | Promise<void> {
    this.calls.push(`acknowledge ${message} ${outcome}`);
    return this.hooks.acknowledge?.(message, outcome);
  }

  protected override stopFetching(): void {
    this.calls.push('stopFetching');
    this.hooks.stopFetching?.();
  }

  protected override close(): void | Promise<void> {
    this.calls.push('close');
    return this.hooks.close?.();
  }

  // The protected core, opened up for the spec.
  offer(message: string): boolean {
    return this.deliver(message);
  }
  finish(): void {
    this.complete();
  }
  breakWith(err: unknown): void {
    this.fail(err);
  }
  demandLeft(): number {
    return this.demand;
  }
  demanded(): Promise<boolean> {
    return this.whenDemand();
  }
  waitAtMost(ms: number): Promise<void> {
    return this.wait(ms);
  }
  loop(body: () => Promise<void>): void {
    this.runLoop(body);
  }
}
