// -confirm-force: a refused forced change of a protected branch asks the host's human through a real client's form
// elicitation, over stdio and Streamable HTTP; only an explicit accept goes ahead; a decline, a client without the
// capability, or a server without the flag leaves the seed's refusal and the store untouched.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, type ElicitResult, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { until } from '../daemon/daemon-process.js';
import { baseEnv, offshootBin } from '../e2e/cli-harness.js';
import {
  flatten,
  makeMcpStore,
  ok,
  refsSnapshot,
  refused,
  startMcp,
  type McpSession,
  type McpStore,
} from './mcp-harness.js';

/** A client that answers every elicitation with `answer`, recording each question. */
async function human(
  s: McpStore,
  answer: ElicitResult,
  flags = ['-confirm-force'],
): Promise<{ m: McpSession; asked: string[] }> {
  const asked: string[] = [];
  const m = await startMcp(s.store, ['-reap-every', '0', ...flags], {
    capabilities: { elicitation: {} },
    setup: (c) =>
      c.setRequestHandler(ElicitRequestSchema, (req) => {
        asked.push(req.params.message);
        return answer;
      }),
  });
  return { m, asked };
}

function head(s: McpStore, branch: string): number {
  const j = JSON.parse(s.cli(['status', 'app', '--json']).stdout) as {
    branches: Array<{ branch: string; txid: number }>;
  };
  return j.branches.find((b) => b.branch === branch)?.txid ?? -1;
}

describe('offshoot mcp -confirm-force over stdio', () => {
  let s: McpStore;
  // One server with -confirm-force and a client whose human answers `answer`, recording each question.
  let m: McpSession;
  let answer: ElicitResult = { action: 'decline' };
  const asked: string[] = [];
  before(async () => {
    s = makeMcpStore();
    const fork = await startMcp(s.store, ['-reap-every', '0']);
    ok(await fork.call('offshoot_fork', { database: 'app', new_branch: 'attempt' }));
    const path = ok(await fork.call('offshoot_checkout', { database: 'app', branch: 'attempt' })).path as string;
    s.sqlite(path, "INSERT INTO t(v) VALUES ('from-attempt');");
    ok(await fork.call('offshoot_checkpoint', { database: 'app', branch: 'attempt', name: 'done' }));
    await fork.close();
    m = await startMcp(s.store, ['-reap-every', '0', '-confirm-force'], {
      capabilities: { elicitation: {} },
      setup: (c) =>
        c.setRequestHandler(ElicitRequestSchema, (req) => {
          asked.push(req.params.message);
          return answer;
        }),
    });
  });
  after(async () => {
    await m.close();
    s.cleanup();
  });

  test('a client without elicitation gets the refusal of today, and nothing changes', async () => {
    const m = await startMcp(s.store, ['-reap-every', '0', '-confirm-force']);
    const before = refsSnapshot(s.store);
    refused(
      await m.call('offshoot_promote', { database: 'app', source: 'attempt', target: 'main', force: true }),
      'PROTECTED',
      /needs -allow-force/,
    );
    assert.deepEqual(refsSnapshot(s.store), before);
    await m.close();
  });

  test('without -confirm-force the human is never asked', async () => {
    const { m, asked } = await human(s, { action: 'accept', content: { confirm: true } }, []);
    const before = refsSnapshot(s.store);
    refused(
      await m.call('offshoot_promote', { database: 'app', source: 'attempt', target: 'main', force: true }),
      'PROTECTED',
    );
    assert.deepEqual(asked, []);
    assert.deepEqual(refsSnapshot(s.store), before);
    await m.close();
  });

  test('an unforced promote is refused without a question', async () => {
    answer = { action: 'accept', content: { confirm: true } };
    asked.length = 0;
    refused(await m.call('offshoot_promote', { database: 'app', source: 'attempt', target: 'main' }), 'PROTECTED');
    assert.deepEqual(asked, []);
  });

  test('a decline, a cancel and an unticked accept are refusals that change nothing', async () => {
    const answers: ElicitResult[] = [
      { action: 'decline' },
      { action: 'cancel' },
      { action: 'accept', content: { confirm: false } },
    ];
    for (const a of answers) {
      answer = a;
      asked.length = 0;
      const before = refsSnapshot(s.store);
      const r = await m.call('offshoot_promote', { database: 'app', source: 'attempt', target: 'main', force: true });
      refused(r, 'PROTECTED', /not confirmed/);
      assert.equal(asked.length, 1);
      assert.deepEqual(refsSnapshot(s.store), before, `${a.action} changed the store`);
    }
  });

  test('an explicit accept promotes onto protected main once, naming branch, head txids and the undo point', async () => {
    answer = { action: 'accept', content: { confirm: true } };
    asked.length = 0;
    const from = head(s, 'attempt');
    const was = head(s, 'main');
    const r = await m.client.callTool({
      name: 'offshoot_promote',
      arguments: { database: 'app', source: 'attempt', target: 'main', force: true },
    });
    const c = flatten(r as CallToolResult);
    assert.equal(c.isError, false, c.text);
    assert.equal(r._meta?.['offshoot/confirmed-by-human'], true);
    assert.equal(asked.length, 1);
    const q = asked[0] ?? '';
    assert.match(q, new RegExp(`app@attempt \\(head txid ${from}\\)`));
    assert.match(q, new RegExp(`protected app@main \\(head txid ${was}\\)`));
    assert.match(q, /undo point app@main-pre-promote/);
    assert.equal(head(s, 'main'), from);
    // The confirmation covered that call only: the next forced call asks again.
    refused(await m.call('offshoot_destroy', { database: 'app', branch: 'main' }), 'PROTECTED');
    assert.equal(asked.length, 1);
  });

  test('a second rollback of protected main and the destroy of its undo point are confirmed the same way', async () => {
    answer = { action: 'accept', content: { confirm: true } };
    asked.length = 0;
    // Promote recorded the checkpoint "promote" on main.
    const first = ok(await m.call('offshoot_rollback', { database: 'app', to: 'promote' }));
    assert.equal(asked.length, 0, 'the first rollback needs no question');
    // Under -confirm-force the agent may make the forced undo itself (its human is asked), so it is given the call.
    assert.equal(first.undo, 'offshoot_promote database=app source=main-pre-rollback target=main force=true');
    ok(await m.call('offshoot_rollback', { database: 'app', to: 'promote' }));
    assert.equal(asked.length, 1);
    assert.match(asked[0] ?? '', /replacing the undo point of the last rollback/);
    ok(await m.call('offshoot_destroy', { database: 'app', branch: 'main-pre-rollback', force: true }));
    assert.match(asked[1] ?? '', /app@main-pre-rollback \(the undo point of app@main, head txid \d+\)/);
  });
});

