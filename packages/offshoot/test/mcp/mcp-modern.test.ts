// The 2026-07-28 revision, served by the same `offshoot mcp` binary as the 2025 era, driven by the official SDK 2
// client pinned to it (and by raw JSON-RPC where the wire itself is the point), over stdio and Streamable HTTP: no
// initialize, the same tools, resources, prompt and completion; subscriptions through `subscriptions/listen`;
// -confirm-force through an `input_required` result whose signed state no client can forge; the log level, progress
// and cancellation per request. A 2025 client of the same binary runs beside it.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { Client, type ElicitResult, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { until } from '../daemon/daemon-process.js';
import { baseEnv, offshootBin } from '../e2e/cli-harness.js';
import { type Call, flatten, makeMcpStore, type McpStore, ok, refsSnapshot, refused, startMcp } from './mcp-harness.js';

const MODERN = '2026-07-28';
const TOKEN = 'mcp-modern-http-token-0123456789';

/** What one SDK 2 client heard: resource updates, list changes, log lines and the questions put to its human. */
interface Heard {
  updated: string[];
  listChanged: number;
  logs: string[];
  asked: string[];
}

/** An SDK 2 client pinned to 2026-07-28 (no fallback) that answers each question with `answer()`. */
async function modernClient(
  transport: StdioClientTransport | StreamableHTTPClientTransport,
  answer: () => ElicitResult,
  elicitation = true,
): Promise<{ client: Client; heard: Heard; call(name: string, args?: Record<string, unknown>): Promise<Call> }> {
  const heard: Heard = { updated: [], listChanged: 0, logs: [], asked: [] };
  const client = new Client(
    { name: 'offshoot-modern-test', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: MODERN } },
      ...(elicitation ? { capabilities: { elicitation: { form: {} } } } : {}),
    },
  );
  client.setNotificationHandler('notifications/resources/updated', (n) => void heard.updated.push(n.params.uri));
  client.setNotificationHandler('notifications/resources/list_changed', () => void heard.listChanged++);
  client.setNotificationHandler('notifications/message', (n) => void heard.logs.push(String(n.params.data)));
  if (elicitation)
    client.setRequestHandler('elicitation/create', (req) => {
      heard.asked.push(req.params.message);
      return answer();
    });
  await client.connect(transport);
  await client.listTools();
  return {
    client,
    heard,
    call: async (name, args = {}) => flatten((await client.callTool({ name, arguments: args })) as never),
  };
}

function stdioTransport(store: string, flags: string[]): { transport: StdioClientTransport; stderr: () => string } {
  const transport = new StdioClientTransport({
    command: offshootBin,
    args: ['-store', store, 'mcp', '-reap-every', '0', ...flags],
    env: baseEnv() as Record<string, string>,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString('utf8')));
  return { transport, stderr: () => err };
}

/** The per-request envelope a 2026-07-28 request carries, for the raw exchanges. */
function envelope(capabilities: Record<string, unknown> = { elicitation: { form: {} } }): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0.0.0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

