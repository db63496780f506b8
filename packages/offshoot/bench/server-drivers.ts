import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Client as OffshootClient, connect } from '@offshoot/client';
import { toolCatalogue } from '@offshoot/tools';
import { startDaemon, until, type StoreDir } from '../test/daemon/daemon-process.js';
import { baseEnv, offshootBin } from '../test/e2e/cli-harness.js';
import { startUi } from '../test/ui/ui-support.js';

// One driver per long-lived server: it starts the server on a store that holds database `app`, and each cycle sends a
// mix of requests it answers and requests it refuses, checking every answer is the expected one.

/** The token every soaked listener runs with. */
export const TOKEN = 'server-soak-token-0123456789abcdef';
const MODERN = '2026-07-28';
/** How many tools every MCP server lists: the whole catalogue. */
const TOOL_COUNT = Object.keys(toolCatalogue({ defaultTtl: 'none', defaultIfHead: false })).length;

/** A running server under soak. */
export interface Driven {
  /** The process whose RSS and descriptors are sampled. */
  pid: number;
  /** One round of good and refused requests; returns how many of each it sent. */
  cycle(i: number): Promise<{ good: number; refused: number }>;
  stop(): Promise<void>;
}

/** A named way to start one server. */
export interface Driver {
  name: string;
  /** What one cycle sends, for the report. */
  mix: string;
  start(s: StoreDir): Promise<Driven>;
}

function expect(cond: boolean, what: string): void {
  if (!cond) throw new Error(`soak: ${what}`);
}

/** Sends a raw HTTP request and returns its status (the body read and dropped). */
async function status(url: string, init: RequestInit): Promise<number> {
  try {
    const r = await fetch(url, init);
    await r.arrayBuffer();
    return r.status;
  } catch (err) {
    const cause = (err as { cause?: { message?: string; code?: string } }).cause;
    throw new Error(
      `${init.method ?? 'GET'} ${url}: ${(err as Error).message} (${cause?.code ?? ''} ${cause?.message ?? ''})`,
    );
  }
}

/** A body just over `cap`, announced, for a 413. */
const tooLarge = (cap: number): Uint8Array => new Uint8Array(cap + 1);

const daemon: Driver = {
  name: 'daemon (socket and -http)',
  mix: 'good: dbs, branches, status over the socket, fork + destroy, POST /rpc, /healthz, /metrics; refused: unknown op, a taken fork name, 401, bad JSON, 413',
  async start(s) {
    // The janitor on, as a daemon runs: the forks the cycles destroy are collected, so the store stays its size.
    const d = await startDaemon(s, ['-http', '127.0.0.1:0', '-reap-every', '5s', '-gc-grace', '0s'], {
      OFFSHOOT_TOKEN: TOKEN,
    });
    await until(() => /listening on /.test(d.stderr()), 'the daemon http listener');
    const base = `http://${/listening on (\S+)/.exec(d.stderr())?.[1] ?? ''}`;
    const c: OffshootClient = await connect(d.sock);
    const auth = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
    return {
      pid: d.proc.pid as number,
      async cycle(i) {
        await c.dbs();
        await c.branches('app');
        await c.status();
        await c.fork('app', 'main', `soak-${i}`);
        await c.destroy('app', `soak-${i}`);
        expect((await status(`${base}/rpc`, { method: 'POST', headers: auth, body: '{"op":"dbs"}' })) === 200, 'rpc');
        expect((await status(`${base}/healthz`, {})) === 200, 'healthz');
        expect((await status(`${base}/metrics`, { headers: auth })) === 200, 'metrics');
        expect(!(await d.request({ op: 'no-such-op' })).ok, 'an unknown op refused');
        expect(!(await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'main' })).ok, 'a taken name refused');
        expect((await status(`${base}/rpc`, { method: 'POST', body: '{"op":"dbs"}' })) === 401, '401');
        expect((await status(`${base}/rpc`, { method: 'POST', headers: auth, body: '{op' })) === 400, 'bad JSON');
        const big = { method: 'POST', headers: auth, body: tooLarge(1 << 20) };
        expect((await status(`${base}/rpc`, big)) === 413, '413');
        return { good: 8, refused: 5 };
      },
      async stop() {
        await c.close();
        await d.stop();
      },
    };
  },
};

/** A JSON-RPC response as the soak reads it. */
interface Answer {
  result?: unknown;
  error?: { code: number };
}

/** `offshoot mcp` on stdio, driven line by line. */
function stdioPeer(s: StoreDir): {
  proc: ChildProcess;
  ask(msg: object): Promise<Answer>;
  send(msg: object): void;
} {
  const proc = spawn(offshootBin, ['-store', s.store, 'mcp', '-reap-every', '0'], {
    env: baseEnv(),
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const waiting = new Map<unknown, (m: Answer) => void>();
  createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    const m = JSON.parse(line) as Answer & { id?: unknown };
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
  });
  let id = 0;
  const send = (msg: object): void => void proc.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
  return {
    proc,
    send,
    ask: (msg) =>
      new Promise((resolve) => {
        id += 1;
        waiting.set(id, resolve);
        send({ id, ...msg });
      }),
  };
}

