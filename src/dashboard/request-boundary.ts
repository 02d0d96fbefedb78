import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A route: answers one request, given its target as a URL (origin and path). */
export type RouteHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
) => void | PromiseLike<void>;

/**
 * An HTTP server whose every request goes through one boundary before `handle`, so nothing a client sends
 * and nothing a route does can take the process down:
 * - a target that is not a path (`*`, the absolute form) is answered 400 before any route runs; a path is
 *   read as a path, so `//host` or `/\host` never becomes a URL's host;
 * - a route that throws or rejects is answered 500; when its answer had already started, its connection
 *   is cut instead (so the client sees an incomplete answer): nothing is written twice to one response;
 * - errors of the request, the response and the server (a reset connection, a failed accept) are handled
 *   here instead of becoming uncaught. Node's own parser answers malformed or oversized heads (400, 431).
 */
export function serveRequests(handle: RouteHandler): Server {
  const server = createServer((request, response) => {
    request.on('error', () => response.destroy());
    response.on('error', () => response.destroy());
    const url = originForm(request.url);
    if (url === null) {
      answer(response, 400, 'expected a path as the request target\n');
      return;
    }
    try {
      const done = handle(request, response, url);
      if (done !== undefined) Promise.resolve(done).catch(() => fail(response));
    } catch {
      fail(response);
    }
  });
  // After listening, a failed accept (too many open files) is reported here; the server goes on listening.
  server.on('error', () => undefined);
  return server;
}

/** The target as a URL when it is a path (`/…`), read with a fixed origin; null for anything else. */
function originForm(target: string | undefined): URL | null {
  if (target === undefined || !target.startsWith('/')) return null;
  try {
    return new URL(`http://server${target}`);
  } catch {
    return null;
  }
}

/** A route failed: answer 500 if nothing was sent yet; cut an answer it had started; leave a finished one. */
function fail(response: ServerResponse): void {
  if (response.writableEnded) return;
  // Node sends a response's first bytes on the next tick: cut it after that, so the client sees a
  // started answer end short (a chunked body without its last chunk) rather than nothing.
  if (response.headersSent) setImmediate(() => response.destroy());
  else answer(response, 500, 'internal error\n');
}

function answer(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
  });
  response.end(text);
}
