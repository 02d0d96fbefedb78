/**
 * The parts of the NATS JetStream client this package uses, typed structurally so that its types compile
 * without `@nats-io/jetstream` installed (an optional peer). The client's `Consumer`, `JsMsg` and
 * `MsgHdrs` fit.
 */

/** The headers of a JetStream message (the client's `MsgHdrs`). */
export interface JetStreamHeaders {
  get(key: string): string;
  has(key: string): boolean;
  keys(): string[];
  values(key: string): string[];
}

/** A JetStream message as the client delivers it (its `JsMsg`). */
export interface JetStreamClientMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly headers?: JetStreamHeaders;
  readonly info: { readonly deliveryCount: number };
  ack(): void;
  nak(millis?: number): void;
  term(reason?: string): void;
  /** Tells the server the message is still being worked on (resets its `ack_wait`). */
  working(): void;
  string(): string;
  json<T = unknown>(): T;
}

/** A JetStream pull consumer (the client's `Consumer`). */
export interface JetStreamConsumer {
  fetch(options: { max_messages: number; expires: number }): Promise<JetStreamFetch>;
}

/** The messages of one fetch (the client's `ConsumerMessages`). */
export interface JetStreamFetch extends AsyncIterable<JetStreamClientMessage> {
  close(): Promise<unknown>;
}
