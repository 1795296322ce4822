// Addresses of the --listen door and the origins it lets open a WebSocket.

import net from 'node:net';
import { DEFAULT_HOST, DEFAULT_PORT } from './door.js';
import { UserError } from '../main/user-error.js';

// ---------------------------------------------------------------------------------------------
// --listen addresses
// ---------------------------------------------------------------------------------------------

/** An address that cannot be listened on (malformed, in use, not this machine's): the user's to mend. */
export class ListenError extends UserError {
  override name = 'ListenError';
}

/**
 * `host:port`, `:port`, `port`, `host`, `[v6]:port`, `[v6]`; '' means the defaults
 * (127.0.0.1:7788). Port 0 picks a free port. Throws an Error naming the problem otherwise.
 */
export function parseListen(spec: string): { host: string; port: number } {
  const text = String(spec ?? '').trim();
  const bad = (why: string) =>
    new ListenError(
      `invalid --listen address ${JSON.stringify(spec)}: ${why} ` +
        `(expected host:port, :port, port or [ipv6]:port, e.g. 127.0.0.1:${DEFAULT_PORT})`,
    );
  const parsePort = (p: string): number => {
    if (!/^\d{1,5}$/.test(p)) throw bad(`port ${JSON.stringify(p)} is not a number`);
    const n = Number(p);
    if (n > 65535) throw bad(`port ${n} is out of range 0..65535`);
    return n;
  };
  const checkHost = (h: string): string => {
    if (h === '') return DEFAULT_HOST;
    if (net.isIP(h)) return h;
    if (h.length > 253 || !/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(h))
      throw bad(`${JSON.stringify(h)} is not a host name or IP address`);
    return h;
  };
  if (text === '') return { host: DEFAULT_HOST, port: DEFAULT_PORT };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw bad('give an address, not a URL');
  if (/\s/.test(text)) throw bad('it contains spaces');
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) throw bad("missing ']' after the IPv6 address");
    const host = text.slice(1, close);
    if (!net.isIPv6(host)) throw bad(`${JSON.stringify(host)} is not an IPv6 address`);
    const rest = text.slice(close + 1);
    if (rest === '') return { host, port: DEFAULT_PORT };
    if (!rest.startsWith(':')) throw bad(`unexpected ${JSON.stringify(rest)} after ']'`);
    return { host, port: parsePort(rest.slice(1)) };
  }
  const colons = text.split(':').length - 1;
  if (colons > 1) throw bad('an IPv6 address needs brackets, as in [::1]:7788');
  if (colons === 0) {
    if (/^\d+$/.test(text)) return { host: DEFAULT_HOST, port: parsePort(text) };
    return { host: checkHost(text), port: DEFAULT_PORT };
  }
  const [host, port] = text.split(':') as [string, string];
  if (port === '') throw bad("missing port after ':'");
  return { host: checkHost(host), port: parsePort(port) };
}

export function formatAddress(host: string, port: number): string {
  return `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
}

function normalizeOrigin(origin: string): string | undefined {
  try {
    const u = new URL(origin);
    if (u.origin === 'null') return undefined;
    return u.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Who may open a WebSocket: clients that send no Origin (not a browser), the origins given
 * (`*`: any), and pages served by this server itself on a loopback name or on the one specific
 * IP it is bound to. `bound` gives the address actually bound (port 0 picks one at listen time).
 */
export function originPolicy(allowedOrigins: string[], bound: () => { host: string; port: number }): (origin: string | undefined) => boolean {
  const allowed = new Set<string>();
  let anyOrigin = false;
  for (const o of allowedOrigins) {
    if (o === '*') anyOrigin = true;
    const n = normalizeOrigin(o);
    if (n) allowed.add(n);
  }
  return (origin) => {
    if (origin === undefined) return true; // not a browser
    if (anyOrigin) return true;
    const n = normalizeOrigin(origin);
    if (n === undefined) return false;
    if (allowed.has(n)) return true;
    const { host, port } = bound();
    const own = ['127.0.0.1', 'localhost', '[::1]'];
    // A server bound to one specific non-loopback IP also trusts pages it serves there itself
    // (an IP literal cannot be rebound by DNS).
    if (net.isIP(host) && host !== '0.0.0.0' && host !== '::') own.push(net.isIPv6(host) ? `[${host}]` : host);
    const suffix = port === 80 ? '' : `:${port}`;
    return own.some((h) => n === `http://${h}${suffix}`);
  };
}

/** Whether a bound address is the machine's own loopback (127.0.0.0/8, ::1, or v4 loopback mapped into v6). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^(::ffff:)?127\./.test(h);
}
