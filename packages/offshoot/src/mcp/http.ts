import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { hostCheck } from '../protocol/host-check.js';
import { bearerCheck, type HttpConfig } from '../protocol/http-listen.js';

/** The MCP endpoint path of `offshoot mcp -http`. */
export const MCP_HTTP_PATH = '/mcp';

/** Sessions at most; past it the least recently used one is closed. */
const MAX_SESSIONS = 64;
/** A session with no request for this long is closed. */
const SESSION_IDLE_MS = 60 * 60_000;
/** The largest request body read. */
const MAX_BODY = 4 * 1024 * 1024;

function reply(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(body);
}

/** A running MCP Streamable HTTP listener. */
export interface McpHttpHandle {
  /** The bound `host:port`. */
  address: string;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  lastUsed: number;
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error(`request body over ${MAX_BODY} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.once('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(undefined);
      }
    });
    req.once('error', reject);
  });
}

/**
 * Serves the same tools over MCP Streamable HTTP at /mcp behind the bearer token on every request and the
 * DNS-rebinding check of every local listener; the bind rules (loopback unless acknowledged, a token) were checked
 * by validateHttpFlags. An `initialize` starts a session (Mcp-Session-Id), which carries what needs one:
 * elicitation, subscriptions, log levels, notifications on GET; a request with no session is served statelessly, as
 * before sessions existed, by a fresh server answering in JSON.
 */
export async function startMcpHttp(config: HttpConfig, build: () => McpServer): Promise<McpHttpHandle> {
  const authorized = bearerCheck(config.token);
  const hostRefusal = hostCheck(config.host);
  const sessions = new Map<string, Session>();

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

  const startSession = async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    if (sessions.size >= MAX_SESSIONS) {
      const oldest = [...sessions].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
      if (oldest) evict(oldest[0]);
    }
    const server = build();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, server, lastUsed: Date.now() }),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      void server.close();
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const stateless = async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refusal = hostRefusal(req.headers);
    if (refusal) return reply(res, refusal.status, `${refusal.message} (hint: ${refusal.hint})`);
    const path = (req.url ?? '').split('?')[0];
    if (path !== MCP_HTTP_PATH) return reply(res, 404, `not found: use ${MCP_HTTP_PATH}`);
    if (!authorized(req.headers.authorization))
      return reply(res, 401, 'missing or wrong bearer token', { 'WWW-Authenticate': 'Bearer realm="offshoot"' });
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const s = sessions.get(id);
      if (s === undefined) return reply(res, 404, 'session not found: initialize a new one');
      s.lastUsed = Date.now();
      return s.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST')
      return reply(res, 405, 'without a session this endpoint takes POST only (initialize to start one)', {
        Allow: 'POST',
      });
    const body = await readBody(req);
    if (isInitializeRequest(body)) return startSession(req, res, body);
    return stateless(req, res, body);
  };
  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) reply(res, 500, err.message);
      else res.destroy();
    });
  });
  http.headersTimeout = 5_000;
  http.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(config.port, config.host === '' ? undefined : config.host, () => resolve());
  });
  const a = http.address() as AddressInfo;
  return {
    address: a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`,
    close: () =>
      new Promise((resolve) => {
        clearInterval(sweep);
        for (const id of [...sessions.keys()]) evict(id);
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
