import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for an IP address only this machine reaches: 127.0.0.0/8, `::1`, and 127.x mapped into IPv6. */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The Host values a server bound to `boundAddress` (as `server.address()` gives it) answers, against DNS
 * rebinding: a web page the user visits points its own name at the server's address, and the browser
 * then sends that name as the Host. A page whose origin is an IP literal or `localhost` is the server's
 * own origin, so:
 * - bound to a loopback address: loopback IP literals and `localhost` pass;
 * - bound to any other address (all interfaces included): any IP literal and `localhost` pass;
 * - in both cases, the names in `allowedHosts` pass (compared without case; any port).
 * No other name passes, and neither does a request without a Host.
 */
export function hostCheck(
  boundAddress: string,
  allowedHosts: readonly string[],
): (hostHeader: string | undefined) => boolean {
  const loopback = isLoopbackAddress(boundAddress);
  const listed = new Set(allowedHosts.map((name) => name.toLowerCase()));
  return (hostHeader) => {
    const name = hostName(hostHeader);
    if (name === null) return false;
    if (name === 'localhost' || listed.has(name)) return true;
    if (isIP(name) === 0) return false;
    return !loopback || isLoopbackAddress(name);
  };
}

/** `name`, `name:port`, `[IPv6]`, `[IPv6]:port`; the name is group 1 or group 2. */
const HOST_HEADER = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::\d{0,5})?$/i;

/** The name of a Host header, lower-cased and without brackets; null for one that is not of that form. */
function hostName(hostHeader: string | undefined): string | null {
  const match = hostHeader === undefined ? null : HOST_HEADER.exec(hostHeader);
  if (match === null) return null;
  if (match[1] !== undefined) return isIP(match[1]) === 6 ? match[1].toLowerCase() : null;
  return match[2].toLowerCase();
}
