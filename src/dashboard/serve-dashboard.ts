import { randomBytes } from 'node:crypto';
import { createServer, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONTENT_TYPE } from '../prometheus/text-format';
import { describe, integerOption, optionsObject } from '../validate';
import { authorized } from './auth';
import { clientScript } from './client-script';
import { hostAllowed } from './host-check';
import { LiveFeed } from './live-feed';
import { MetricsEndpoint } from './metrics-endpoint';
import { contentSecurityPolicy, pageHtml } from './page';
import { type DashboardSources, namedMetrics } from './sources';

/** Options of `serveDashboard`. */
export interface DashboardOptions {
  /** What it shows: a `DispatchMetrics`, a `DispatchRuntime` (its components with one), or an object naming several. */
  sources: DashboardSources;
  /** TCP port. Integer from 0 to 65535; 0 (the default) takes a free one (see `url`). */
  port?: number;
  /** Address to bind. Default `'127.0.0.1'`: only this machine can connect. */
  host?: string;
  /**
   * When set, every request needs it: `Authorization: Bearer <token>`, or `?token=<token>` in the URL (a
   * browser; `url` carries it). Non-empty string. Default: none.
   */
  token?: string;
  /** How often the page is updated, in ms. Integer from 100 to 60,000. Default 1,000. */
  periodMs?: number;
}

/** A running dashboard. */
export interface Dashboard {
  /** The page's address (with the token, when there is one). */
  readonly url: string;
  /** Ends the event streams, stops reading the dispatchers and closes the server. */
  close(): Promise<void>;
}

const COMMON_HEADERS: OutgoingHttpHeaders = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/**
 * Serves a live dashboard of dispatchers over HTTP (Node's `http`): `GET /` the page, `GET /events` its
 * Server-Sent Events, `GET /metrics` the Prometheus text format. Read-only: nothing on it acts on a
 * dispatcher. The dispatchers are read only while a page is connected (and on each `/metrics` request).
 */
export async function serveDashboard(options: DashboardOptions): Promise<Dashboard> {
  optionsObject('serveDashboard', options, ['sources', 'port', 'host', 'token', 'periodMs'] satisfies Array<
    keyof DashboardOptions
  >);
  const sources = namedMetrics(options.sources);
  const port = integerOption('serveDashboard', 'port', options.port, 0, 0, 65_535);
  const periodMs = integerOption('serveDashboard', 'periodMs', options.periodMs, 1000, 100, 60_000);
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '') {
    throw new TypeError(`serveDashboard: expected \`host\` to be a non-empty string, got ${describe(host)}`);
  }
  const token = options.token;
  if (token !== undefined && (typeof token !== 'string' || token === '')) {
    throw new TypeError(
      `serveDashboard: expected \`token\` to be a non-empty string, got ${describe(token)}`,
    );
  }

  // Run from the sources, the page's script is bundled now: bundling blocks the event loop, which is
  // better done before traffic than on the first page.
  const script = clientScript();
  const feed = new LiveFeed(sources, periodMs);
  const endpoint = new MetricsEndpoint(sources);
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://dashboard');
    const send = (status: number, type: string, body: string, headers: OutgoingHttpHeaders = {}) => {
      response.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': type, ...headers });
      response.end(body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return send(405, 'text/plain', 'read-only: GET and HEAD only\n', { Allow: 'GET, HEAD' });
    }
    if (!hostAllowed(host, request.headers.host)) return send(421, 'text/plain', 'unexpected Host\n');
    if (token !== undefined && !authorized(request, url, token)) {
      return send(401, 'text/plain', 'a bearer token is required\n', {
        'WWW-Authenticate': 'Bearer realm="keyed-dispatch"',
      });
    }
    switch (url.pathname) {
      case '/': {
        const nonce = randomBytes(16).toString('base64');
        return send(200, 'text/html; charset=utf-8', pageHtml(script, nonce), {
          'Content-Security-Policy': contentSecurityPolicy(nonce),
        });
      }
      case '/events':
        return request.method === 'HEAD' ? send(200, 'text/event-stream', '') : feed.add(response);
      case '/metrics':
        return send(200, CONTENT_TYPE, endpoint.text());
      case '/favicon.ico':
        return send(204, 'text/plain', '');
      default:
        return send(404, 'text/plain', 'not found\n');
    }
  });
  await listen(server, port, host);
  const address = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(host)}:${address.port}/${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`,
    close: () => {
      feed.close();
      endpoint.close();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The host as a URL writes it; a wildcard address is reached through the loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
