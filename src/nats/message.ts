import type { JetStreamClientMessage, JetStreamHeaders } from './jetstream-client';

/** One JetStream message as handlers get it from `fromJetStream`. */
export interface JetStreamMessage {
  /** The subject it was published on (a natural key, e.g. `orders.<customer>`). */
  readonly subject: string;
  /** Its sequence number in the stream. */
  readonly seq: number;
  /** The payload. `new TextDecoder().decode(data)` or `msg.string()` / `msg.json()` for text. */
  readonly data: Uint8Array;
  /** The message headers, if any were published. */
  readonly headers: JetStreamHeaders | undefined;
  /** How many times the consumer has delivered it, this delivery included (1 the first time). */
  readonly deliveryCount: number;
  /**
   * The client's message. The receiver keeps it in progress while it is held and acknowledges it after
   * the handler: never `ack`, `nak` or `term` it yourself.
   */
  readonly msg: JetStreamClientMessage;
}

export function toMessage(msg: JetStreamClientMessage): JetStreamMessage {
  return new ReceivedMessage(msg);
}

/**
 * The client's message sits in a private field behind a getter, so a message posted to a thread lane
 * carries its own fields only: structured cloning copies own properties, and the client's message
 * (functions, its connection) cannot be cloned.
 */
class ReceivedMessage implements JetStreamMessage {
  readonly subject: string;
  readonly seq: number;
  readonly data: Uint8Array;
  readonly headers: JetStreamHeaders | undefined;
  readonly deliveryCount: number;
  readonly #msg: JetStreamClientMessage;

  constructor(msg: JetStreamClientMessage) {
    this.subject = msg.subject;
    this.seq = msg.seq;
    this.data = msg.data;
    this.headers = msg.headers;
    this.deliveryCount = msg.info.deliveryCount;
    this.#msg = msg;
  }

  get msg(): JetStreamClientMessage {
    return this.#msg;
  }
}
