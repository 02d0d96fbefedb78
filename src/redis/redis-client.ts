/**
 * The part of an ioredis client this package uses, typed structurally so that its types compile without
 * `ioredis` installed (an optional peer). An ioredis `Redis` fits; the commands' replies are read as
 * ioredis gives them.
 */
export interface RedisClient {
  /** A new connection with the same options (blocking reads get their own). */
  duplicate(): RedisClient;
  /** Closes the connection at once. */
  disconnect(): void;
  /** Where the connection is: `'ready'`, `'reconnecting'`, … `'end'` once it is closed for good. */
  readonly status: string;
  /** Listens to the connection's events (`'error'`: each failed connection attempt; `'ready'`). */
  on(event: string, listener: (...args: any[]) => void): unknown;
  /** Sends any command. */
  call(...args: any[]): Promise<unknown>;
  /** `XACK`. */
  xack(...args: any[]): Promise<unknown>;
  /** `XADD`. */
  xadd(...args: any[]): Promise<unknown>;
  /** `XAUTOCLAIM`. */
  xautoclaim(...args: any[]): Promise<unknown>;
  /** `XGROUP`. */
  xgroup(...args: any[]): Promise<unknown>;
  /** `XINFO`. */
  xinfo(...args: any[]): Promise<unknown>;
  /** `XPENDING`. */
  xpending(...args: any[]): Promise<unknown>;
  /** `XREAD`. */
  xread(...args: any[]): Promise<unknown>;
  /** `XREADGROUP`. */
  xreadgroup(...args: any[]): Promise<unknown>;
}
