import type { TransportLag } from '../transport-lag';

/**
 * Asks a transport for its lag at an interval (a broker query, never per message) and keeps the latest
 * answer for the stats, which read it when they are read. One query at a time: the next is due
 * `intervalMs` after the previous one answered.
 */
export class LagPoll {
  #latest: readonly TransportLag[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #stopped = false;

  constructor(
    private readonly query: () => Promise<readonly TransportLag[]>,
    private readonly intervalMs: number,
  ) {}

  /** The latest answer; empty before the first. */
  get latest(): readonly TransportLag[] {
    return this.#latest;
  }

  /** Asks now, then every `intervalMs` until `stop()`. */
  start(): void {
    void this.#poll();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #poll(): Promise<void> {
    try {
      const latest = await this.query();
      if (!this.#stopped) this.#latest = latest;
    } catch {
      // The receiver's own commands report an unreachable broker; the last answer stays meanwhile.
    }
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#poll(), this.intervalMs);
    // Never what keeps a process alive: the receiver's own reads do that while it runs.
    this.#timer.unref?.();
  }
}