/** A raw JSON-RPC peer of `offshoot mcp` over stdio: one request at a time, its response (notifications skipped). */
function rawPeer(
  store: string,
  flags: string[],
): { ask(msg: object): Promise<Record<string, unknown>>; close(): void } {
  const proc = spawn(offshootBin, ['-store', store, 'mcp', '-reap-every', '0', ...flags], {
    env: baseEnv(),
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const waiting = new Map<unknown, (m: Record<string, unknown>) => void>();
  createInterface({ input: proc.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as Record<string, unknown>;
    waiting.get(m['id'])?.(m);
  });
  let id = 0;
  return {
    ask: (msg) =>
      new Promise((resolve) => {
        id += 1;
        waiting.set(id, resolve);
        proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, ...msg })}\n`);
      }),
    close: () => proc.kill(),
  };
}

function head(s: McpStore, branch: string): number {
  const j = JSON.parse(s.cli(['status', 'app', '--json']).stdout) as {
    branches: Array<{ branch: string; txid: number }>;
  };
  return j.branches.find((b) => b.branch === branch)?.txid ?? -1;
}

describe('offshoot mcp, 2026-07-28 over stdio (the SDK 2 client pinned to it)', () => {
  let s: McpStore;
  let m: Awaited<ReturnType<typeof modernClient>>;
  let stderr: () => string;
  let answer: ElicitResult = { action: 'decline' };
  before(async () => {
    s = makeMcpStore();
    s.cli(['checkout', 'app']);
    s.cli(['checkpoint', 'app', 'seeded']);
    s.cli(['fork', 'app', 'attempt']);
    const t = stdioTransport(s.store, ['-confirm-force', '-query-timeout', '10m']);
    stderr = t.stderr;
    m = await modernClient(t.transport, () => answer);
  });
  after(async () => {
    await m.client.close();
    s.cleanup();
  });

  test('it opens with server/discover, not initialize, and offers what the 2025 era offers', async () => {
    assert.equal(m.client.getProtocolEra(), 'modern');
    assert.equal(m.client.getNegotiatedProtocolVersion(), MODERN);
    const discover = m.client.getDiscoverResult();
    assert.ok(discover?.supportedVersions.includes(MODERN));
    assert.equal(discover?.capabilities.resources?.subscribe, true);
    assert.equal(discover?.capabilities.resources?.listChanged, true);
    assert.ok(discover?.capabilities.logging && discover.capabilities.completions && discover.capabilities.prompts);
    const legacy = await startMcp(s.store, ['-reap-every', '0']);
    try {
      assert.equal(m.client.getInstructions(), legacy.client.getInstructions());
      const tools = (await m.client.listTools()).tools;
      assert.deepEqual(
        tools.map(({ name, inputSchema, outputSchema, annotations }) => ({
          name,
          inputSchema,
          outputSchema,
          annotations,
        })),
        (await legacy.client.listTools()).tools.map(({ name, inputSchema, outputSchema, annotations }) => ({
          name,
          inputSchema,
          outputSchema,
          annotations,
        })),
      );
      assert.deepEqual(
        (await m.client.listPrompts()).prompts.map((p) => p.name),
        (await legacy.client.listPrompts()).prompts.map((p) => p.name),
      );
      assert.deepEqual(
        (await m.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
        (await legacy.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
      );
    } finally {
      await legacy.close();
    }
  });

  test('tool results carry structured content, resource links and refusal codes, as in the 2025 era', async () => {
    const r = await m.client.callTool({ name: 'offshoot_fork', arguments: { database: 'app', new_branch: 'linked' } });
    assert.equal(r.isError, undefined);
    assert.equal((r.structuredContent as { ttl: string }).ttl, '24h0m0s');
    assert.deepEqual(
      r.content.filter((c) => c.type === 'resource_link').map((c) => c.uri),
      ['offshoot://app/linked', 'offshoot://app/main'],
    );
    refused(await m.call('offshoot_promote', { database: 'app', source: 'linked', target: 'main' }), 'PROTECTED');
    const q = ok(await m.call('offshoot_query', { database: 'app', sql: 'SELECT count(*) FROM t' }));
    assert.deepEqual(q.rows, [[3]]);
  });

  test('resources read and complete; a missing one is the invalid-params error naming it', async () => {
    const uris = (await m.client.listResources()).resources.map((r) => r.uri);
    assert.ok(uris.includes('offshoot://app/main/checkpoint/seeded'), uris.join(' '));
    const c = (await m.client.readResource({ uri: 'offshoot://app/main/schema' })).contents[0];
    assert.match(c && 'text' in c ? c.text : '', /^CREATE TABLE t\(/);
    await assert.rejects(m.client.readResource({ uri: 'offshoot://app/nope' }), /NOT_FOUND/);
    const ref = { type: 'ref/resource' as const, uri: 'offshoot://{database}/{branch}/checkpoint/{checkpoint}' };
    const cps = await m.client.complete({
      ref,
      argument: { name: 'checkpoint', value: 's' },
      context: { arguments: { database: 'app', branch: 'main' } },
    });
    assert.deepEqual(cps.completion.values, ['seeded']);
  });

  test('a listen stream hears the branches it names and list changes, whoever made them', async () => {
    const sub = await m.client.listen({
      resourceSubscriptions: ['offshoot://app/linked'],
      resourcesListChanged: true,
    });
    assert.deepEqual(sub.honoredFilter.resourceSubscriptions, ['offshoot://app/linked']);
    m.heard.updated.length = 0;
    const lists = m.heard.listChanged;
    s.cli(['touch', 'app@linked']);
    await until(() => m.heard.updated.includes('offshoot://app/linked'), 'the update after a CLI touch');
    m.heard.updated.length = 0;
    ok(await m.call('offshoot_touch', { database: 'app', branch: 'linked', ttl: '2h' }));
    await until(() => m.heard.updated.includes('offshoot://app/linked'), "the update after this server's own touch");
    s.cli(['fork', 'app', 'other', '--ttl', '1h']);
    await until(() => m.heard.listChanged > lists, 'list_changed after a CLI fork');
    assert.ok(!m.heard.updated.includes('offshoot://app/other'), 'only the URIs the filter named');
    await sub.close();
  });

  test('-confirm-force asks through input_required: a decline refuses, an accept promotes once', async () => {
    const args = { database: 'app', source: 'attempt', target: 'main', force: true };
    answer = { action: 'decline' };
    const before = refsSnapshot(s.store);
    refused(await m.call('offshoot_promote', args), 'PROTECTED', /not confirmed: the human declined/);
    assert.equal(m.heard.asked.length, 1);
    assert.deepEqual(refsSnapshot(s.store), before);
    answer = { action: 'accept', content: { confirm: true } };
    const from = head(s, 'attempt');
    const r = await m.client.callTool({ name: 'offshoot_promote', arguments: args });
    assert.equal(r.isError, undefined, JSON.stringify(r.content));
    assert.equal(r._meta?.['offshoot/confirmed-by-human'], true);
    assert.equal(m.heard.asked.length, 2);
    assert.match(m.heard.asked[1] ?? '', /onto protected app@main \(head txid \d+\)/);
    assert.equal(head(s, 'main'), from);
  });

  test('the log lines of a call come at the level its request names, and only then', async () => {
    answer = { action: 'decline' };
    m.heard.logs.length = 0;
    const args = { database: 'app', branch: 'main', force: true };
    refused(await m.call('offshoot_destroy', args), 'PROTECTED');
    assert.deepEqual(m.heard.logs, []);
    const r = await m.client.callTool({
      name: 'offshoot_destroy',
      arguments: args,
      _meta: { 'io.modelcontextprotocol/logLevel': 'notice' },
    });
    assert.equal(r.isError, true);
    assert.ok(
      m.heard.logs.some((l) => /asking the human: The agent asks to destroy app@main/.test(l)),
      m.heard.logs.join('\n'),
    );
    assert.ok(m.heard.logs.some((l) => /not confirmed: the human declined/.test(l)));
    assert.match(stderr(), /asking the human/);
  });

  test('progress comes when asked; a cancelled query stops and the server keeps serving', async () => {
    const steps: string[] = [];
    await m.client.callTool(
      { name: 'offshoot_query', arguments: { database: 'app', sql: 'SELECT 1' } },
      { onprogress: (p) => void steps.push(p.message ?? '') },
    );
    assert.ok(
      steps.some((l) => /querying app@main/.test(l)),
      steps.join('\n'),
    );
    const pid = Number(execFileSync('pgrep', ['-n', '-f', `${s.store} mcp`], { encoding: 'utf8' }).trim());
    const controller = new AbortController();
    await assert.rejects(
      m.client.callTool(
        {
          name: 'offshoot_query',
          arguments: {
            database: 'app',
            sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
          },
        },
        { signal: controller.signal, onprogress: () => controller.abort('the human pressed stop') },
      ),
    );
    const children = () => {
      try {
        return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    };
    await until(() => children() === '', 'the query child to be gone');
    assert.deepEqual(ok(await m.call('offshoot_query', { database: 'app', sql: 'SELECT count(*) FROM t' })).rows, [
      [3],
    ]);
  });

  test('no answer counts unless it comes back with the state the server signed for that very call', async () => {
    const peer = rawPeer(s.store, ['-confirm-force']);
    try {
      s.cli(['protect', 'app@linked']);
      const destroy = (branch: string, extra: Record<string, unknown> = {}) => ({
        method: 'tools/call',
        params: {
          name: 'offshoot_destroy',
          arguments: { database: 'app', branch, force: true },
          _meta: envelope(),
          ...extra,
        },
      });
      const accepted = { confirm: { action: 'accept', content: { confirm: true } } };
      // An accept the server never asked for: the call is asked about, not run.
      const asked = (await peer.ask(destroy('linked', { inputResponses: accepted })))['result'] as {
        resultType: string;
        requestState: string;
        inputRequests: { confirm: { method: string } };
      };
      assert.equal(asked.resultType, 'input_required');
      assert.equal(asked.inputRequests.confirm.method, 'elicitation/create');
      // A state the server did not sign, or one altered, is refused before the tool runs.
      const forged = await peer.ask(destroy('linked', { inputResponses: accepted, requestState: 'v1.e30.AAAA' }));
      assert.equal((forged['error'] as { code: number }).code, -32602);
      const [body, mac] = asked.requestState.slice(3).split('.');
      const payload = JSON.parse(Buffer.from(body ?? '', 'base64url').toString('utf8')) as { p: { args: string } };
      payload.p.args = 'another';
      const altered = `v1.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
      const tampered = await peer.ask(destroy('linked', { inputResponses: accepted, requestState: altered }));
      assert.equal((tampered['error'] as { code: number }).code, -32602);
      // The genuine state answers only the call it was minted for.
      const other = (await peer.ask(destroy('main', { inputResponses: accepted, requestState: asked.requestState })))[
        'result'
      ] as { isError: boolean; content: Array<{ text: string }> };
      assert.equal(other.isError, true);
      assert.match(other.content[0]?.text ?? '', /answer to a question about another call/);
      assert.match(s.cli(['status', 'app', '--json']).stdout, /"linked"/, 'nothing was destroyed');
      const done = (await peer.ask(destroy('linked', { inputResponses: accepted, requestState: asked.requestState })))[
        'result'
      ] as { isError?: boolean; _meta: Record<string, unknown> };
      assert.equal(done.isError, undefined);
      assert.equal(done._meta['offshoot/confirmed-by-human'], true);
      assert.doesNotMatch(s.cli(['status', 'app', '--json']).stdout, /"linked"/);
    } finally {
      peer.close();
    }
  });

  test('a client without form elicitation gets the refusal the 2025 era gives, unasked', async () => {
    const t = stdioTransport(s.store, ['-confirm-force']);
    const plain = await modernClient(t.transport, () => ({ action: 'accept', content: { confirm: true } }), false);
    try {
      const before = refsSnapshot(s.store);
      refused(
        await plain.call('offshoot_destroy', { database: 'app', branch: 'main', force: true }),
        'PROTECTED',
        /needs -allow-force/,
      );
      assert.deepEqual(refsSnapshot(s.store), before);
    } finally {
      await plain.client.close();
    }
  });
});

