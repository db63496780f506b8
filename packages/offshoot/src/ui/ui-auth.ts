import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/**
 * The dashboard's one bearer token, accepted three ways: `Authorization: Bearer` (scripts), a `?token=` on a page
 * URL (the link `offshoot ui` prints), which is swapped at once for an HttpOnly, SameSite=Strict cookie and a
 * redirect that drops it from the address bar, and that cookie (the page's own requests). Compared as equal-length
 * digests in constant time, like the daemon's listener.
 */
export class UiAuth {
  readonly #expected: Buffer;
  /** Named after the token's fingerprint, so two dashboards on one host (cookies ignore ports) never clash. */
  readonly cookieName: string;

  constructor(token: string) {
    this.#expected = digest(token);
    this.cookieName = `offshoot_ui_${this.#expected.toString('hex').slice(0, 8)}`;
  }

  #matches(candidate: string | undefined): boolean {
    return timingSafeEqual(digest(candidate ?? ''), this.#expected) && candidate !== undefined;
  }

  /** True when the request carries the token as a bearer header or as the session cookie. */
  authorized(req: IncomingMessage): boolean {
    const bearer = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];
    if (bearer !== undefined) return this.#matches(bearer);
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === this.cookieName) return this.#matches(part.slice(eq + 1).trim());
    }
    return false;
  }

  /**
   * Handles `?token=` on a page URL: a right token sets the cookie and redirects to the same URL without it (true);
   * a wrong one is left for the caller to refuse (false).
   */
  exchange(url: URL, res: ServerResponse): boolean {
    const token = url.searchParams.get('token');
    if (token === null || !this.#matches(token)) return false;
    url.searchParams.delete('token');
    const rest = url.searchParams.toString();
    res.setHeader('Set-Cookie', `${this.cookieName}=${token}; HttpOnly; SameSite=Strict; Path=/`);
    res.writeHead(303, { Location: `${url.pathname}${rest === '' ? '' : `?${rest}`}` });
    res.end();
    return true;
  }
}
