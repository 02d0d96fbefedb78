/**
 * The parts of the NATS JetStream client this package uses, typed structurally so that its types compile
 * without `@nats-io/jetstream` installed (an optional peer). The client's `Consumer`, `JsMsg` and
 * `MsgHdrs` fit.
 */

/** The headers of a JetStream message (the client's `MsgHdrs`). */
export interface JetStreamHeaders {
  /** The first value of header `key` (`''` when absent). */
  get(key: string): string;
  /** Whether header `key` is present. */
  has(key: string): boolean;
  /** The header names. */
  keys(): string[];
  /** Every value of header `key`. */
  values(key: string): string[];
}

/** A JetStream message as the client delivers it (its `JsMsg`). */
export interface JetStreamClientMessage {
  /** The subject it was published on. */
  readonly subject: string;
  /** Its sequence number in the stream. */
  readonly seq: number;
  /** The payload. */
  readonly data: Uint8Array;
  /** The headers, if any were published. */
  readonly headers?: JetStreamHeaders;
  /** Delivery details. */
  readonly info: {
    /** How many times it has been delivered, this delivery included. */
    readonly deliveryCount: number;
    /** The stream it is stored in. */
    readonly stream: string;
  };
  /** Acknowledges it (the receiver does, after the handler). */
  ack(): void;
  /** Asks for redelivery, after `millis` if given. */
  nak(millis?: number): void;
  /** Tells the server never to redeliver it. */
  term(reason?: string): void;
  /** Tells the server the message is still being worked on (resets its `ack_wait`). */
  working(): void;
  /** The payload as UTF-8 text. */
  string(): string;
  /** The payload parsed as JSON. */
  json<T = unknown>(): T;
}

/** A JetStream pull consumer (the client's `Consumer`). */
export interface JetStreamConsumer {
  /** Fetches up to `max_messages` messages, waiting at most `expires` ms for them. */
  fetch(options: { max_messages: number; expires: number }): Promise<JetStreamFetch>;
  /**
   * The consumer's info; `cached`: as last read, without asking the server. The receiver reads its
   * `ack_wait` (ns) from it.
   */
  info(cached?: boolean): Promise<JetStreamConsumerInfo>;
}

/** What the receiver reads of a consumer's info (the client's `ConsumerInfo`). */
export interface JetStreamConsumerInfo {
  /** The stream it reads. */
  readonly stream_name: string;
  /** The consumer's name. */
  readonly name: string;
  /** Messages of the stream (that its filter takes) not yet delivered to it. */
  readonly num_pending: number;
  /** Messages delivered to it and not yet acknowledged. */
  readonly num_ack_pending: number;
  /** Its acknowledgement floor: every message up to `stream_seq` is acknowledged. */
  readonly ack_floor: {
    /** The stream sequence of the last message of the unbroken acknowledged run. */
    readonly stream_seq: number;
  };
  /** The consumer's configuration. */
  readonly config: {
    /** How long the server waits for an acknowledgement before it redelivers, in nanoseconds; default 30 s. */
    readonly ack_wait?: number;
  };
}

/** The messages of one fetch (the client's `ConsumerMessages`). */
export interface JetStreamFetch extends AsyncIterable<JetStreamClientMessage> {
  /** Ends the fetch: messages it has not yielded yet are not delivered. */
  close(): Promise<unknown>;
}
