import { sharedSlot } from './shared-slot';

/** A message's wait before its handler started, as it travels to a thread. */
export interface MessageWait {
  /** When it started waiting in its key's mailbox (taken in, or out of the parking area): epoch ms. */
  since: number;
  /** How long it was parked, in ms; -1 when it was not. */
  parkedMs: number;
}

/**
 * A message's wait as a thread reads it: attached to the message object posted there. Apart from the
 * observer, so that a dispatcher without threads or tracing does not carry it.
 */
export const messageWaits = sharedSlot<MessageWait>('MessageWait');