function stopProc(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.stdin?.end();
    proc.kill('SIGTERM');
  });
}

const mcpStdioLegacy: Driver = {
  name: 'mcp stdio, 2025 era',
  mix: 'good: tools/call offshoot_list, resources/read, subscribe + unsubscribe, ping; refused: subscribe to file:///etc/passwd, subscriptions/listen, an unknown tool, an unknown method',
  async start(s) {
    const p = stdioPeer(s);
    const init = await p.ask({
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'soak', version: '1' } },
    });
    expect(init.result !== undefined, 'initialize');
    p.send({ method: 'notifications/initialized' });
    return {
      pid: p.proc.pid as number,
      async cycle() {
        const list = await p.ask({ method: 'tools/call', params: { name: 'offshoot_list', arguments: {} } });
        expect((list.result as { isError?: boolean }).isError !== true, 'offshoot_list');
        expect(
          (await p.ask({ method: 'resources/read', params: { uri: 'offshoot://app/main' } })).result !== undefined,
          'read',
        );
        expect(
          (await p.ask({ method: 'resources/subscribe', params: { uri: 'offshoot://app/main' } })).result !== undefined,
          'subscribe',
        );
        expect(
          (await p.ask({ method: 'resources/unsubscribe', params: { uri: 'offshoot://app/main' } })).result !==
            undefined,
          'unsubscribe',
        );
        expect((await p.ask({ method: 'ping' })).result !== undefined, 'ping');
        expect(
          (await p.ask({ method: 'resources/subscribe', params: { uri: 'file:///etc/passwd' } })).error?.code ===
            -32602,
          'a foreign subscription refused',
        );
        const listen = { method: 'subscriptions/listen', params: { notifications: { resourcesListChanged: true } } };
        expect((await p.ask(listen)).error?.code === -32601, 'listen refused in the 2025 era');
        const unknown = await p.ask({ method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } });
        expect(
          unknown.error !== undefined || (unknown.result as { isError?: boolean }).isError === true,
          'an unknown tool',
        );
        expect((await p.ask({ method: 'no/such/method' })).error?.code === -32601, 'an unknown method');
        return { good: 5, refused: 4 };
      },
      stop: () => stopProc(p.proc),
    };
  },
};

/** The per-request envelope of the 2026-07-28 revision. */
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'soak', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

const mcpStdioModern: Driver = {
  name: 'mcp stdio, 2026-07-28',
  mix: 'good: tools/call offshoot_list, resources/read, a listen stream opened and cancelled; refused: a listen without a filter, a tool call with bad arguments, an unknown resource',
  async start(s) {
    const p = stdioPeer(s);
    expect((await p.ask({ method: 'server/discover', params: { _meta: envelope } })).result !== undefined, 'discover');
    let listenId = 0;
    return {
      pid: p.proc.pid as number,
      async cycle(i) {
        const list = await p.ask({
          method: 'tools/call',
          params: { name: 'offshoot_list', arguments: {}, _meta: envelope },
        });
        expect((list.result as { isError?: boolean }).isError !== true, 'offshoot_list');
        const read = { method: 'resources/read', params: { uri: 'offshoot://app/main', _meta: envelope } };
        expect((await p.ask(read)).result !== undefined, 'read');
        // A listen stream stays open until cancelled: opened on its own id, then cancelled.
        const id = `listen-${i}-${listenId++}`;
        p.send({
          id,
          method: 'subscriptions/listen',
          params: { _meta: envelope, notifications: { resourceSubscriptions: ['offshoot://app/main'] } },
        });
        p.send({ method: 'notifications/cancelled', params: { requestId: id, _meta: envelope } });
        expect(
          (await p.ask({ method: 'subscriptions/listen', params: { _meta: envelope } })).error !== undefined,
          'a listen without a filter refused',
        );
        const bad = await p.ask({
          method: 'tools/call',
          params: { name: 'offshoot_diff', arguments: { nope: 1 }, _meta: envelope },
        });
        expect(
          bad.error !== undefined || (bad.result as { isError?: boolean }).isError === true,
          'bad arguments refused',
        );
        const missing = { method: 'resources/read', params: { uri: 'offshoot://app/no-such-branch', _meta: envelope } };
        expect((await p.ask(missing)).error !== undefined, 'an unknown resource refused');
        return { good: 3, refused: 3 };
      },
      stop: () => stopProc(p.proc),
    };
  },
};

