// A real `offshoot mcp` process driven by the official MCP client over stdio, against a private store in a temp dir.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { StoreDir } from '../daemon/daemon-process.js';
import { baseEnv, ensureBuilt, offshootBin } from '../e2e/cli-harness.js';

/** One tool call's outcome, flattened for assertions. */
export interface Call {
  isError: boolean;
  text: string;
  structured: Record<string, unknown>;
  code: string | undefined;
}

/** A temp dir with an initialized store, and helpers to run the CLI and stock sqlite3 against it. */
export interface McpStore {
  dir: string;
  store: string;
  cli(args: string[], expectCode?: number): { stdout: string; stderr: string; code: number };
  sqlite(db: string, sql: string): string;
  cleanup(): void;
}

/** Makes a store with database `app` (table t with three rows) unless `withApp` is false. */
export function makeMcpStore(withApp = true): McpStore {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-mcp-'));
  const store = join(dir, 's');
  const cli = (args: string[], expectCode = 0) => {
    const r = spawnSync(offshootBin, ['-store', store, ...args], { cwd: dir, env: baseEnv(), encoding: 'utf8' });
    const out = { stdout: r.stdout, stderr: r.stderr, code: r.status ?? -1 };
    assert.equal(out.code, expectCode, `offshoot ${args.join(' ')}: ${out.stderr}`);
    return out;
  };
  const sqlite = (db: string, sql: string): string => {
    const r = spawnSync('sqlite3', ['-bail', db], { input: `.timeout 5000\n${sql}`, encoding: 'utf8' });
    assert.equal(r.status, 0, `sqlite3 failed: ${r.stderr}`);
    return r.stdout;
  };
  cli(['init']);
  if (withApp) {
    const seed = join(dir, 'seed.db');
    sqlite(seed, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('a'),('b'),('c');");
    cli(['create', 'app', '--from', seed]);
  }
  return { dir, store, cli, sqlite, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A connected MCP client on `offshoot mcp`, its tools listed (so the client validates every structuredContent). */
export interface McpSession {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<Call>;
  stderr(): string;
  close(): Promise<void>;
}

/** Flattens a tool result (its text parts; resource links are checked where they matter). */
export function flatten(r: CallToolResult): Call {
  const text = r.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
  const meta = r._meta?.['offshoot/error'] as { code?: string } | undefined;
  return {
    isError: r.isError === true,
    text,
    structured: (r.structuredContent ?? {}) as Record<string, unknown>,
    code: meta?.code,
  };
}

/** Starts `offshoot -store <store> mcp <flags>` and connects the SDK client to it over stdio. */
export async function startMcp(
  storePath: string,
  flags: string[] = [],
  opts: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    command?: string;
    args?: string[];
    /** What the client declares (elicitation, …). */
    capabilities?: ClientCapabilities;
    /** Runs before connecting: where a test installs its request handlers (an elicitation answer). */
    setup?: (client: Client) => void;
  } = {},
): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: opts.command ?? offshootBin,
    args: opts.args ?? ['-store', storePath, 'mcp', ...flags],
    env: baseEnv(opts.env) as Record<string, string>,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const client = new Client(
    { name: 'offshoot-test', version: '1.0.0' },
    opts.capabilities ? { capabilities: opts.capabilities } : {},
  );
  opts.setup?.(client);
  await client.connect(transport);
  await client.listTools();
  return {
    client,
    call: async (name, args = {}) => flatten((await client.callTool({ name, arguments: args })) as CallToolResult),
    stderr: () => err,
    close: () => client.close(),
  };
}

/** Asserts a successful call and returns its structured content. */
export function ok(c: Call): Record<string, unknown> {
  assert.equal(c.isError, false, `expected success, got: ${c.text}`);
  return c.structured;
}

/** Asserts a refusal with this code whose text matches re. */
export function refused(c: Call, code: string, re?: RegExp): void {
  assert.equal(c.isError, true, `expected a refusal, got: ${c.text}`);
  assert.equal(c.code, code, `expected ${code}: ${c.text}`);
  if (re) assert.match(c.text, re);
}

/** Every ref object of the store, path → bytes: equal snapshots prove a refused call changed nothing. */
export function refsSnapshot(store: string): Record<string, string> {
  const root = join(store, 'refs');
  const out: Record<string, string> = {};
  for (const f of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    const p = join(root, f);
    if (statSync(p).isFile() && !f.endsWith('.lock')) out[f] = readFileSync(p, 'utf8');
  }
  return out;
}

/** The store in the shape the daemon suites' startDaemon takes. */
export function asStoreDir(s: McpStore): StoreDir {
  return {
    dir: s.dir,
    store: s.store,
    file: (name) => join(s.dir, name),
    cli: (args, env) => {
      const r = spawnSync(offshootBin, ['-store', s.store, ...args], {
        cwd: s.dir,
        env: baseEnv(env),
        encoding: 'utf8',
      });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
    cleanup: s.cleanup,
  };
}
