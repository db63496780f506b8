import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { hintFor } from '../../core/errors.js';
import { hostCheck } from '../../protocol/host-check.js';
import { listenHttp, readBody, type Refuse, sendJson } from '../../protocol/http-kit.js';
import { bearerCheck, type HttpConfig } from '../../protocol/http-listen.js';
import { sendWebResponse, toWebRequest } from './fetch-bridge.js';
import type { McpHub } from '../hub.js';
import { listenRequest } from './listen-filter.js';
import { refuseMalformedAnswers } from './malformed-answer.js';
import type { Era } from '../server.js';

/** The MCP endpoint path of `offshoot mcp -http`. */
export const MCP_HTTP_PATH = '/mcp';

/** Sessions at most; past it the least recently used one is closed. */
const MAX_SESSIONS = 64;
/** A session with no request for this long is closed. */
const SESSION_IDLE_MS = 60 * 60_000;
/** The largest request body read. */
const MAX_BODY = 4 * 1024 * 1024;

function reply(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null }, headers);
}

/** The kit's refusals (413, a failed request) as a JSON-RPC error, the hint in an agent's terms. */
const refuse: Refuse = (res, status, err) => {
  const hint = hintFor(err, 'agent');
  reply(res, status, hint === undefined ? err.message : `${err.message} (hint: ${hint})`);
};

/** A running MCP Streamable HTTP listener. */
export interface McpHttpHandle {
  /** The bound `host:port`. */
  address: string;
  close(): Promise<void>;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  lastUsed: number;
}

/** A POST body: its bytes, and its JSON (undefined when it is not JSON: the SDK answers that). */
interface Body {
  bytes: Buffer;
  json: unknown;
}

/** The body as read, its JSON with each malformed answer to a question of ours made the error it amounts to. */
function parsed(bytes: Buffer, log: (line: string) => void): Body {
  try {
    return { bytes, json: refuseMalformedAnswers(JSON.parse(bytes.toString('utf8')), log) };
  } catch {
    return { bytes, json: undefined };
  }
}

/**
 * Serves the same tools over MCP Streamable HTTP at /mcp behind the bearer token on every request and the
 * DNS-rebinding check of every local listener; the bind rules (loopback unless acknowledged, a token) were checked
 * by validateHttpFlags. Both protocol eras share the endpoint, told apart per request as the SDK tells them: a
 * 2026-07-28 request (its `_meta` envelope) goes to the SDK's per-request handler, which also serves its
 * `subscriptions/listen` streams; a 2025-era `initialize` starts a session (Mcp-Session-Id), which carries what needs
 * one: elicitation, subscriptions, log levels, notifications on GET; a 2025-era request with no session is served
 * statelessly, as before sessions existed, by a fresh server answering in JSON.
 */
export async function startMcpHttp(
  config: HttpConfig,
  build: (era: Era) => McpServer,
  hub: McpHub,
): Promise<McpHttpHandle> {
  const authorized = bearerCheck(config.token);
  const hostRefusal = hostCheck(config.host);
  const sessions = new Map<string, Session>();
  const modern = createMcpHandler(() => build('modern'), { legacy: 'reject', maxRequestBodySize: MAX_BODY });
  const modernSink = {
    updated: (uri: string) => modern.notify.resourceUpdated(uri),
    listChanged: () => modern.notify.resourcesChanged(),
  };

  const evict = (id: string): void => {
    const s = sessions.get(id);
    sessions.delete(id);
    void s?.transport.close();
    void s?.server.close();
  };
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, s] of sessions) if (now - s.lastUsed > SESSION_IDLE_MS) evict(id);
  }, 60_000);
  sweep.unref();

  const startSession = async (request: Request, body: unknown): Promise<Response> => {
    if (sessions.size >= MAX_SESSIONS) {
      const oldest = [...sessions].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
      if (oldest) evict(oldest[0]);
    }
    const server = build('legacy');
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, server, lastUsed: Date.now() }),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      void server.close();
    };
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody: body });
    // An initialize the transport refused (no text/event-stream in Accept, a non-JSON Content-Type) started no
    // session: nothing will ever reach this server again, so it leaves the hub now rather than never.
    if (transport.sessionId === undefined) {
      await transport.close();
      await server.close();
    }
    return response;
  };

  const stateless = async (request: Request, body: unknown, res: ServerResponse): Promise<Response> => {
    const server = build('legacy');
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  };

  /** A 2025-era request: to its session, else a new session (initialize), else a one-off server. */
  const legacy = async (req: IncomingMessage, res: ServerResponse, request: Request, body: unknown) => {
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const s = sessions.get(id);
      if (s === undefined) return reply(res, 404, 'session not found: initialize a new one');
      s.lastUsed = Date.now();
      return sendWebResponse(res, await s.transport.handleRequest(request, { parsedBody: body }));
    }
    if (req.method !== 'POST')
      return reply(res, 405, 'without a session this endpoint takes POST only (initialize to start one)', {
        Allow: 'POST',
      });
    if (isInitializeRequest(body)) return sendWebResponse(res, await startSession(request, body));
    return sendWebResponse(res, await stateless(request, body, res));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refusal = hostRefusal(req.headers);
    if (refusal) return reply(res, refusal.status, `${refusal.message} (hint: ${refusal.hint})`);
    const path = (req.url ?? '').split('?')[0];
    if (path !== MCP_HTTP_PATH) return reply(res, 404, `not found: use ${MCP_HTTP_PATH}`);
    if (!authorized(req.headers.authorization))
      return reply(res, 401, 'missing or wrong bearer token', { 'WWW-Authenticate': 'Bearer realm="offshoot"' });
    const bytes = req.method === 'POST' ? await readBody(req, res, MAX_BODY, refuse) : undefined;
    if (bytes === undefined && req.method === 'POST') return;
    // Before the SDK classifies it: an answer that is no object is no JSON-RPC message it would pass on.
    const body = bytes === undefined ? undefined : parsed(bytes, (line) => hub.log(line, 'warning'));
    const request = toWebRequest(req, res, body?.bytes);
    if (await isLegacyRequest(request, body?.json, { maxRequestBodySize: MAX_BODY }))
      return legacy(req, res, request, body?.json);
    const listen = listenRequest(body?.json);
    if (listen !== undefined) {
      const l = hub.listen(listen.filter, modernSink);
      // The stream's end (the client's cancel, a disconnect, shutdown) is the response closing.
      res.once('close', l.end);
      await l.watching;
    }
    return sendWebResponse(res, await modern.fetch(request, { parsedBody: body?.json }));
  };
  const listener = await listenHttp({
    host: config.host,
    port: config.port,
    what: 'mcp http',
    listenHint: 'choose a free port, or stop whatever holds this one',
    maxBodyBytes: MAX_BODY,
    refuse,
    handle,
  });
  return {
    address: listener.address,
    close: async () => {
      clearInterval(sweep);
      for (const id of [...sessions.keys()]) evict(id);
      await modern.close();
      await listener.close();
    },
  };
}
