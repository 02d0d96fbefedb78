import type { Subscriber } from 'rxjs';
import { Dispatcher } from '../dispatcher';
import { KeyedExecutor } from '../executor';
import { describe, type ResolvedDispatchOptions } from '../options';
import type { DispatchSnapshot } from '../stats';
import { NoThreadLaneError } from './errors';
import type { ThreadHandler } from './handler';
import { type KeyPlacement, type PostedMessage, type ThreadClient, ThreadExecutor } from './thread-executor';

/**
 * A `keyedDispatch` subscription on thread lanes. Admission, the window, settlement and output are the
 * event-loop dispatcher's; instead of local mailboxes it pins each key to a thread while the key has
 * unfinished messages and posts the messages there, where the key's mailbox runs.
 */
export class ThreadDispatcher<T, K, R> extends Dispatcher<T, K, R> implements ThreadClient {
  channel = 0;
  /** Keys with unfinished messages and the thread each is pinned to. */
  private readonly placements = new Map<K, KeyPlacement>();
  /** Source of mailbox ids: a key that comes back after draining gets a fresh mailbox. */
  private lastMailboxId = 0;
  private readonly threads: ThreadExecutor;

  constructor(
    options: ResolvedDispatchOptions<T, K, R>,
    subscriber: Subscriber<R>,
    readonly handler: ThreadHandler<unknown, unknown>,
  ) {
    super(options, subscriber);
    this.threads = this.executor as ThreadExecutor;
  }

  protected override route(key: K, message: T): void {
    let placement = this.placements.get(key);
    if (placement === undefined) {
      const slot = this.threads.pickThread();
      if (slot === null) {
        this.messageFailed(message, new NoThreadLaneError());
        return;
      }
      slot.pinned++;
      placement = { slot, mailboxId: ++this.lastMailboxId, unfinished: 0 };
      this.placements.set(key, placement);
    }
    placement.unfinished++;
    this.threads.post(this, placement, key, message);
  }

  /** @internal */
  finished(posted: PostedMessage, failed: boolean, error?: unknown): void {
    if (this.closed) return;
    const placement = posted.placement;
    if (--placement.unfinished === 0) {
      this.placements.delete(posted.key as K);
      placement.slot.pinned--;
    }
    // The engine's settle/fail take the mailbox for event-loop lanes; here it lives in the thread.
    if (failed) this.messageFailed(posted.message as T, error);
    else this.messageDone(posted.message as T);
  }

  override teardown(): void {
    if (this.closed) return;
    super.teardown();
    for (const placement of this.placements.values()) placement.slot.pinned--;
    this.placements.clear();
  }

  override snapshot(): DispatchSnapshot {
    return { ...super.snapshot(), liveMailboxes: this.placements.size };
  }

  override backlogOf(key: unknown): number {
    return this.placements.get(key as K)?.unfinished ?? 0;
  }

  override hotKeys(n: number): Array<{ key: unknown; backlog: number }> {
    const all: Array<{ key: unknown; backlog: number }> = [];
    for (const [key, placement] of this.placements) all.push({ key, backlog: placement.unfinished });
    return all.sort((a, b) => b.backlog - a.backlog).slice(0, n);
  }
}

/**
 * Checks that the handler and the executor are of the same lane kind, and picks the default executor
 * of that kind. Returns the thread handler when the dispatch runs on thread lanes, else undefined.
 */
export function threadHandlerOf<T, K, R>(
  options: ResolvedDispatchOptions<T, K, R>,
): ThreadHandler<unknown, unknown> | undefined {
  const handler = options.threadHandler;
  const executor = options.executor;
  if (handler === undefined) {
    if (executor instanceof ThreadExecutor) {
      throw new TypeError(
        `keyedDispatch: \`executor\` is a ThreadExecutor, so \`handle\` must be threadHandler(module, exportName), got ${describe(options.handle)}`,
      );
    }
    return undefined;
  }
  if (executor instanceof KeyedExecutor) {
    throw new TypeError(
      `keyedDispatch: \`handle\` is a thread handler (${handler.moduleUrl}#${handler.exportName}), so \`executor\` must be a ThreadExecutor, got a KeyedExecutor (event-loop lanes)`,
    );
  }
  return handler;
}
