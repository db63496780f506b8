// `offshoot mcp -http`: MCP Streamable HTTP behind a bearer token, loopback unless acknowledged, same tool results as stdio.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { until } from '../daemon/daemon-process.js';
import { baseEnv, offshootBin } from '../e2e/cli-harness.js';
import { flatten, makeMcpStore, ok, startMcp, type McpStore } from './mcp-harness.js';

const TOKEN = 'mcp-http-test-token-0123456789';

function mcp(s: McpStore, flags: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(offshootBin, ['-store', s.store, 'mcp', ...flags], {
    env: baseEnv(env),
    encoding: 'utf8',
    input: '',
    timeout: 30_000,
  });
}

describe('offshoot mcp -http', () => {
  let s: McpStore;
  let proc: ChildProcess;
  let url: string;
  let stderr = '';
  before(async () => {
    s = makeMcpStore();
    proc = spawn(offshootBin, ['-store', s.store, 'mcp', '-http', '127.0.0.1:0', '-reap-every', '0'], {
      env: baseEnv({ OFFSHOOT_TOKEN: TOKEN }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await until(() => /serving MCP on (http:\/\/\S+)/.test(stderr), 'the HTTP listener');
    url = /serving MCP on (http:\/\/\S+)/.exec(stderr)?.[1] ?? '';
  });
  after(() => {
    proc.kill('SIGTERM');
    s.cleanup();
  });

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'offshoot-http-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  }

  test('every request needs the bearer token', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    assert.equal((await fetch(url, { method: 'POST', headers, body })).status, 401);
    const wrong = await fetch(url, {
      method: 'POST',
      headers: { ...headers, Authorization: 'Bearer nope-nope-nope-nope' },
      body,
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('www-authenticate'), 'Bearer realm="offshoot"');
    await assert.rejects(connect('wrong-token-0123456789'));
    assert.equal(
      (await fetch(url.replace('/mcp', '/other'), { headers: { Authorization: `Bearer ${TOKEN}` } })).status,
      404,
    );
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/, 'loopback by default');
  });

  test('the same tools and the same results as over stdio', async () => {
    const http = await connect(TOKEN);
    const stdio = await startMcp(s.store, ['-reap-every', '0']);
    try {
      const viaHttp = (await http.listTools()).tools;
      const viaStdio = (await stdio.client.listTools()).tools;
      assert.deepEqual(viaHttp, viaStdio);
      const call = async (name: string, args: Record<string, unknown>) =>
        flatten((await http.callTool({ name, arguments: args })) as CallToolResult);
      const forked = ok(await call('offshoot_fork', { database: 'app', new_branch: 'over-http', ttl: '2h' }));
      assert.equal(forked.ttl, '2h0m0s');
      const a = ok(await call('offshoot_query', { database: 'app', branch: 'over-http', sql: 'SELECT id, v FROM t' }));
      const b = ok(
        await stdio.call('offshoot_query', { database: 'app', branch: 'over-http', sql: 'SELECT id, v FROM t' }),
      );
      assert.deepEqual(a, b);
      const refusedHttp = await call('offshoot_destroy', { database: 'app', branch: 'main', force: true });
      const refusedStdio = await stdio.call('offshoot_destroy', { database: 'app', branch: 'main', force: true });
      assert.deepEqual(refusedHttp, refusedStdio);
      assert.equal(refusedHttp.code, 'PROTECTED');
    } finally {
      await http.close();
      await stdio.close();
    }
  });

  test('a session carries subscriptions, log level, progress and resource reads; a sessionless POST still works', async () => {
    const client = await connect(TOKEN);
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await client.setLoggingLevel('notice');
    const main = (await client.readResource({ uri: 'offshoot://app/main' })).contents[0];
    assert.ok(main && 'text' in main && JSON.parse(main.text).branch === 'main');
    await client.subscribeResource({ uri: 'offshoot://app/main' });
    s.cli(['touch', 'app']);
    await until(() => updated.includes('offshoot://app/main'), 'the update over the session stream');
    const steps: string[] = [];
    await client.callTool({ name: 'offshoot_query', arguments: { database: 'app', sql: 'SELECT 1' } }, undefined, {
      onprogress: (p) => void steps.push(p.message ?? ''),
    });
    assert.ok(
      steps.some((m) => /querying app@main/.test(m)),
      steps.join('\n'),
    );
    await client.close();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} });
    const sessionless = await fetch(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${TOKEN}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body,
    });
    assert.equal(sessionless.status, 200);
    assert.equal(((await sessionless.json()) as { result: { tools: unknown[] } }).result.tools.length, 11);
  });

  test('the bind rules of serve -http: loopback unless acknowledged, an explicit long token', () => {
    const open = mcp(s, ['-http', '0.0.0.0:0', '-token', TOKEN]);
    assert.equal(open.status, 2);
    assert.match(open.stderr, /refusing to listen on a non-loopback address/);
    const noToken = mcp(s, ['-http', '0.0.0.0:0', '-http-allow-non-loopback']);
    assert.equal(noToken.status, 2);
    assert.match(noToken.stderr, /needs an explicit token/);
    const short = mcp(s, ['-http', '127.0.0.1:0', '-token', 'short']);
    assert.equal(short.status, 2);
    assert.match(short.stderr, /too short/);
    const stray = mcp(s, ['-token', TOKEN]);
    assert.equal(stray.status, 2);
    assert.match(stray.stderr, /-token requires -http/);
  });
});
