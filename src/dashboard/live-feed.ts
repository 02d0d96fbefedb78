import type { ServerResponse } from 'node:http';
import { defer, map, merge, type Observable, type Subscription } from 'rxjs';
import { type ChartPoint, type DispatcherFrame, frameOf, type Hello, pointOf } from './frame';
import type { NamedMetrics } from './sources';

/** How long the charts look back. */
const HISTORY_MS = 5 * 60_000;
/** A client that has not taken this much of what was sent is too slow to follow; it is dropped. */
const MAX_UNSENT_BYTES = 1 << 20;
/**
 * Chart points a page gets when it connects, shared among the dispatchers (the most recent of each): about
 * 120 KB, so a first event stays small however many dispatchers and however short the period. The
 * charts fill the rest of their span as frames arrive.
 */
export const HELLO_POINTS = 3600;

/**
 * The page's Server-Sent Events. The dispatchers are read only while a page is connected: the
 * snapshot streams start with the first client and stop with the last, so a dashboard nobody watches
 * costs the dispatchers nothing. The charts' recent points are kept (they cost no reading) and the latest
 * of them (`HELLO_POINTS` in all) sent to each page that connects.
 */
export class LiveFeed {
  readonly historyLength: number;
  private readonly clients = new Set<ServerResponse>();
  private readonly latest = new Map<string, DispatcherFrame>();
  private readonly history = new Map<string, ChartPoint[]>();
  private reading: Subscription | null = null;

  constructor(
    private readonly sources: readonly NamedMetrics[],
    private readonly periodMs: number,
  ) {
    this.historyLength = Math.ceil(HISTORY_MS / periodMs);
    for (const { name } of sources) this.history.set(name, []);
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Streams to `response` until it closes. */
  add(response: ServerResponse): void {
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    const hello: Hello = {
      names: this.sources.map((s) => s.name),
      periodMs: this.periodMs,
      historyLength: this.historyLength,
      history: this.recentHistory(),
      frames: [...this.latest.values()],
    };
    // `retry`: how long a disconnected page waits before it reconnects.
    response.write(`retry: 2000\nevent: hello\ndata: ${JSON.stringify(hello)}\n\n`);
    this.clients.add(response);
    response.on('close', () => this.remove(response));
    if (this.reading === null) this.reading = this.frames().subscribe((frame) => this.publish(frame));
  }

  /** Ends every stream and stops reading. */
  close(): void {
    for (const response of this.clients) response.end();
    this.clients.clear();
    this.stopReading();
  }

  /** Each dispatcher's latest points, `HELLO_POINTS` in all. */
  private recentHistory(): Record<string, ChartPoint[]> {
    const each = Math.max(1, Math.floor(HELLO_POINTS / this.history.size));
    const recent: Record<string, ChartPoint[]> = {};
    for (const [name, points] of this.history) recent[name] = points.slice(-each);
    return recent;
  }

  private remove(response: ServerResponse): void {
    this.clients.delete(response);
    if (this.clients.size === 0) this.stopReading();
  }

  private stopReading(): void {
    this.reading?.unsubscribe();
    this.reading = null;
  }

  /** Every dispatcher's frame each period, each on its own snapshot stream. */
  private frames(): Observable<DispatcherFrame> {
    return merge(
      ...this.sources.map(({ name, metrics }) =>
        defer(() => {
          // Snapshots carry admitted and settled rates; the failed rate comes from the counter's change.
          let failed = metrics.snapshot().failed;
          return metrics.snapshots(this.periodMs).pipe(
            map((s) => {
              const perSecond = s.windowMs > 0 ? (Math.max(0, s.failed - failed) * 1000) / s.windowMs : 0;
              failed = s.failed;
              return frameOf(name, s, perSecond, Date.now());
            }),
          );
        }),
      ),
    );
  }

  private publish(frame: DispatcherFrame): void {
    this.latest.set(frame.name, frame);
    const points = this.history.get(frame.name) as ChartPoint[];
    points.push(pointOf(frame));
    if (points.length > this.historyLength) points.shift();
    const event = `event: frame\ndata: ${JSON.stringify(frame)}\n\n`;
    for (const response of this.clients) {
      if (response.writableLength > MAX_UNSENT_BYTES) response.destroy();
      else response.write(event);
    }
  }
}