describe('offshoot mcp -http: both eras on one endpoint', () => {
  let s: McpStore;
  let proc: ChildProcess;
  let url = '';
  before(async () => {
    s = makeMcpStore();
    s.cli(['fork', 'app', 'attempt']);
    let stderr = '';
    proc = spawn(
      offshootBin,
      ['-store', s.store, 'mcp', '-http', '127.0.0.1:0', '-reap-every', '0', '-confirm-force', '-query-timeout', '10m'],
      { env: baseEnv({ OFFSHOOT_TOKEN: TOKEN }), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    proc.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await until(() => /serving MCP on (http:\/\/\S+)/.test(stderr), 'the HTTP listener');
    url = /serving MCP on (http:\/\/\S+)/.exec(stderr)?.[1] ?? '';
  });
  after(() => {
    proc.kill('SIGTERM');
    s.cleanup();
  });

  const http = () =>
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    });

  test('a 2026-07-28 request is served without a session; the token and Host checks still come first', async () => {
    const headers = {
      Authorization: `Bearer ${TOKEN}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': 'server/discover',
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } });
    const r = await fetch(url, { method: 'POST', headers, body });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('mcp-session-id'), null);
    const discover = ((await r.json()) as { result: { supportedVersions: string[] } }).result;
    assert.ok(discover.supportedVersions.includes(MODERN));
    const noToken = await fetch(url, { method: 'POST', headers: { ...headers, Authorization: '' }, body });
    assert.equal(noToken.status, 401);
    // fetch may not set Host: a plain node:http request does, as a page whose DNS name was rebound would.
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { ...headers, Host: 'evil.example.com' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.once('error', reject);
      req.end(body);
    });
    assert.equal(rebound, 403);
  });

  test('a 2026-07-28 client and a 2025 client at once: same tools, same results', async () => {
    const modern = await modernClient(http(), () => ({ action: 'decline' }));
    const legacy = new (await import('@modelcontextprotocol/sdk/client/index.js')).Client({
      name: 'offshoot-legacy',
      version: '1.0.0',
    });
    const { StreamableHTTPClientTransport: LegacyHttp } = await import(
      '@modelcontextprotocol/sdk/client/streamableHttp.js'
    );
    await legacy.connect(
      new LegacyHttp(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
    );
    try {
      assert.equal(modern.client.getProtocolEra(), 'modern');
      assert.deepEqual(
        (await modern.client.listTools()).tools.map((t) => t.name),
        (await legacy.listTools()).tools.map((t) => t.name),
      );
      const sql = { database: 'app', branch: 'attempt', sql: 'SELECT id, v FROM t' };
      assert.deepEqual(
        ok(await modern.call('offshoot_query', sql)),
        ok(flatten((await legacy.callTool({ name: 'offshoot_query', arguments: sql })) as never)),
      );
    } finally {
      await modern.client.close();
      await legacy.close();
    }
  });

  test('listen, progress, the confirmation and cancellation over HTTP', async () => {
    const m = await modernClient(http(), () => ({ action: 'accept', content: { confirm: true } }));
    try {
      const sub = await m.client.listen({ resourceSubscriptions: ['offshoot://app/attempt'] });
      s.cli(['touch', 'app@attempt']);
      await until(() => m.heard.updated.includes('offshoot://app/attempt'), 'the update on the listen stream');
      await sub.close();
      const steps: string[] = [];
      await m.client.callTool(
        { name: 'offshoot_query', arguments: { database: 'app', sql: 'SELECT 1' } },
        { onprogress: (p) => void steps.push(p.message ?? '') },
      );
      assert.ok(
        steps.some((l) => /querying app@main/.test(l)),
        steps.join('\n'),
      );
      const r = await m.client.callTool({
        name: 'offshoot_promote',
        arguments: { database: 'app', source: 'attempt', target: 'main', force: true },
      });
      assert.equal(r.isError, undefined, JSON.stringify(r.content));
      assert.equal(m.heard.asked.length, 1);
      const controller = new AbortController();
      await assert.rejects(
        m.client.callTool(
          {
            name: 'offshoot_query',
            arguments: {
              database: 'app',
              sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
            },
          },
          { signal: controller.signal, onprogress: () => controller.abort('stop') },
        ),
      );
      const children = () => {
        try {
          return execFileSync('pgrep', ['-P', String(proc.pid)], { encoding: 'utf8' }).trim();
        } catch {
          return '';
        }
      };
      await until(() => children() === '', 'the query child to be gone');
      ok(await m.call('offshoot_list', { database: 'app' }));
    } finally {
      await m.client.close();
    }
  });
});
