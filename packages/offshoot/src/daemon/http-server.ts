import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fail, type ErrorCode } from '../core/errors.js';
import { errorResponse } from '../protocol/errors.js';
import { hostCheck } from '../protocol/host-check.js';
import { bearerCheck, parseHttpAddr } from '../protocol/http-listen.js';
export {
  generateToken,
  isLoopbackHost,
  MIN_TOKEN_LENGTH,
  parseHttpAddr,
  tokenFingerprint,
  validateHttpFlags,
  type HttpAddress,
  type HttpConfig,
  type HttpFlags,
} from '../protocol/http-listen.js';
import { MAX_REQUEST_BYTES, type Response } from '../protocol/wire.js';
import type { EventBus, Subscription } from './event-bus.js';
import type { DaemonMetrics } from './metrics.js';

const HEADERS_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 30_000;
const IDLE_TIMEOUT_MS = 120_000;
const SSE_PING_MS = 15_000;
const SSE_WRITE_DEADLINE_MS = 45_000;
const SHUTDOWN_GRACE_MS = 5_000;

/** Extra GET routes mounted under the listener (the dashboard of `serve -ui`); they do their own auth. */
export interface HttpFallback {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Ends the fallback's long-lived responses when the listener closes. */
  close(): void;
}

/** What `startHttpServer` needs from the daemon. */
export interface HttpServerOptions {
  /** `host:port`; port 0 picks a free one (see the returned address). */
  addr: string;
  token: string;
  /** The same dispatch the unix socket uses. */
  dispatch: (req: unknown, transport: 'http') => Promise<Response>;
  metrics: DaemonMetrics;
  events: EventBus;
  sessionCount: () => number;
  /** Answers every path the listener does not own, instead of a 404. */
  fallback?: HttpFallback;
  /** SSE keepalive interval; 15 s unless a test needs it shorter. */
  ssePingMs?: number;
  /** How long one SSE write may stay unflushed before the connection is closed; 45 s unless a test needs it shorter. */
  sseWriteDeadlineMs?: number;
}

/** A running HTTP listener. */
export interface HttpServerHandle {
  /** The bound address as `host:port` (`[v6]:port` for IPv6). */
  address: string;
  /** Ends event streams, lets in-flight requests finish (briefly), and stops listening. */
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, code: ErrorCode, message: string, hint: string): void {
  sendJson(res, status, errorResponse(fail(code, message, { hint })));
}

function allowMethod(req: IncomingMessage, res: ServerResponse, method: 'GET' | 'POST'): boolean {
  if (req.method === method) return true;
  res.setHeader('Allow', method);
  sendError(res, 405, 'USAGE', `${req.method ?? '?'} ${req.url ?? ''} is not allowed`, `use ${method}`);
  return false;
}

/** Reads the request body up to the cap; undefined means a 413 has already been sent. */
function readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
  const tooLarge = (): undefined => {
    // The rest of the body is left unread, so this connection cannot be reused.
    res.setHeader('Connection', 'close');
    sendError(
      res,
      413,
      'INVALID_ARGUMENT',
      `request body exceeds ${MAX_REQUEST_BYTES} bytes`,
      'send one smaller request',
    );
    return undefined;
  };
  if (Number(req.headers['content-length'] ?? 0) > MAX_REQUEST_BYTES) return Promise.resolve(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BYTES) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.off('end', onEnd);
      resolve(tooLarge());
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    req.on('data', onData);
    req.on('end', onEnd);
    req.once('error', reject);
  });
}

