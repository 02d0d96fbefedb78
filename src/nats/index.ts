// The receiver types this subpath's functions return, so a consumer's declarations can name them here.
export type { ReceiverSession, ReceiverSink, SettledListener, Settlement } from '../receiver';
export { openReceiver, Receiver } from '../receiver';
export { ClosableReceiver } from '../receivers/closable-receiver';
export type { FailedAction } from '../receivers/failed-action';
export type { TransportFault, TransportHealthOptions, TransportOperation } from '../transport-fault';
export type { TransportLag } from '../transport-lag';
export type {
  JetStreamClientMessage,
  JetStreamConsumer,
  JetStreamConsumerInfo,
  JetStreamFetch,
  JetStreamHeaders,
} from './jetstream-client';
export { fromJetStream, type JetStreamFailedAction, type JetStreamOptions } from './jetstream-receiver';
export type { JetStreamMessage } from './message';
