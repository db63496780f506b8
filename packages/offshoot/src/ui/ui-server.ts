import { fail } from '../core/errors.js';
import { generateToken, isLoopbackHost, MIN_TOKEN_LENGTH, parseHttpAddr } from '../daemon/http-server.js';
import { hostCheck } from '../protocol/host-check.js';
import { listenHttp } from '../protocol/http-kit.js';
import { MAX_REQUEST_BYTES } from '../protocol/wire.js';
import { secure, sendError } from './http-reply.js';
import { createUiHandler } from './ui-handler.js';
import type { UiSource } from './ui-source.js';

/** The default `offshoot ui -listen` address (the daemon's examples use 7878). */
export const DEFAULT_UI_LISTEN = '127.0.0.1:7879';

/** A checked `offshoot ui` listener configuration. */
export interface UiListen {
  host: string;
  port: number;
  token: string;
  tokenSource: 'flag' | 'env' | 'generated';
}

/**
 * Applies the daemon listener's rules to `offshoot ui`: loopback unless acknowledged, and a non-loopback bind needs
 * an explicit token (-token or OFFSHOOT_TOKEN) of at least 16 printable characters; else a token is generated.
 */
export function checkUiListen(
  flags: { listen?: string; token?: string; allowNonLoopback: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
): UiListen {
  const listen = flags.listen ?? DEFAULT_UI_LISTEN;
  let addr: { host: string; port: number };
  try {
    addr = parseHttpAddr(listen);
  } catch {
    throw fail('USAGE', `-listen: invalid address "${listen}"`, {
      hint: `give host:port, e.g. -listen ${DEFAULT_UI_LISTEN}`,
    });
  }
  const envToken = env['OFFSHOOT_TOKEN'] !== '' ? env['OFFSHOOT_TOKEN'] : undefined;
  const explicit = flags.token ?? envToken;
  const tokenSource = flags.token !== undefined ? 'flag' : explicit !== undefined ? 'env' : 'generated';
  if (explicit !== undefined && (explicit.length < MIN_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(explicit)))
    throw fail(
      'USAGE',
      `${tokenSource === 'flag' ? '-token' : 'OFFSHOOT_TOKEN'} must be at least ${MIN_TOKEN_LENGTH} printable characters without spaces`,
      {
        hint: 'use a long random token, e.g. the output of `openssl rand -hex 32`',
      },
    );
  if (!isLoopbackHost(addr.host)) {
    if (!flags.allowNonLoopback)
      throw fail('USAGE', `-listen ${listen}: refusing to listen on a non-loopback address`, {
        hint: 'bind 127.0.0.1, or pass -allow-non-loopback together with an explicit token (OFFSHOOT_TOKEN or -token)',
      });
    if (explicit === undefined)
      throw fail('USAGE', `-listen ${listen}: a non-loopback listener needs an explicit token`, {
        hint: 'set OFFSHOOT_TOKEN to a long random value (preferred: -token is visible in ps)',
      });
  }
  return { ...addr, token: explicit ?? generateToken(), tokenSource };
}

/** A running `offshoot ui` listener. */
export interface UiServerHandle {
  /** The bound address as `host:port` (`[v6]:port` for IPv6). */
  address: string;
  close(): Promise<void>;
}

/** Serves the dashboard for a store at rest (no daemon: no live events, no metrics). */
export async function startUiServer(src: UiSource, listen: UiListen): Promise<UiServerHandle> {
  const ui = createUiHandler(src, listen.token);
  const hostRefusal = hostCheck(listen.host);
  const listener = await listenHttp({
    host: listen.host,
    port: listen.port,
    what: 'ui',
    listenHint: 'choose a free port with -listen, or stop whatever holds this one',
    // The dashboard is read-only: it reads no body, and refuses one announced past the daemon's request cap.
    maxBodyBytes: MAX_REQUEST_BYTES,
    refuse: (res, status, err) => {
      secure(res);
      sendError(res, err, status);
    },
    handle: (req, res) => {
      const refusal = hostRefusal(req.headers);
      if (refusal === undefined) return ui.handle(req, res);
      const text = `offshoot: ${refusal.message}\nhint: ${refusal.hint}\n`;
      res.writeHead(refusal.status, {
        'Content-Type': 'text/plain; charset=utf-8',
        'Content-Length': Buffer.byteLength(text),
      });
      res.end(text);
      return Promise.resolve();
    },
  });
  return {
    address: listener.address,
    close: () => {
      ui.close();
      return listener.close();
    },
  };
}
