import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { asOffshootError, fail, type OffshootError } from '../core/errors.js';

// The one HTTP server every local listener of offshoot runs on (serve -http, mcp -http, ui): the same timeouts,
// the same body cap with a real 413, the same shutdown. Each listener brings its routes and its error format.

/** Time to receive a request's headers; a client that sends them slower is cut off with 408. */
export const HEADERS_TIMEOUT_MS = 5_000;
/** Time to receive a whole request, headers and body. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long an idle keep-alive connection stays open. */
export const IDLE_TIMEOUT_MS = 120_000;
/** How often the timeouts above are checked: Node's default of 30 s would let a slow client sit 35 s. */
const CHECK_EVERY_MS = 1_000;
/** How long close() lets requests in flight finish before it cuts their connections. */
const SHUTDOWN_GRACE_MS = 5_000;

/** Sends one of the kit's own refusals (413, a handler's failure) in the listener's format. */
export type Refuse = (res: ServerResponse, status: number, err: OffshootError) => void;

/** What a listener brings to the kit. */
export interface HttpKitOptions {
  host: string;
  port: number;
  /** Names the listener in a failure to bind (`http listen on …`). */
  what: string;
  /** The hint of that failure, in the caller's terms. */
  listenHint: string;
  /** The largest request body; one announced larger gets 413 before a byte of it is read (and no 100 Continue). */
  maxBodyBytes: number;
  refuse: Refuse;
  /** Serves one request; a rejection becomes a 500 through `refuse` (or a cut connection once headers went out). */
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

/** A running listener. */
export interface HttpListener {
  /** The bound address as `host:port` (`[v6]:port` for IPv6). */
  address: string;
  /** Stops listening, ends idle connections, lets requests in flight finish briefly, then cuts what is left. */
  close(): Promise<void>;
}

/**
 * The 413 of a body over `max` bytes, `read` of them read so far. A client that asked to continue has sent none of
 * it and closes; one that sends its body anyway is read on (and the bytes dropped) up to twice the cap, so it
 * finishes writing and reads the 413 instead of a reset; past that the connection is cut.
 */
function tooLarge(
  req: IncomingMessage,
  res: ServerResponse,
  max: number,
  refuse: Refuse,
  { read = 0, expectsContinue = false } = {},
): void {
  if (expectsContinue) res.setHeader('Connection', 'close');
  else {
    let left = 2 * max - read;
    req.on('data', (chunk: Buffer) => {
      left -= chunk.length;
      if (left < 0) req.socket.destroy();
    });
    req.resume();
  }
  refuse(res, 413, fail('INVALID_ARGUMENT', `request body exceeds ${max} bytes`, { hint: 'send one smaller request' }));
}

/** True when the request announces a body over `max` bytes. */
function announcedTooLarge(req: IncomingMessage, max: number): boolean {
  return Number(req.headers['content-length'] ?? 0) > max;
}

/**
 * Reads a request body up to `max` bytes; undefined means it was larger and a 413 has been sent. A body announced
 * too large was refused before the handler ran; this catches a chunked one that grows past the cap.
 */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  max: number,
  refuse: Refuse,
): Promise<Buffer | undefined> {
  if (announcedTooLarge(req, max)) return Promise.resolve(void tooLarge(req, res, max, refuse));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= max) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.off('end', onEnd);
      resolve(void tooLarge(req, res, max, refuse, { read: size }));
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    req.on('data', onData);
    req.on('end', onEnd);
    req.once('error', reject);
  });
}

/** Sends a JSON body, one line, with its length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | number> = {},
): void {
  sendJsonText(res, status, `${JSON.stringify(body)}\n`, headers);
}

/** Sends JSON already encoded (a response line the encoder bounded). */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string | number> = {},
): void {
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** `host:port`, with an IPv6 host in brackets. */
function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The bound address of a listening server as `host:port` (`[v6]:port` for IPv6). */
function boundAddress(server: Server): string {
  const a = server.address() as AddressInfo;
  return hostPort(a.address, a.port);
}

/** Starts a listener with the kit's limits on `host:port` (port 0 picks a free one). */
export function listenHttp(opts: HttpKitOptions): Promise<HttpListener> {
  /** Requests in progress per connection, so shutdown can end idle connections and wait for busy ones. */
  const inFlight = new Map<Socket, number>();
  let closing = false;

  const serve = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void => {
    if (closing) res.setHeader('Connection', 'close');
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.on('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      // A keep-alive connection whose last response finishes after close() began would otherwise linger.
      if (closing && left === 0) socket.end();
    });
    if (announcedTooLarge(req, opts.maxBodyBytes)) {
      tooLarge(req, res, opts.maxBodyBytes, opts.refuse, { expectsContinue });
      return;
    }
    if (expectsContinue) res.writeContinue();
    opts.handle(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else opts.refuse(res, 500, asOffshootError(err));
    });
  };

  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CHECK_EVERY_MS,
    },
    (req, res) => serve(req, res, false),
  );
  // Answered here, a request that sends `Expect: 100-continue` with a body over the cap gets its 413 at once and
  // never sends the body; any other is told to continue.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => serve(req, res, true));
  server.keepAliveTimeout = IDLE_TIMEOUT_MS;
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.on('close', () => inFlight.delete(socket));
  });

  const close = (): Promise<void> => {
    closing = true;
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const [socket, n] of inFlight) if (n === 0) socket.end();
    const force = setTimeout(() => {
      for (const socket of inFlight.keys()) socket.destroy();
    }, SHUTDOWN_GRACE_MS);
    return done.finally(() => clearTimeout(force));
  };

  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        fail('UNAVAILABLE', `${opts.what} listen on ${hostPort(opts.host, opts.port)}: ${err.message}`, {
          hint: opts.listenHint,
          cause: err,
        }),
      ),
    );
    server.listen({ port: opts.port, ...(opts.host === '' ? {} : { host: opts.host }) }, () =>
      resolve({ address: boundAddress(server), close }),
    );
  });
}
