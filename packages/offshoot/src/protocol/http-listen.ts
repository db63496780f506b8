import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { fail } from '../core/errors.js';

// The listener rules `serve -http` and `mcp -http` share: the bind address, loopback unless acknowledged, the token.

/** The shortest explicit token `serve` accepts. */
export const MIN_TOKEN_LENGTH = 16;

/** True for the three names `serve -http` treats as loopback: 127.0.0.1, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return h === '127.0.0.1' || h === '::1' || h === 'localhost';
}

/** A fresh bearer token: 32 random bytes as 64 hex characters. */
export function generateToken(): string {
  return randomBytes(32).toString('hex');
}

/** A short, non-reversible tag for logs that lets an operator tell tokens apart without revealing any of one. */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 8);
}

/** A parsed `-http` address; an empty host means every interface. */
export interface HttpAddress {
  host: string;
  port: number;
}

/** Parses `host:port`, `[v6]:port` or `:port`. */
export function parseHttpAddr(addr: string): HttpAddress {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(addr);
  const port = Number(m?.[3]);
  if (m === null || port > 65535) {
    throw fail('USAGE', `-http: invalid address "${addr}"`, { hint: 'give host:port, e.g. -http 127.0.0.1:7878' });
  }
  return { host: m[1] ?? m[2] ?? '', port };
}

/** The HTTP-related `serve` flags as parsed from argv (absent flags undefined). */
export interface HttpFlags {
  http?: string;
  token?: string;
  allowNonLoopback?: boolean;
}

/** A validated HTTP listener configuration. */
export interface HttpConfig extends HttpAddress {
  addr: string;
  token: string;
  /** Where the token came from; a generated one must be printed once so the operator can use it. */
  tokenSource: 'flag' | 'env' | 'generated';
}

/**
 * Checks the HTTP flags of `serve` before anything listens: the token and the acknowledgment only make sense with
 * -http, an explicit token (-token or OFFSHOOT_TOKEN) must be long enough, and a non-loopback bind needs both the
 * acknowledgment flag and an explicit token. Returns undefined when HTTP is off.
 */
export function validateHttpFlags(
  flags: HttpFlags,
  env: Readonly<Record<string, string | undefined>> = process.env,
): HttpConfig | undefined {
  if (flags.http === undefined || flags.http === '') {
    if (flags.token !== undefined) {
      throw fail('USAGE', '-token requires -http', { hint: 'add -http 127.0.0.1:PORT, or drop -token' });
    }
    if (flags.allowNonLoopback === true) {
      throw fail('USAGE', '-http-allow-non-loopback requires -http', {
        hint: 'add -http HOST:PORT, or drop -http-allow-non-loopback',
      });
    }
    return undefined;
  }
  const address = parseHttpAddr(flags.http);
  const envToken = env['OFFSHOOT_TOKEN'];
  const explicit = flags.token ?? (envToken !== undefined && envToken !== '' ? envToken : undefined);
  const tokenSource = flags.token !== undefined ? 'flag' : explicit !== undefined ? 'env' : 'generated';
  if (explicit !== undefined) {
    const origin = tokenSource === 'flag' ? '-token' : 'OFFSHOOT_TOKEN';
    if (explicit.length < MIN_TOKEN_LENGTH) {
      throw fail('USAGE', `${origin} is too short (${explicit.length} characters; at least ${MIN_TOKEN_LENGTH})`, {
        hint: 'use a long random token, e.g. the output of `openssl rand -hex 32`',
      });
    }
    if (!/^[\x21-\x7e]+$/.test(explicit)) {
      throw fail('USAGE', `${origin} must be printable ASCII without spaces`, { hint: 'use a hex or base64url token' });
    }
  }
  if (!isLoopbackHost(address.host)) {
    if (flags.allowNonLoopback !== true) {
      throw fail('USAGE', `-http ${flags.http}: refusing to listen on a non-loopback address`, {
        hint: 'bind 127.0.0.1, or pass -http-allow-non-loopback together with an explicit token (OFFSHOOT_TOKEN or -token)',
      });
    }
    if (explicit === undefined) {
      throw fail('USAGE', `-http ${flags.http}: a non-loopback listener needs an explicit token`, {
        hint: 'set OFFSHOOT_TOKEN to a long random value (preferred: -token is visible in ps)',
      });
    }
  }
  return { ...address, addr: flags.http, token: explicit ?? generateToken(), tokenSource };
}

/**
 * A bearer-token check for the Authorization header. Both sides are hashed to equal-length digests first, so neither
 * the length nor a prefix of the token leaks through timing.
 */
export function bearerCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = createHash('sha256').update(token).digest();
  return (authorization) => {
    const m = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    const got = createHash('sha256')
      .update(m?.[1] ?? '')
      .digest();
    return timingSafeEqual(got, expected) && m !== null;
  };
}
