import { describe, durationOption, functionOption } from './validate';

/** What a transport was doing when it failed. */
export type TransportOperation = 'fetch' | 'commit' | 'heartbeat' | 'connection';

/** A failure of a receiver's transport that the receiver survived (it retries), told as it happens. */
export interface TransportFault {
  /** What failed: fetching messages, committing or acknowledging, a group heartbeat, the connection. */
  readonly operation: TransportOperation;
  /** What the client reported. */
  readonly error: unknown;
  /** The receiver that met it (`fromKafka()`, `fromRedisStream()`, …). */
  readonly receiver: string;
  /** Since when the transport has been failing without a success in between (ms since the epoch). */
  readonly failingSince: number;
}

/** Options every transport receiver takes for its transport's health. */
export interface TransportHealthOptions {
  /**
   * Told each transport failure the receiver survives (a fetch, commit, heartbeat or connection error
   * that it retries), so an outage is visible while it lasts. A throw from it is ignored. Default: none
   * (the failures are still counted in `DispatchStats`' `transportFaults`).
   */
  onTransportError?: (fault: TransportFault) => void;
  /**
   * How long the transport may keep failing, with no success in between, before the receiver gives up
   * and errors the output with a `TransportUnreachableError`. Integer ms ≥ 1. Default 60,000.
   */
  maxUnreachableMs?: number;
}

/** The names of `TransportHealthOptions`, for a receiver's list of its options. */
export const TRANSPORT_HEALTH_OPTIONS = [
  'onTransportError',
  'maxUnreachableMs',
] as const satisfies ReadonlyArray<keyof TransportHealthOptions>;

/** `TransportHealthOptions` checked, with the defaults filled in: what a transport session passes to `PullSession`. */
export interface ResolvedTransportHealth {
  /** Told each transport failure the receiver survives; undefined when nobody listens. */
  onTransportError: ((fault: TransportFault) => void) | undefined;
  /** How long failures may last, with no success in between, before the output errors. */
  maxUnreachableMs: number;
}

/** Checks a receiver's health options (`owner` names it in errors) and fills in the defaults. */
export function transportHealthOptions(
  owner: string,
  options: TransportHealthOptions,
): ResolvedTransportHealth {
  return {
    onTransportError:
      options.onTransportError === undefined
        ? undefined
        : functionOption(owner, 'onTransportError', options.onTransportError),
    maxUnreachableMs: durationOption(owner, 'maxUnreachableMs', options.maxUnreachableMs, 60_000, 1),
  };
}

/** The output's error when a receiver's transport kept failing for longer than `maxUnreachableMs`. */
export class TransportUnreachableError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'TransportUnreachableError';
  constructor(
    /** The last failure. */
    readonly fault: TransportFault,
    maxUnreachableMs: number,
  ) {
    super(
      `${fault.receiver}: the transport kept failing for more than ${maxUnreachableMs} ms (\`maxUnreachableMs\`); ` +
        `last failure (${fault.operation}): ${errorText(fault.error)}`,
      { cause: fault.error },
    );
  }
}

/** An error's message for another error's text; never throws. */
function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return describe(error);
}
