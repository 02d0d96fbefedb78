import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RouteHandler, serveRequests } from '../../src/dashboard/request-boundary';
import { exchange } from './raw-http';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    ),
  );
});

/** A server on the loopback whose every request goes through the boundary to `handle`; resolves its port. */
async function serve(handle: RouteHandler): Promise<number> {
  const server = serveRequests(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;

describe('the request boundary', () => {
  it('answers 500 to a request whose handler throws, and goes on serving', async () => {
    let calls = 0;
    const port = await serve((_request, response) => {
      calls++;
      if (calls === 1) throw new Error('a route failed');
      response.end('fine');
    });
    expect((await exchange(port, get('/'))).status).toBe(500);
    expect((await exchange(port, get('/'))).status).toBe(200);
  });

  it("answers 500 to a request whose handler's promise rejects", async () => {
    const port = await serve(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw new Error('a route failed later');
    });
    expect((await exchange(port, get('/'))).status).toBe(500);
  });

  it('cuts a response that had started when its handler failed, and writes nothing more to it', async () => {
    const port = await serve((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.write('half of it');
      throw new Error('failed midway');
    });
    const answer = await exchange(port, get('/'), { bodyBytes: 1 << 16, timeoutMs: 2000 });
    expect(answer.timedOut).toBe(false); // the server closed the connection
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('half of it');
    expect(answer.text).not.toContain('500');
    // The chunked body never got its last chunk: the client can tell the answer is incomplete.
    expect(answer.text).not.toMatch(/\r\n0\r\n\r\n$/);
  });

  it('answers 400 to a request target that is not a path: `*` and the absolute form', async () => {
    const seen: string[] = [];
    const port = await serve((_request, response, url) => {
      seen.push(url.pathname);
      response.end();
    });
    expect((await exchange(port, get('*'))).status).toBe(400);
    expect((await exchange(port, get('http://elsewhere.example/metrics'))).status).toBe(400);
    expect(seen).toEqual([]);
  });

  it('hands paths that a URL parser would take for a host (`//`, `/\\`) to the handler as paths', async () => {
    const port = await serve((_request, response, url) => {
      response.end(url.pathname);
    });
    for (const [path, pathname] of [
      ['//', '//'],
      ['///', '///'],
      ['//%', '//%'],
      ['/\\', '//'],
      ['//evil.example/metrics', '//evil.example/metrics'],
      ['/%', '/%'],
    ]) {
      const answer = await exchange(port, get(path), { bodyBytes: pathname.length });
      expect(answer.status).toBe(200);
      expect(answer.text.endsWith(`\r\n\r\n${pathname}`)).toBe(true);
    }
  });
});
