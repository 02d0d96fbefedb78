import { isIP } from 'node:net';

/** True for a name or address that only this machine reaches. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/**
 * A server bound to the loopback answers only requests addressed to a loopback name: a web page the
 * user visits cannot rebind its own host name to 127.0.0.1 and read the dashboard from the browser.
 */
export function hostAllowed(boundTo: string, hostHeader: string | undefined): boolean {
  if (!isLoopback(boundTo)) return true;
  if (hostHeader === undefined) return false;
  const name = hostHeader.startsWith('[')
    ? hostHeader.slice(0, hostHeader.indexOf(']') + 1)
    : hostHeader.split(':')[0];
  return isLoopback(name);
}
