// The official MCP conformance suite (@modelcontextprotocol/conformance, on the Node that runs the tests: it needs
// 22 or later, as offshoot does) against `offshoot mcp -http`: every server scenario that applies to a server with offshoot's capabilities.
// The suite sends no bearer token, so a forwarding proxy adds one, passing Host and Origin through untouched so the
// DNS-rebinding scenario reaches the real check. docs/mcp.md lists the scenarios that do not apply, and why.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stripVTControlCharacters } from 'node:util';
import { until } from '../daemon/daemon-process.js';
import { baseEnv, offshootBin } from '../e2e/cli-harness.js';
import { makeMcpStore, type McpStore } from './mcp-harness.js';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
const SUITE = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const TOKEN = 'conformance-proxy-token-0123456789';
const BASELINE = join(import.meta.dirname, 'conformance-not-applicable.yml');

/** The server scenarios that apply to offshoot; conformance-not-applicable.yml lists the rest. */
const APPLICABLE = [
  'server-initialize',
  'ping',
  'tools-list',
  'prompts-list',
  'resources-list',
  'logging-set-level',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

/** A proxy on loopback that forwards every request to `upstream` with the bearer token added. */
function tokenProxy(upstream: URL): Promise<Server> {
  const proxy = createServer((req, res) => {
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${TOKEN}` },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)));
}

describe('the MCP conformance suite', () => {
  let s: McpStore;
  let proc: ChildProcess;
  let proxy: Server;
  let url = '';
  before(async () => {
    assert.ok(existsSync(SUITE), 'run npm ci (the suite is a devDependency)');
    s = makeMcpStore();
    let stderr = '';
    proc = spawn(offshootBin, ['-store', s.store, 'mcp', '-http', '127.0.0.1:0', '-reap-every', '0'], {
      env: baseEnv({ OFFSHOOT_TOKEN: TOKEN }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    proc.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await until(() => /serving MCP on (http:\/\/\S+)/.test(stderr), 'the HTTP listener');
    proxy = await tokenProxy(new URL(/serving MCP on (http:\/\/\S+)/.exec(stderr)?.[1] ?? ''));
    url = `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`;
  });
  after(() => {
    proxy?.closeAllConnections();
    proxy?.close();
    proc?.kill('SIGTERM');
    s?.cleanup();
  });

  test('every scenario that applies passes, and only the listed ones do not apply', async () => {
    // Not spawnSync: the proxy runs in this process and must keep forwarding while the suite runs.
    const suite = spawn(
      process.execPath,
      [SUITE, 'server', '--url', url, '--suite', 'active', '--expected-failures', BASELINE],
      {
        env: baseEnv({ NO_COLOR: '1' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const r = { stdout: '', stderr: '', status: null as number | null };
    suite.stdout.setEncoding('utf8').on('data', (d: string) => (r.stdout += d));
    suite.stderr.setEncoding('utf8').on('data', (d: string) => (r.stderr += d));
    r.status = await new Promise<number | null>((resolve) => suite.once('close', resolve));
    const out = stripVTControlCharacters(r.stdout);
    assert.equal(r.status, 0, `${out}\n${r.stderr}`);
    for (const scenario of APPLICABLE) assert.match(out, new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`), scenario);
  });
});
