import type { IncomingMessage, ServerResponse } from 'node:http';
import { fail, type ErrorCode } from '../core/errors.js';
import { errorResponse } from '../protocol/errors.js';
import { hostCheck } from '../protocol/host-check.js';
import { type HttpListener, listenHttp, readBody, type Refuse, sendJson, sendJsonText } from '../protocol/http-kit.js';
import { bearerCheck, parseHttpAddr } from '../protocol/http-listen.js';
import { encodeResponse } from '../protocol/response-line.js';
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

const SSE_PING_MS = 15_000;
const SSE_WRITE_DEADLINE_MS = 45_000;

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

/** The daemon's refusals: its wire error response, as the socket answers. */
const refuse: Refuse = (res, status, err) => sendJson(res, status, errorResponse(err));

function sendError(res: ServerResponse, status: number, code: ErrorCode, message: string, hint: string): void {
  refuse(res, status, fail(code, message, { hint }));
}

function allowMethod(req: IncomingMessage, res: ServerResponse, method: 'GET' | 'POST'): boolean {
  if (req.method === method) return true;
  res.setHeader('Allow', method);
  sendError(res, 405, 'USAGE', `${req.method ?? '?'} ${req.url ?? ''} is not allowed`, `use ${method}`);
  return false;
}

/** Starts the opt-in HTTP listener: /rpc, /metrics and /events behind the bearer token, /healthz open. */
export function startHttpServer(opts: HttpServerOptions): Promise<HttpServerHandle> {
  const { host, port } = parseHttpAddr(opts.addr);
  const bearer = bearerCheck(opts.token);
  const hostRefusal = hostCheck(host);
  const pingMs = opts.ssePingMs ?? SSE_PING_MS;
  const writeDeadlineMs = opts.sseWriteDeadlineMs ?? SSE_WRITE_DEADLINE_MS;
  const streams = new Set<{ sub: Subscription; res: ServerResponse }>();

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
    const body = await readBody(req, res, MAX_REQUEST_BYTES, refuse);
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
    sendJsonText(res, 200, encodeResponse(await opts.dispatch(parsed, 'http')));
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

  return listenHttp({
    host,
    port,
    what: 'http',
    listenHint: 'choose a free port, or stop whatever holds this one',
    maxBodyBytes: MAX_REQUEST_BYTES,
    refuse,
    handle,
  }).then((listener: HttpListener) => ({
    address: listener.address,
    close: () => {
      for (const s of streams) s.sub.close();
      opts.fallback?.close();
      return listener.close();
    },
  }));
}
