export type { RedisStreamMessage } from './message';
export { fromRedisStreams, type RedisStreamsOptions } from './redis-streams-receiver';
export { fnv1a32, StreamPartitions } from './stream-partitions';
