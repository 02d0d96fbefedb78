import { randomBytes } from 'node:crypto';
import type { OutgoingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AsyncClosable } from '../async-dispose';
import { HealthCheck } from '../health/health-check';
import { CONTENT_TYPE } from '../prometheus/text-format';
import { authorized } from './auth';
import { clientScript } from './client-script';
import { probeAnswer } from './health-endpoint';
import { hostCheck } from './host-check';
import { LiveFeed } from './live-feed';
import { MetricsEndpoint } from './metrics-endpoint';
import { type DashboardOptions, dashboardOptions } from './options';
import { contentSecurityPolicy, pageHtml } from './page';
import { serveRequests } from './request-boundary';
import { namedMetrics } from './sources';

/** A running dashboard. */
export interface Dashboard extends AsyncClosable {
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
 * Server-Sent Events, `GET /metrics` the Prometheus text format, `GET /livez` and `GET /readyz` the
 * sources' health for probes (200 or 503 with the reasons as JSON, see `HealthCheck`). Read-only: nothing on it acts on a
 * dispatcher. The dispatchers are read only while a page is connected (and on each `/metrics` request).
 */
export async function serveDashboard(options: DashboardOptions): Promise<Dashboard> {
  const {
    sources: given,
    port,
    host,
    allowedHosts,
    token,
    periodMs,
    maxEventStreams,
    health,
  } = dashboardOptions(options);
  const sources = namedMetrics(given);
  const healthCheck = new HealthCheck(given, health);

  // Run from the sources, the page's script is bundled now: bundling blocks the event loop, which is
  // better done before traffic than on the first page.
  const script = clientScript();
  const feed = new LiveFeed(sources, periodMs);
  const endpoint = new MetricsEndpoint(sources);
  // Decided from the address actually bound, once listening; nothing is answered before.
  let hostAllowed = (_host: string | undefined) => false;
  const server = serveRequests((request, response, url) => {
    const send = (status: number, type: string, body: string, headers: OutgoingHttpHeaders = {}) => {
      response.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': type, ...headers });
      response.end(body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return send(405, 'text/plain', 'read-only: GET and HEAD only\n', { Allow: 'GET, HEAD' });
    }
    if (!hostAllowed(request.headers.host)) return send(421, 'text/plain', 'unexpected Host\n');
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
        if (request.method === 'HEAD') return send(200, 'text/event-stream', '');
        if (feed.clientCount >= maxEventStreams) {
          return send(
            503,
            'text/plain',
            `${maxEventStreams} live pages are open (serveDashboard's maxEventStreams): close one, or raise maxEventStreams\n`,
            { 'Retry-After': '5' },
          );
        }
        return feed.add(response);
      case '/metrics':
        return send(200, CONTENT_TYPE, endpoint.text());
      case '/livez':
      case '/readyz': {
        const answer = probeAnswer(healthCheck, url.pathname === '/livez' ? 'live' : 'ready');
        return send(answer.status, 'application/json', answer.body);
      }
      case '/favicon.ico':
        return send(204, 'text/plain', '');
      default:
        return send(404, 'text/plain', 'not found\n');
    }
  });
  await listen(server, port, host);
  const address = server.address() as AddressInfo;
  hostAllowed = hostCheck(address.address, allowedHosts);
  const close = (): Promise<void> => {
    feed.close();
    endpoint.close();
    return new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  return {
    url: `http://${urlHost(host)}:${address.port}/${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`,
    close,
    [Symbol.asyncDispose]: close,
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
