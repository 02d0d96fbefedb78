import type { TransportFault } from '../transport-fault';

/** How a dispatcher ended: its source completed, its output errored, or its subscriber left (a stop). */
export type Ending = 'completed' | 'unsubscribed' | { readonly error: unknown };

/** A dispatcher's ending, filled in once it ends: its stats keep it. */
export interface EndingRecord {
  ending: Ending | null;
}

/** What a dispatcher tells a health check: read on demand, never on the message path. */
export interface HealthFacts {
  /** How it ended; `ending` null while it runs (then nothing else is read). */
  readonly end: EndingRecord;
  /** The last failure of a transport failing streak that no success has answered yet; null otherwise. */
  readonly unansweredFault: TransportFault | null;
  /** Why its receiver takes no work now, or undefined when it does; may throw (the receiver's code). */
  notReadyBecause(): string | undefined;
  /** Messages in the window not finished: running (or waiting out a retry) and queued. */
  unfinished(): readonly unknown[];
  /** When an attempt at `message` last failed (ms since the epoch); undefined when none did. */
  lastFailureOf(message: unknown): number | undefined;
  /** Where `message` came from, as its receiver says (`topic 'orders' partition 3 offset 12`). */
  sourceOf(message: unknown): string | undefined;
}

/** The facts of a dispatcher that has ended: only its ending is read. */
export function endedFacts(end: EndingRecord): HealthFacts {
  return {
    end,
    unansweredFault: null,
    notReadyBecause: () => undefined,
    unfinished: () => [],
    lastFailureOf: () => undefined,
    sourceOf: () => undefined,
  };
}
