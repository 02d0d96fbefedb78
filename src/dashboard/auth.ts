import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Checks a request against the bearer token: in an `Authorization: Bearer <token>` header (a
 * Prometheus scraper, curl) or a `token` query parameter (a browser: the page's URL carries it to the
 * event stream, which cannot send headers). Compared in constant time, on digests of equal length.
 */
export function authorized(request: IncomingMessage, url: URL, token: string): boolean {
  const header = request.headers.authorization;
  const offered = header?.startsWith('Bearer ')
    ? header.slice('Bearer '.length)
    : url.searchParams.get('token');
  return offered !== null && timingSafeEqual(digest(offered), digest(token));
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