describe('offshoot mcp -confirm-force over Streamable HTTP', () => {
  const TOKEN = 'mcp-confirm-http-token-0123456789';
  let s: McpStore;
  let proc: ChildProcess;
  let url = '';
  before(async () => {
    s = makeMcpStore();
    s.cli(['fork', 'app', 'attempt']);
    let stderr = '';
    proc = spawn(
      offshootBin,
      ['-store', s.store, 'mcp', '-http', '127.0.0.1:0', '-reap-every', '0', '-confirm-force'],
      {
        env: baseEnv({ OFFSHOOT_TOKEN: TOKEN }),
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    proc.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await until(() => /serving MCP on (http:\/\/\S+)/.test(stderr), 'the HTTP listener');
    url = /serving MCP on (http:\/\/\S+)/.exec(stderr)?.[1] ?? '';
  });
  after(() => {
    proc.kill('SIGTERM');
    s.cleanup();
  });

  async function connect(answer: ElicitResult, asked: string[]): Promise<Client> {
    const client = new Client(
      { name: 'offshoot-confirm-http', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params.message);
      return answer;
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      }),
    );
    return client;
  }

  test('decline refuses, accept destroys the protected branch', async () => {
    s.cli(['protect', 'app@attempt']);
    const args = { database: 'app', branch: 'attempt', force: true };
    const declined: string[] = [];
    const no = await connect({ action: 'decline' }, declined);
    const r = flatten((await no.callTool({ name: 'offshoot_destroy', arguments: args })) as CallToolResult);
    assert.equal(r.code, 'PROTECTED', r.text);
    assert.equal(declined.length, 1);
    assert.match(declined[0] ?? '', /destroy app@attempt \(protected, head txid \d+\)/);
    await no.close();
    const accepted: string[] = [];
    const yes = await connect({ action: 'accept', content: { confirm: true } }, accepted);
    const d = flatten((await yes.callTool({ name: 'offshoot_destroy', arguments: args })) as CallToolResult);
    assert.equal(d.isError, false, d.text);
    assert.equal(accepted.length, 1);
    await yes.close();
    assert.doesNotMatch(s.cli(['status', 'app', '--json']).stdout, /"attempt"/);
  });
});

describe('offshoot mcp -confirm-force says what a promote displaces', () => {
  let s: McpStore;
  let m: McpSession;
  let asked: string[] = [];
  before(async () => {
    s = makeMcpStore();
    s.cli(['fork', 'app', 'attempt']);
    const path = s.cli(['checkout', 'app@attempt']).stdout.trim();
    s.sqlite(path, "INSERT INTO t(v) VALUES ('from-attempt');");
    s.cli(['checkpoint', 'app@attempt', 'done']);
    s.cli(['promote', 'app@attempt', '--onto', 'main', '--force']);
    ({ m, asked } = await human(s, { action: 'accept', content: { confirm: true } }));
  });
  after(async () => {
    await m.close();
    s.cleanup();
  });

  test('a second promote onto main says the undo point of the first is replaced and lost', async () => {
    asked.length = 0;
    const kept = head(s, 'main-pre-promote');
    ok(await m.call('offshoot_promote', { database: 'app', source: 'attempt', target: 'main', force: true }));
    assert.equal(asked.length, 1);
    assert.match(
      asked[0] ?? '',
      new RegExp(
        `replacing app@main-pre-promote \\(txid ${kept}\\), the undo point of the last promote, which is lost`,
      ),
    );
  });

  test('a promote onto the undo point of main says it changes main’s undo point; the agent cannot then destroy the state it displaced', async () => {
    s.cli(['rollback', 'app', '--to', 'promote']);
    asked.length = 0;
    ok(
      await m.call('offshoot_promote', {
        database: 'app',
        source: 'attempt',
        target: 'main-pre-rollback',
        force: true,
      }),
    );
    assert.equal(asked.length, 1);
    assert.match(asked[0] ?? '', /app@main-pre-rollback is the undo point of protected app@main/);
    assert.match(asked[0] ?? '', /undo point app@main-pre-rollback-pre-promote/);
    const plain = await startMcp(s.store, ['-reap-every', '0']);
    const before = refsSnapshot(s.store);
    refused(
      await plain.call('offshoot_destroy', { database: 'app', branch: 'main-pre-rollback-pre-promote', force: true }),
      'PROTECTED',
      /undo point/,
    );
    refused(
      await plain.call('offshoot_destroy', { database: 'app', branch: 'main-pre-rollback-pre-promote' }),
      'PROTECTED',
      /undo point/,
    );
    assert.deepEqual(refsSnapshot(s.store), before);
    await plain.close();
  });
});
