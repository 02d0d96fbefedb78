import type { Consumer } from './client';

/** Tries of the consumer's close (which leaves the group), and the pause between them. */
const CLOSE_ATTEMPTS = 5;
const CLOSE_BACKOFF_MS = 500;

/**
 * Closes the consumer, which leaves its group on the way. The client sends that leave once and, when the
 * broker refuses it (a coordinator still loading its groups after a restart answers NOT_COORDINATOR),
 * fails the close and stays connected. The close is tried again for a moment; after that the consumer
 * drops its connections and closes without leaving: the broker drops the member at its session timeout,
 * as after a crash.
 */
export async function closeConsumer(consumer: Consumer): Promise<void> {
  for (let attempt = 1; attempt <= CLOSE_ATTEMPTS; attempt++) {
    try {
      await consumer.close();
      return;
    } catch {
      if (attempt < CLOSE_ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, CLOSE_BACKOFF_MS));
    }
  }
  await consumer.connections.close();
  await consumer.close();
}
