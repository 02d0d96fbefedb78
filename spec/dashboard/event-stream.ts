import { get, type IncomingMessage } from 'node:http';

/** A Server-Sent Events client for specs: events are read in order and their data parsed as JSON. */
export class EventStream {
  private readonly events: Array<{ event: string; data: string }> = [];
  private waiting: (() => void) | null = null;
  private buffer = '';
  private ended = false;

  private constructor(private readonly response: IncomingMessage) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      this.buffer += chunk;
      // One pass over what arrived: a chunk holds many events when the stream runs fast.
      let start = 0;
      let end = this.buffer.indexOf('\n\n');
      while (end >= 0) {
        this.parse(this.buffer.slice(start, end));
        start = end + 2;
        end = this.buffer.indexOf('\n\n', start);
      }
      this.buffer = this.buffer.slice(start);
      this.wake();
    });
    response.on('close', () => {
      this.ended = true;
      this.wake();
    });
  }

  static open(url: string): Promise<EventStream> {
    return new Promise((resolve, reject) => {
      get(url, (response) => {
        if (response.statusCode !== 200) reject(new Error(`event stream answered ${response.statusCode}`));
        else resolve(new EventStream(response));
      }).on('error', reject);
    });
  }

  /** The data of the next event named `event` (earlier events of other names are skipped). */
  async next<T>(event: string, timeoutMs = 5000): Promise<T> {
    return JSON.parse(await this.nextText(event, timeoutMs)) as T;
  }

  /** The data of the next event named `event` as it was sent, before parsing. */
  async nextText(event: string, timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.events.findIndex((e) => e.event === event);
      if (i >= 0) return this.events.splice(0, i + 1)[i].data;
      if (this.ended) throw new Error(`the stream ended before a '${event}' event`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no '${event}' event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Resolves once the server has ended the stream. */
  async closedByServer(timeoutMs = 2000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return this.ended;
  }

  close(): void {
    this.response.destroy();
  }

  private parse(block: string): void {
    let event = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    if (data !== '') this.events.push({ event, data });
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }
}
