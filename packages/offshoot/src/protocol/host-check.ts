import type { IncomingHttpHeaders } from 'node:http';
import { isLoopbackHost } from './http-listen.js';

// The DNS-rebinding rule every local HTTP listener applies (serve -http, mcp -http, ui), written once.

/** Why a request's Host or Origin was refused, for the listener to answer in its own format (always a 403). */
export interface HostRefusal {
  status: 403;
  message: string;
  hint: string;
}

/** The host part of a `Host` header or an origin's authority: `[::1]:80` → `::1`, `Example:80` → `example`. */
function hostnameOf(authority: string): string {
  const v6 = /^\[([^\]]*)\](?::\d*)?$/.exec(authority);
  if (v6) return (v6[1] ?? '').toLowerCase();
  return authority.replace(/:\d*$/, '').toLowerCase();
}

/**
 * A check for the listener bound to `bindHost`: on a loopback bind the `Host` header must name loopback
 * (`localhost`, `127.0.0.1`, `[::1]`, any port), so a page whose DNS name was rebound to 127.0.0.1 is refused; on a
 * non-loopback bind (which always has an explicit token) any host name is accepted. Wherever a browser sends
 * `Origin`, it must be this same server (`http://` + the Host header), so no other page, local or not, can call it.
 */
export function hostCheck(bindHost: string): (headers: IncomingHttpHeaders) => HostRefusal | undefined {
  const loopbackOnly = isLoopbackHost(bindHost);
  return (headers) => {
    const host = headers.host ?? '';
    if (host === '')
      return { status: 403, message: 'missing Host header', hint: 'send the Host header of the URL you connect to' };
    if (loopbackOnly && !isLoopbackHost(hostnameOf(host)))
      return {
        status: 403,
        message: `Host "${host}" is not this loopback listener`,
        hint: 'connect as http://127.0.0.1:PORT, http://localhost:PORT or http://[::1]:PORT; other host names are refused to block DNS rebinding',
      };
    const origin = headers.origin;
    if (origin !== undefined && origin.toLowerCase() !== `http://${host.toLowerCase()}`)
      return {
        status: 403,
        message: `Origin "${origin}" is not this server`,
        hint: `only pages served by http://${host} itself may call it; other clients send no Origin`,
      };
    return undefined;
  };
}
