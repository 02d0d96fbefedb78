import { connect } from 'node:net';

/** What came back for a raw request: the bytes up to the end of the response head (or all, if it closed first). */
export interface RawAnswer {
  /** The first line, or '' when nothing arrived. */
  readonly statusLine: string;
  /** The status code, or 0 when nothing (or no status line) arrived. */
  readonly status: number;
  /** Everything read, as latin1 text. */
  readonly text: string;
  /** True when the wait ran out before the head was complete and before the server closed. */
  readonly timedOut: boolean;
}

const STATUS_LINE = /^HTTP\/1\.[01] ([1-5]\d\d) [^\r\n]*$/;

/**
 * Sends `bytes` as they are over a new TCP connection to `address:port` (default `127.0.0.1`), and reads until the response
 * head is complete (then reads `bodyBytes` more, when asked), the server closes, or `timeoutMs` runs out.
 * Written as latin1 when a string, so each character is one byte and the spec chooses every byte.
 */
export function exchange(
  port: number,
  bytes: string | Buffer,
  {
    timeoutMs = 5000,
    bodyBytes = 0,
    address = '127.0.0.1',
  }: { timeoutMs?: number; bodyBytes?: number; address?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, address);
    let text = '';
    let done = false;
    const finish = (timedOut: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const statusLine = text.includes('\r\n') ? text.slice(0, text.indexOf('\r\n')) : text;
      const status = Number(STATUS_LINE.exec(statusLine)?.[1] ?? 0);
      resolve({ statusLine, status, text, timedOut });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    // Written, not ended: a client that half-closes has its request aborted by Node's server.
    socket.on('connect', () =>
      socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes),
    );
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      if (head >= 0 && text.length - (head + 4) >= bodyBytes) finish(false);
    });
    // A refused or reset connection answers nothing; the caller sees an empty answer.
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
  });
}

/** True for a line that is an HTTP/1.x status line. */
export function isStatusLine(line: string): boolean {
  return STATUS_LINE.test(line);
}
