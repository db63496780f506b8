// Rollback, promote and destroy through the daemon serving the store, found without -socket: the daemon's request
// counters prove where each call ran; a branch with a session is refused as before, a promote's live source is
// flushed there first; every refusal an agent gets (the safety policy, applied by the daemon to an agent's request)
// is word for word what the same call gets at rest, and -confirm-force still asks the human and runs the call there.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type DaemonProcess, startDaemon } from '../daemon/daemon-process.js';
import { asStoreDir, makeMcpStore, type McpSession, type McpStore, ok, refused, startMcp } from './mcp-harness.js';

const TOKEN = 'mcp-daemon-route-token-0123456789';

describe('offshoot mcp without -socket: rollback, promote and destroy go through the daemon', () => {
  let s: McpStore;
  let daemon: DaemonProcess;
  let metricsUrl = '';
  // Rides the daemon it finds through its lock, as every MCP server without -socket does.
  let m: McpSession;
  // Told a socket where nothing answers: every tool at rest, for the word-for-word comparison.
  let atRest: McpSession;
  let confirming: McpSession;
  const asked: string[] = [];

  /** The daemon's count of answered `op` requests with `result`. */
  async function requests(op: string, result: 'ok' | 'error'): Promise<number> {
    const text = await (await fetch(metricsUrl, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
    const line = text.split('\n').find((l) => l.startsWith(`offshoot_requests_total{op="${op}",result="${result}"} `));
    assert.ok(line, `offshoot_requests_total for ${op} ${result} in\n${text}`);
    return Number(line.split(' ')[1]);
  }

  before(async () => {
    s = makeMcpStore();
    daemon = await startDaemon(asStoreDir(s), ['-flush-every', '0', '-reap-every', '0', '-http', '127.0.0.1:0'], {
      OFFSHOOT_TOKEN: TOKEN,
    });
    metricsUrl = `http://${/listening on (\S+)/.exec(daemon.stderr())?.[1]}/metrics`;
    m = await startMcp(s.store, ['-reap-every', '0']);
    atRest = await startMcp(s.store, ['-reap-every', '0', '-socket', join(s.dir, 'nothing.sock')]);
    confirming = await startMcp(s.store, ['-reap-every', '0', '-confirm-force'], {
      capabilities: { elicitation: {} },
      setup: (c) =>
        c.setRequestHandler(ElicitRequestSchema, (req) => {
          asked.push(req.params.message);
          return { action: 'accept', content: { confirm: true } };
        }),
    });
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'exp', ttl: 'none' }));
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'other', ttl: 'none' }));
  });
  after(async () => {
    await m.close();
    await atRest.close();
    await confirming.close();
    await daemon.stop();
    s.cleanup();
  });

  test('a rollback of a branch without a session runs in the daemon; with one it is refused as before', async () => {
    const path = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'exp' })).path as string;
    s.sqlite(path, "INSERT INTO t(v) VALUES ('later');");
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'exp', name: 'later' }));
    const done = await requests('rollback', 'ok');
    const r = ok(await m.call('offshoot_rollback', { database: 'app', branch: 'exp', to: 'fork' }));
    assert.equal(await requests('rollback', 'ok'), done + 1, 'the daemon answered the rollback');
    assert.equal(r.backup, 'exp-pre-rollback');
    assert.deepEqual(r.abandoned, { from: 2, to: 2 });
    assert.equal(r.refreshed, true);
    assert.equal(r.path, path);
    assert.equal(s.sqlite(path, 'SELECT count(*) FROM t;').trim(), '3', 'the checkout is back at the checkpoint');

    s.cli(['session', 'open', 'app@exp', '-socket', daemon.sock]);
    const asked = (await requests('rollback', 'ok')) + (await requests('rollback', 'error'));
    refused(
      await m.call('offshoot_rollback', { database: 'app', branch: 'exp', to: 'fork' }),
      'SESSION_OPEN',
      /offshoot session close app@exp/,
    );
    assert.equal((await requests('rollback', 'ok')) + (await requests('rollback', 'error')), asked);
    s.cli(['session', 'close', 'app@exp', '-socket', daemon.sock]);
  });

  test('a promote runs in the daemon, which flushes a live source first; a live target is refused', async () => {
    const done = await requests('promote', 'ok');
    const p = ok(await m.call('offshoot_promote', { database: 'app', source: 'exp', target: 'other' }));
    assert.equal(await requests('promote', 'ok'), done + 1);
    assert.equal(p.backup, 'other-pre-promote');
    assert.equal(p.source_live, false);

    const live = s.cli(['session', 'open', 'app@exp', '-socket', daemon.sock]).stdout.trim();
    s.sqlite(live, "INSERT INTO t(v) VALUES ('unflushed');");
    const call = await m.call('offshoot_promote', { database: 'app', source: 'exp', target: 'other' });
    assert.equal(ok(call).source_live, true);
    assert.match(call.text, /flushed first/);
    assert.equal(await requests('promote', 'ok'), done + 2);
    const q = ok(
      await m.call('offshoot_query', {
        database: 'app',
        branch: 'other',
        sql: "SELECT v FROM t WHERE v = 'unflushed'",
      }),
    );
    assert.deepEqual(q.rows, [['unflushed']], 'the live writes, flushed by the daemon, were promoted');
    refused(await m.call('offshoot_promote', { database: 'app', source: 'other', target: 'exp' }), 'SESSION_OPEN');
    s.cli(['session', 'close', 'app@exp', '-socket', daemon.sock]);
  });

  test('a destroy runs in the daemon; a branch with a session is refused, force or not', async () => {
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'gone', ttl: 'none' }));
    ok(await m.call('offshoot_checkout', { database: 'app', branch: 'gone' }));
    const done = await requests('destroy', 'ok');
    const d = ok(await m.call('offshoot_destroy', { database: 'app', branch: 'gone' }));
    assert.equal(await requests('destroy', 'ok'), done + 1);
    assert.equal(d.removed_checkout, true);
    assert.doesNotMatch(s.cli(['status', 'app', '--json']).stdout, /"gone"/);

    s.cli(['session', 'open', 'app@exp', '-socket', daemon.sock]);
    refused(await m.call('offshoot_destroy', { database: 'app', branch: 'exp', force: true }), 'SESSION_OPEN');
    s.cli(['session', 'close', 'app@exp', '-socket', daemon.sock]);
  });

  test('the refusals an agent gets through the daemon are word for word those at rest, and are the daemon’s', async () => {
    // The human promotes, so protected main has an undo point the agent may not touch.
    s.cli(['promote', 'app@exp', '--onto', 'main', '--force']);
    ok(await m.call('offshoot_rollback', { database: 'app', to: 'promote' }));
    const calls: Array<[string, Record<string, unknown>]> = [
      ['offshoot_promote', { database: 'app', source: 'exp', target: 'main' }],
      ['offshoot_promote', { database: 'app', source: 'exp', target: 'main', force: true }],
      ['offshoot_destroy', { database: 'app', branch: 'main', force: true }],
      ['offshoot_destroy', { database: 'app', branch: 'main-pre-promote', force: true }],
      ['offshoot_rollback', { database: 'app', to: 'promote' }],
    ];
    for (const [name, args] of calls) {
      const op = name.replace('offshoot_', '');
      const before = await requests(op, 'error');
      const viaDaemon = await m.call(name, args);
      assert.equal(await requests(op, 'error'), before + 1, `${name} was refused by the daemon`);
      refused(viaDaemon, 'PROTECTED');
      assert.deepEqual(viaDaemon, await atRest.call(name, args), `${name} ${JSON.stringify(args)}`);
    }
  });

  test('-confirm-force: a refusal from the daemon is put to the human, and the confirmed call runs there', async () => {
    const done = await requests('destroy', 'ok');
    const r = await confirming.client.callTool({
      name: 'offshoot_destroy',
      arguments: { database: 'app', branch: 'main-pre-promote', force: true },
    });
    assert.equal(r.isError, undefined, JSON.stringify(r.content));
    assert.equal(r._meta?.['offshoot/confirmed-by-human'], true);
    assert.equal(asked.length, 1);
    assert.match(asked[0] ?? '', /app@main-pre-promote \(the undo point of app@main/);
    assert.equal(await requests('destroy', 'ok'), done + 1);
  });
  test('a live session on the undo point of protected main gives an agent no writable path', async () => {
    s.cli(['rollback', 'app', '--to', 'promote']);
    s.cli(['session', 'open', 'app@main-pre-rollback', '-socket', daemon.sock]);
    refused(
      await m.call('offshoot_checkout', { database: 'app', branch: 'main-pre-rollback' }),
      'PROTECTED',
      /undo point of protected app@main/,
    );
    const live = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'other' }));
    assert.equal(live.live, false, 'a branch without a session is checked out at rest as before');
    s.cli(['session', 'close', 'app@main-pre-rollback', '-socket', daemon.sock]);
  });
});
