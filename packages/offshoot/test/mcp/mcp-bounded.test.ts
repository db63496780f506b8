// `offshoot mcp` stays bounded whatever a client sends: refused initializes, refused listens and subscriptions to
// anything leave nothing behind, and a malformed answer to a question fails the call at once, with a log line. The
// leaks are caught with the server's heap capped below what they would hold (deterministic: the count of requests,
// not time), the rest with raw JSON-RPC a well-behaved SDK client would never send.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { until } from '../daemon/daemon-process.js';
import { baseEnv, offshootBin } from '../e2e/cli-harness.js';
import { makeMcpStore, type McpStore, ok, startMcp } from './mcp-harness.js';

const TOKEN = 'mcp-bounded-test-token-0123456789';
/** The old-space cap the leak tests run the server under: far above its working set, far below what a leak holds. */
const HEAP_MB = 48;

type Message = { id?: number | string; method?: string; result?: unknown; error?: { code: number; message: string } };

/** `offshoot mcp` on stdio driven line by line, as a client that sends whatever it likes. */
class RawStdio {
  readonly proc: ChildProcess;
  readonly seen: Message[] = [];
  stderr = '';
  exit: number | null | undefined;
  readonly #waiters = new Set<() => void>();

  constructor(s: McpStore, flags: string[], env: NodeJS.ProcessEnv = {}) {
    this.proc = spawn(offshootBin, ['-store', s.store, 'mcp', '-reap-every', '0', ...flags], {
      env: baseEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.proc.stderr?.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    this.proc.once('exit', (code) => {
      this.exit = code;
      for (const w of this.#waiters) w();
    });
    createInterface({ input: this.proc.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      this.seen.push(JSON.parse(line) as Message);
      for (const w of this.#waiters) w();
    });
  }

  send(m: object): void {
    this.proc.stdin?.write(`${JSON.stringify(m)}\n`);
  }

  /**
   * Resolves with the first message `pick` accepts; fails if the server exits first, or after a minute without it
   * (a hang: what the server does answers in milliseconds).
   */
  next(pick: (m: Message) => boolean): Promise<Message> {
    return new Promise((resolve, reject) => {
      const hang = setTimeout(() => {
        this.#waiters.delete(look);
        reject(new Error(`no answer within a minute; stderr: ${this.stderr.slice(-2000)}`));
      }, 60_000);
      const look = (): void => {
        const m = this.seen.find(pick);
        if (m === undefined && this.exit === undefined) return;
        this.#waiters.delete(look);
        clearTimeout(hang);
        if (m !== undefined) resolve(m);
        else reject(new Error(`offshoot mcp exited ${this.exit}: ${this.stderr.slice(-2000)}`));
      };
      this.#waiters.add(look);
      look();
    });
  }

  /** Sends a request and resolves with its response. */
  request(id: number, method: string, params: object = {}): Promise<Message> {
    this.send({ jsonrpc: '2.0', id, method, params });
    return this.next((m) => m.id === id && m.method === undefined);
  }

  /** A 2025-era handshake with these client capabilities. */
  async initialize(capabilities: object = {}): Promise<void> {
    const r = await this.request(0, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities,
      clientInfo: { name: 'raw', version: '1' },
    });
    assert.ok(r.result, JSON.stringify(r));
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  close(): void {
    this.proc.stdin?.end();
    this.proc.kill('SIGTERM');
  }
}

describe('offshoot mcp stays bounded', () => {
  let s: McpStore;
  before(() => {
    s = makeMcpStore();
    s.cli(['fork', 'app', 'attempt']);
  });
  after(() => s.cleanup());

  test('HTTP: refused 2025-era initializes (406, 415) leave nothing behind', async () => {
    let stderr = '';
    const proc = spawn(offshootBin, ['-store', s.store, 'mcp', '-http', '127.0.0.1:0', '-reap-every', '0'], {
      env: baseEnv({ OFFSHOOT_TOKEN: TOKEN, NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    proc.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let exited = false;
    proc.once('exit', () => (exited = true));
    try {
      await until(() => /serving MCP on (http:\/\/\S+)/.test(stderr), 'the HTTP listener');
      const url = /serving MCP on (http:\/\/\S+)/.exec(stderr)?.[1] ?? '';
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'retry-loop', version: '1' } },
      });
      // A misconfigured client's retry loop: about 90 KB each was kept, so this many would pass the heap cap 2-3
      // times over.
      for (let i = 0; i < 1000 && !exited; i++) {
        const headers =
          i % 2 === 0
            ? { 'Content-Type': 'application/json', Accept: 'application/json' }
            : { 'Content-Type': 'text/plain', Accept: 'application/json, text/event-stream' };
        const r = await fetch(url, {
          method: 'POST',
          headers: { ...headers, Authorization: `Bearer ${TOKEN}` },
          body,
        }).catch((err: Error) => assert.fail(`request ${i}: ${err.message}\n${stderr.slice(-2000)}`));
        assert.equal(r.status, i % 2 === 0 ? 406 : 415);
        await r.text();
      }
      assert.equal(exited, false, `the server died: ${stderr.slice(-2000)}`);
      const client = new Client({ name: 'after-the-loop', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
        }),
      );
      assert.equal((await client.listTools()).tools.length, 11);
      await client.close();
    } finally {
      proc.kill('SIGTERM');
    }
  });

  test('stdio, 2025 era: each refused subscriptions/listen is forgotten', async () => {
    const m = new RawStdio(s, [], { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` });
    try {
      await m.initialize();
      // Each one was kept, with its filter (about 10 KB here), after "Method not found": this many would pass the heap
      // cap four times over.
      const n = 20_000;
      const uris = Array.from({ length: 32 }, (_, i) => `offshoot://app/branch-${'x'.repeat(100)}-${i}`);
      for (let id = 1; id <= n; id++)
        m.send({
          jsonrpc: '2.0',
          id,
          method: 'subscriptions/listen',
          params: { notifications: { resourceSubscriptions: uris, resourcesListChanged: true } },
        });
      const last = await m.next((x) => x.id === n);
      assert.equal(last.error?.code, -32601, JSON.stringify(last));
      const tools = await m.request(n + 1, 'tools/list');
      assert.equal((tools.result as { tools: unknown[] }).tools.length, 11);
    } finally {
      m.close();
    }
  });

  test('stdio, 2026-07-28: a listen the SDK refuses (past its 1,024 streams) is forgotten with its answer', async () => {
    const m = new RawStdio(s, [], { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` });
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    try {
      assert.ok((await m.request(0, 'server/discover', { _meta: envelope })).result);
      const listen = (id: number, uris: string[]) =>
        m.send({
          jsonrpc: '2.0',
          id,
          method: 'subscriptions/listen',
          params: { _meta: envelope, notifications: { resourceSubscriptions: uris } },
        });
      // The SDK holds 1,024 streams a connection; every listen past them is answered "Subscription limit reached".
      for (let id = 1; id <= 1024; id++) listen(id, ['offshoot://app/main']);
      const uris = Array.from({ length: 32 }, (_, i) => `offshoot://app/branch-${'x'.repeat(100)}-${i}`);
      const n = 20_000;
      for (let id = 1025; id <= 1024 + n; id++) listen(id, uris);
      const last = await m.next((x) => x.id === 1024 + n);
      assert.ok(last.error, JSON.stringify(last));
      const tools = await m.request(1025 + n, 'tools/list', { _meta: envelope });
      assert.equal((tools.result as { tools: unknown[] }).tools.length, 11);
    } finally {
      m.close();
    }
  });

  test('resources/subscribe takes only offshoot:// URIs of databases in the store, a bounded number of them', async () => {
    const m = new RawStdio(s, []);
    try {
      await m.initialize();
      let id = 1;
      for (const uri of [
        'file:///etc/passwd',
        '',
        'x'.repeat(1024),
        'offshoot://',
        'offshoot://App',
        'offshoot://nope',
      ]) {
        const r = await m.request(id++, 'resources/subscribe', { uri });
        assert.equal(r.error?.code, -32602, `${uri.slice(0, 40)}: ${JSON.stringify(r)}`);
        assert.match(r.error?.message ?? '', /cannot subscribe/);
      }
      assert.match(
        (await m.request(id++, 'resources/subscribe', { uri: 'offshoot://nope' })).error?.message ?? '',
        /no database "nope"/,
      );
      for (let i = 0; i < 256; i++) {
        const r = await m.request(id++, 'resources/subscribe', { uri: `offshoot://app/b-${i}` });
        assert.deepEqual(r.result, {}, JSON.stringify(r));
      }
      // Subscribing again to one already held is no new subscription.
      assert.deepEqual((await m.request(id++, 'resources/subscribe', { uri: 'offshoot://app/b-7' })).result, {});
      const over = await m.request(id++, 'resources/subscribe', { uri: 'offshoot://app/main' });
      assert.equal(over.error?.code, -32602);
      assert.match(over.error?.message ?? '', /already holds 256 subscriptions/);
      await m.request(id++, 'resources/unsubscribe', { uri: 'offshoot://app/b-0' });
      assert.deepEqual((await m.request(id++, 'resources/subscribe', { uri: 'offshoot://app/main' })).result, {});
    } finally {
      m.close();
    }
  });

  test('-confirm-force: an answer to the question that is no object refuses the call at once, and says so', async () => {
    for (const answer of ['yes', null, ['yes']]) {
      const m = new RawStdio(s, ['-confirm-force']);
      try {
        await m.initialize({ elicitation: { form: {} } });
        m.send({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'offshoot_promote',
            arguments: { database: 'app', source: 'attempt', target: 'main', force: true },
          },
        });
        const question = await m.next((x) => x.method === 'elicitation/create');
        m.send({ jsonrpc: '2.0', id: question.id, result: answer });
        const r = await m.next((x) => x.id === 1 && x.method === undefined);
        const result = r.result as { isError?: boolean; content: Array<{ text: string }> };
        assert.equal(result.isError, true, JSON.stringify(r));
        assert.match(result.content[0]?.text ?? '', /not an object: refused, nothing was changed/);
        await until(
          () => /answered request .* not an object; the call waiting on it is refused/.test(m.stderr),
          'the log line',
        );
        assert.equal(
          JSON.parse(s.cli(['status', 'app', '--json']).stdout).branches.find(
            (b: { branch: string }) => b.branch === 'main-pre-promote',
          ),
          undefined,
        );
      } finally {
        m.close();
      }
    }
  });

  test('-confirm-force over HTTP: an answer that is no object refuses the call at once, and says so', async () => {
    let stderr = '';
    const proc = spawn(
      offshootBin,
      ['-store', s.store, 'mcp', '-http', '127.0.0.1:0', '-reap-every', '0', '-confirm-force'],
      { env: baseEnv({ OFFSHOOT_TOKEN: TOKEN }), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    proc.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    try {
      await until(() => /serving MCP on (http:\/\/\S+)/.test(stderr), 'the HTTP listener');
      const url = /serving MCP on (http:\/\/\S+)/.exec(stderr)?.[1] ?? '';
      const headers: Record<string, string> = {
        Authorization: `Bearer ${TOKEN}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      };
      const post = (body: object) => fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
      const init = await post({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: { elicitation: { form: {} } },
          clientInfo: { name: 'raw', version: '1' },
        },
      });
      headers['Mcp-Session-Id'] = init.headers.get('mcp-session-id') ?? '';
      headers['Mcp-Protocol-Version'] = '2025-06-18';
      await init.text();
      await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
      // The call's answer is an SSE stream: the question comes on it first, the result after the answer.
      const call = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'offshoot_promote',
          arguments: { database: 'app', source: 'attempt', target: 'main', force: true },
        },
      });
      const frames = (async function* () {
        let text = '';
        for await (const chunk of call.body as AsyncIterable<Uint8Array>) {
          text += Buffer.from(chunk).toString('utf8');
          for (let i = text.indexOf('\n\n'); i >= 0; i = text.indexOf('\n\n')) {
            const data = /^data: (.*)$/m.exec(text.slice(0, i))?.[1];
            text = text.slice(i + 2);
            if (data !== undefined) yield JSON.parse(data) as Message;
          }
        }
      })();
      // Read by hand (a for-await that returns would close the stream), failing after a minute without it: a hang.
      const next = async (pick: (m: Message) => boolean): Promise<Message> => {
        let hang: NodeJS.Timeout | undefined;
        const read = async (): Promise<Message> => {
          for (let r = await frames.next(); r.done !== true; r = await frames.next()) if (pick(r.value)) return r.value;
          throw new Error('the stream ended');
        };
        const timeout = new Promise<never>((_, reject) => {
          hang = setTimeout(() => reject(new Error(`no answer within a minute; stderr: ${stderr}`)), 60_000);
        });
        try {
          return await Promise.race([read(), timeout]);
        } finally {
          clearTimeout(hang);
        }
      };
      const question = await next((m) => m.method === 'elicitation/create');
      const answered = await post({ jsonrpc: '2.0', id: question.id, result: 'yes' });
      await answered.text();
      const r = await next((m) => m.id === 1);
      const result = r.result as { isError?: boolean; content: Array<{ text: string }> };
      assert.equal(result.isError, true, JSON.stringify(r));
      assert.match(result.content[0]?.text ?? '', /not an object: refused, nothing was changed/);
      await until(
        () => /answered request .* not an object; the call waiting on it is refused/.test(stderr),
        'the log line',
      );
    } finally {
      proc.kill('SIGTERM');
    }
  });

  test('a cancelled offshoot_checkout closes the object it was reading (no descriptor left to the GC)', async () => {
    const seed = join(s.dir, 'big.db');
    s.sqlite(
      seed,
      'CREATE TABLE b(x BLOB); INSERT INTO b SELECT randomblob(8192) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c LIMIT 3000) SELECT i FROM c);',
    );
    s.cli(['create', 'big', '--from', seed]);
    const m = await startMcp(s.store, ['-reap-every', '0']);
    const pid = (m.client.transport as unknown as { pid: number | null }).pid as number;
    const fds = (): number => readdirSync(`/proc/${pid}/fd`).length;
    const temps = (): string[] =>
      ['checkouts', 'checkouts-ro']
        .map((d) => join(s.store, d, 'big'))
        .filter((d) => existsSync(d))
        .flatMap((d) => readdirSync(d, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes('.tmp-')));
    /** A cold checkout of big (nothing of it cached), cancelled at its first byte count. */
    const cancelled = async (): Promise<void> => {
      for (const d of ['checkouts', 'checkouts-ro']) rmSync(join(s.store, d, 'big'), { recursive: true, force: true });
      const controller = new AbortController();
      await assert.rejects(
        m.client.callTool({ name: 'offshoot_checkout', arguments: { database: 'big' } }, undefined, {
          signal: controller.signal,
          onprogress: (p) => {
            if (/bytes$/.test(p.message ?? '')) controller.abort('stop');
          },
        }),
      );
      await until(() => temps().length === 0, 'the cancelled checkout to clean up');
    };
    try {
      await cancelled();
      const before = fds();
      for (let i = 0; i < 12; i++) await cancelled();
      ok(await m.call('offshoot_list', { database: 'big' }));
      // Each cancel left the object's file handle open until a garbage collection closed it (DEP0137 on stderr).
      assert.ok(fds() <= before + 2, `descriptors went from ${before} to ${fds()} over 12 cancelled checkouts`);
      assert.doesNotMatch(m.stderr(), /DEP0137|Closing a FileHandle/);
    } finally {
      await m.close();
    }
  });
});