/** `offshoot mcp -http` on a free port, with its URL. */
async function mcpHttp(s: StoreDir): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(offshootBin, ['-store', s.store, 'mcp', '-http', '127.0.0.1:0', '-reap-every', '0'], {
    env: baseEnv({ OFFSHOOT_TOKEN: TOKEN }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  await until(() => /serving MCP on (http:\/\/\S+)/.test(err), 'the MCP listener');
  return { proc, url: /serving MCP on (http:\/\/\S+)/.exec(err)?.[1] ?? '' };
}

const auth = { Authorization: `Bearer ${TOKEN}` };

const mcpHttpLegacy: Driver = {
  name: 'mcp -http, 2025 era',
  mix: 'good: a session (initialize, tools/list, tools/call offshoot_list, DELETE); refused: initialize without text/event-stream (406), with text/plain (415), 401, an unknown session (404), 413',
  async start(s) {
    const { proc, url } = await mcpHttp(s);
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'soak', version: '1' } },
    });
    const json = { ...auth, 'Content-Type': 'application/json' };
    return {
      pid: proc.pid as number,
      async cycle() {
        const client = new LegacyClient({ name: 'soak', version: '1' });
        const transport = new LegacyHttp(new URL(url), { requestInit: { headers: auth } });
        await client.connect(transport);
        expect((await client.listTools()).tools.length === TOOL_COUNT, 'tools/list');
        await client.callTool({ name: 'offshoot_list', arguments: {} });
        await transport.terminateSession();
        await client.close();
        expect(
          (await status(url, { method: 'POST', headers: { ...json, Accept: 'application/json' }, body: init })) === 406,
          '406',
        );
        const plain = { ...auth, 'Content-Type': 'text/plain', Accept: 'application/json, text/event-stream' };
        expect((await status(url, { method: 'POST', headers: plain, body: init })) === 415, '415');
        expect((await status(url, { method: 'POST', body: init })) === 401, '401');
        const lost = { ...json, Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': 'no-such-session' };
        expect((await status(url, { method: 'POST', headers: lost, body: init })) === 404, 'an unknown session');
        expect((await status(url, { method: 'POST', headers: json, body: tooLarge(4 << 20) })) === 413, '413');
        return { good: 4, refused: 5 };
      },
      stop: () => stopProc(proc),
    };
  },
};

const mcpHttpModern: Driver = {
  name: 'mcp -http, 2026-07-28',
  mix: 'good: the SDK 2 client pinned to 2026-07-28 (discover, tools/list, tools/call offshoot_list, resources/read); refused: 401, a tool call with bad arguments, an unknown resource, 413',
  async start(s) {
    const { proc, url } = await mcpHttp(s);
    const client = new ModernClient({ name: 'soak', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new ModernHttp(new URL(url), { requestInit: { headers: auth } }));
    return {
      pid: proc.pid as number,
      async cycle() {
        expect((await client.listTools()).tools.length === TOOL_COUNT, 'tools/list');
        await client.callTool({ name: 'offshoot_list', arguments: {} });
        await client.readResource({ uri: 'offshoot://app/main' });
        const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } });
        expect((await status(url, { method: 'POST', headers, body })) === 401, '401');
        const bad = await client
          .callTool({ name: 'offshoot_diff', arguments: { nope: 1 } })
          .catch(() => ({ isError: true }));
        expect(bad.isError === true, 'bad arguments refused');
        expect(
          await client.readResource({ uri: 'offshoot://app/no-such-branch' }).then(
            () => false,
            () => true,
          ),
          'an unknown resource refused',
        );
        const big = { method: 'POST', headers: { ...headers, ...auth }, body: tooLarge(4 << 20) };
        expect((await status(url, big)) === 413, '413');
        return { good: 3, refused: 4 };
      },
      async stop() {
        await client.close();
        await stopProc(proc);
      },
    };
  },
};

const ui: Driver = {
  name: 'offshoot ui',
  mix: 'good: GET /api/dbs, /api/dbs/app/tree, /api/dbs/app/branches/main, the page; refused: 401, 404, 405, 413',
  async start(s) {
    const u = await startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN });
    const base = new URL(u.url).origin;
    return {
      pid: u.pid,
      async cycle() {
        for (const path of ['/api/dbs', '/api/dbs/app/tree', '/api/dbs/app/branches/main', '/'])
          expect((await status(`${base}${path}`, { headers: auth })) === 200, path);
        expect((await status(`${base}/api/dbs`, {})) === 401, '401');
        expect((await status(`${base}/api/nothing-here`, { headers: auth })) === 404, '404');
        expect((await status(`${base}/api/dbs`, { method: 'POST', headers: auth, body: '{}' })) === 405, '405');
        expect(
          (await status(`${base}/api/dbs`, { method: 'POST', headers: auth, body: tooLarge(1 << 20) })) === 413,
          '413',
        );
        return { good: 4, refused: 4 };
      },
      stop: () => u.stop(),
    };
  },
};

/** Every long-lived server, in the order the soak runs them. */
export const DRIVERS: readonly Driver[] = [daemon, mcpStdioLegacy, mcpStdioModern, mcpHttpLegacy, mcpHttpModern, ui];
