export { fromJetStream, type JetStreamFailedAction, type JetStreamOptions } from './jetstream-receiver';
export type { JetStreamHeaders, JetStreamMessage } from './message';
