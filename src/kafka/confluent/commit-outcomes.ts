import type { RdKafkaError, RdTopicPartition } from './client';

/** A commit the broker refused, for one partition or the whole request. */
export class CommitRefusedError extends Error {
  override name = 'CommitRefusedError';
  constructor(
    message: string,
    /** librdkafka's error (the request's, or the first refused partition's). */
    override readonly cause: RdKafkaError,
  ) {
    super(message);
  }
}

/**
 * The broker's answers to queued commits. librdkafka's `commit` returns once the commit is queued; its
 * outcome comes later to the consumer's `offset_commit_cb`, one call per commit, in the order they were
 * sent (one connection to the group coordinator). So commits wait here, oldest first, for their answer.
 * Callbacks are served while the consumer is polled (`consume`): the consume loop runs on while one is
 * awaited.
 */
export class CommitOutcomes {
  private readonly waiting: Array<{ resolve(): void; reject(error: unknown): void }> = [];

  /** Resolves once the broker took the commit `send` queues; rejects with its refusal. */
  commit(send: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Queued before sending: an answer cannot come before its waiter then.
      this.waiting.push({ resolve, reject });
      try {
        send();
      } catch (error) {
        this.waiting.pop();
        reject(error);
      }
    });
  }

  /** The `offset_commit_cb`: the oldest commit's outcome (a partition's error refuses it too). */
  answered(error: RdKafkaError | null | undefined, partitions: readonly RdTopicPartition[] = []): void {
    const commit = this.waiting.shift();
    if (commit === undefined) return;
    const refused = error ?? partitions.find((p) => p.error)?.error;
    if (refused) {
      const which = partitions.filter((p) => p.error).map((p) => `'${p.topic}' partition ${p.partition}`);
      commit.reject(
        new CommitRefusedError(
          `the broker refused the commit${which.length > 0 ? ` of ${which.join(', ')}` : ''}: ${refused.message}`,
          refused,
        ),
      );
    } else commit.resolve();
  }

  /** The consumer is gone: no answer will come. */
  abandon(error: Error): void {
    for (const commit of this.waiting.splice(0)) commit.reject(error);
  }
}