/** Starts the opt-in HTTP listener: /rpc, /metrics and /events behind the bearer token, /healthz open. */
export function startHttpServer(opts: HttpServerOptions): Promise<HttpServerHandle> {
  const { host, port } = parseHttpAddr(opts.addr);
  const bearer = bearerCheck(opts.token);
  const hostRefusal = hostCheck(host);
  const pingMs = opts.ssePingMs ?? SSE_PING_MS;
  const writeDeadlineMs = opts.sseWriteDeadlineMs ?? SSE_WRITE_DEADLINE_MS;
  const streams = new Set<{ sub: Subscription; res: ServerResponse }>();
  /** Requests in progress per connection, so shutdown can end idle connections and wait for busy ones. */
  const inFlight = new Map<Socket, number>();
  let closing = false;

  const authorized = (req: IncomingMessage): boolean => bearer(req.headers.authorization);
  const deny = (res: ServerResponse): void => {
    res.setHeader('WWW-Authenticate', 'Bearer realm="offshoot"');
    sendError(
      res,
      401,
      'USAGE',
      'missing or wrong bearer token',
      'send Authorization: Bearer <token> (the token serve printed or OFFSHOOT_TOKEN)',
    );
  };

  const rpc = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (mediaType !== 'application/json') {
      sendError(
        res,
        400,
        'INVALID_ARGUMENT',
        'POST /rpc needs Content-Type: application/json',
        'set the Content-Type header',
      );
      return;
    }
    const body = await readBody(req, res);
    if (body === undefined) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      sendError(
        res,
        400,
        'INVALID_ARGUMENT',
        'request body is not valid JSON',
        'send one JSON object such as {"op":"status"}',
      );
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      sendError(
        res,
        400,
        'INVALID_ARGUMENT',
        'request body must be a JSON object',
        'send one JSON object such as {"op":"status"}',
      );
      return;
    }
    const op = (parsed as { op?: unknown }).op;
    if (op === 'export') {
      sendError(
        res,
        400,
        'UNSUPPORTED',
        'export is refused over HTTP',
        'run export over the unix socket on the daemon host (offshoot export, or an SDK)',
      );
      return;
    }
    if (op === 'subscribe') {
      sendJson(
        res,
        200,
        errorResponse(
          fail('UNSUPPORTED', 'subscribe is not available over /rpc', {
            hint: 'use GET /events for the event stream over HTTP',
          }),
        ),
      );
      return;
    }
    sendJson(res, 200, await opts.dispatch(parsed, 'http'));
  };

  const metrics = async (res: ServerResponse): Promise<void> => {
    const text = await opts.metrics.render();
    res.writeHead(200, { 'Content-Type': opts.metrics.contentType, 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };

  const events = (req: IncomingMessage, res: ServerResponse): void => {
    const sub = opts.events.subscribe();
    const stream = { sub, res };
    streams.add(stream);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    req.socket.setNoDelay(true);

    // A reader that stops reading would otherwise pin this socket forever: unflushed output has a deadline.
    let deadline: NodeJS.Timeout | undefined;
    const clearDeadline = (): void => {
      clearTimeout(deadline);
      deadline = undefined;
    };
    const send = (chunk: string): boolean => {
      const flushed = res.write(chunk);
      if (!flushed && deadline === undefined) deadline = setTimeout(() => res.destroy(), writeDeadlineMs);
      return flushed;
    };
    const drainedOrClosed = (): Promise<void> =>
      new Promise((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    const ping = setInterval(() => send(': ping\n\n'), pingMs);
    res.on('drain', clearDeadline);
    res.on('close', () => {
      clearInterval(ping);
      clearDeadline();
      sub.close();
      streams.delete(stream);
    });

    void (async () => {
      for await (const env of sub) {
        if (!send(`data: ${JSON.stringify(env)}\n\n`)) await drainedOrClosed();
        if (res.destroyed) return;
      }
      if (res.destroyed) return;
      res.end();
      if (res.writableNeedDrain && deadline === undefined) deadline = setTimeout(() => res.destroy(), writeDeadlineMs);
    })();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (closing) res.setHeader('Connection', 'close');
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.on('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      // A keep-alive connection whose last response finishes after close() began would otherwise linger.
      if (closing && left === 0) socket.end();
    });
    const refusal = hostRefusal(req.headers);
    if (refusal) return sendError(res, refusal.status, 'USAGE', refusal.message, refusal.hint);
    const path = new URL(req.url ?? '/', 'http://offshoot').pathname;
    switch (path) {
      case '/healthz':
        if (allowMethod(req, res, 'GET')) sendJson(res, 200, { ok: true, sessions: opts.sessionCount() });
        return;
      case '/rpc':
        if (!allowMethod(req, res, 'POST')) return;
        if (!authorized(req)) return deny(res);
        return rpc(req, res);
      case '/metrics':
        if (!allowMethod(req, res, 'GET')) return;
        if (!authorized(req)) return deny(res);
        return metrics(res);
      case '/events':
        if (!allowMethod(req, res, 'GET')) return;
        if (!authorized(req)) return deny(res);
        return events(req, res);
      default:
        if (opts.fallback) return opts.fallback.handle(req, res);
        sendError(
          res,
          404,
          'NOT_FOUND',
          `no route ${path}`,
          'the routes are POST /rpc, GET /metrics, GET /events and GET /healthz',
        );
    }
  };

  const server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1_000 },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        if (res.headersSent) res.destroy();
        else sendJson(res, 500, errorResponse(err));
      });
    },
  );
  server.keepAliveTimeout = IDLE_TIMEOUT_MS;
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.on('close', () => inFlight.delete(socket));
  });

  const close = (): Promise<void> => {
    closing = true;
    for (const s of streams) s.sub.close();
    opts.fallback?.close();
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const [socket, n] of inFlight) if (n === 0) socket.end();
    const force = setTimeout(() => {
      for (const socket of inFlight.keys()) socket.destroy();
    }, SHUTDOWN_GRACE_MS);
    return done.finally(() => clearTimeout(force));
  };

  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        fail('UNAVAILABLE', `http listen on ${opts.addr}: ${err.message}`, {
          hint: 'choose a free port, or stop whatever holds this one',
          cause: err,
        }),
      );
    });
    server.listen({ port, ...(host === '' ? {} : { host }) }, () => {
      const a = server.address() as AddressInfo;
      const address = a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
      resolve({ address, close });
    });
  });
}
