import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { bearerCheck, type HttpConfig } from '../protocol/http-listen.js';

/** The MCP endpoint path of `offshoot mcp -http`. */
export const MCP_HTTP_PATH = '/mcp';

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

/**
 * Serves the same tools over MCP Streamable HTTP at /mcp, stateless (a fresh server per request), behind the bearer
 * token on every request; the bind rules (loopback unless acknowledged, a token) were checked by validateHttpFlags.
 */
export async function startMcpHttp(config: HttpConfig, build: () => McpServer): Promise<McpHttpHandle> {
  const authorized = bearerCheck(config.token);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== MCP_HTTP_PATH) return reply(res, 404, `not found: use ${MCP_HTTP_PATH}`);
    if (!authorized(req.headers.authorization))
      return reply(res, 401, 'missing or wrong bearer token', { 'WWW-Authenticate': 'Bearer realm="offshoot"' });
    if (req.method !== 'POST') return reply(res, 405, 'this stateless endpoint takes POST only', { Allow: 'POST' });
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
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
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
