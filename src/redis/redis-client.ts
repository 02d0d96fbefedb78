/**
 * The part of an ioredis client this package uses, typed structurally so that its types compile without
 * `ioredis` installed (an optional peer). An ioredis `Redis` fits; the commands' replies are read as
 * ioredis gives them.
 */
export interface RedisClient {
  duplicate(): RedisClient;
  disconnect(): void;
  call(...args: any[]): Promise<unknown>;
  xack(...args: any[]): Promise<unknown>;
  xadd(...args: any[]): Promise<unknown>;
  xautoclaim(...args: any[]): Promise<unknown>;
  xgroup(...args: any[]): Promise<unknown>;
  xinfo(...args: any[]): Promise<unknown>;
  xpending(...args: any[]): Promise<unknown>;
  xread(...args: any[]): Promise<unknown>;
  xreadgroup(...args: any[]): Promise<unknown>;
}
