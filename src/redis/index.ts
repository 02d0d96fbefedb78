// The receiver types this subpath's functions return, so a consumer's declarations can name them here.
export type { ReceiverSession, ReceiverSink, SettledListener, Settlement } from '../receiver';
export { openReceiver, Receiver } from '../receiver';
export { ClosableReceiver } from '../receivers/closable-receiver';
export type { FailedAction } from '../receivers/failed-action';
export type { TransportFault, TransportHealthOptions, TransportOperation } from '../transport-fault';
export type { TransportLag } from '../transport-lag';
export type { RedisStreamMessage } from './message';
export type { RedisClient } from './redis-client';
export { fromRedisStreams, type RedisStreamsOptions } from './redis-streams-receiver';
export { fnv1a32, StreamPartitions } from './stream-partitions';
