// Riding a real daemon (-socket): a harness-opened session, the stock sqlite3 CLI writing to its live path, live
// checkpoints, forks through the daemon, each session refusal, and at rest again once the daemon is gone.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startDaemon, type DaemonProcess, until } from '../daemon/daemon-process.js';
import { asStoreDir, makeMcpStore, ok, refused, startMcp, type McpSession, type McpStore } from './mcp-harness.js';

function head(s: McpStore, branch: string): { txid: number; lineage: string } {
  const j = JSON.parse(s.cli(['status', 'app', '--json']).stdout) as {
    branches: Array<{ branch: string; txid: number }>;
  };
  const ref = JSON.parse(readFileSync(join(s.store, 'refs/app', branch), 'utf8')) as { lineage: string };
  return { txid: j.branches.find((b) => b.branch === branch)?.txid ?? -1, lineage: ref.lineage };
}

describe('offshoot mcp -socket: riding a daemon', () => {
  let s: McpStore;
  let daemon: DaemonProcess;
  let m: McpSession;
  let forcing: McpSession;
  let live: string;
  before(async () => {
    s = makeMcpStore();
    daemon = await startDaemon(asStoreDir(s), ['-flush-every', '0', '-reap-every', '0']);
    live = s.cli(['session', 'open', 'app', '-socket', daemon.sock]).stdout.trim();
    m = await startMcp(s.store, ['-socket', daemon.sock, '-reap-every', '0']);
    forcing = await startMcp(s.store, ['-socket', daemon.sock, '-reap-every', '0', '-allow-force']);
  });
  after(async () => {
    await m.close();
    await forcing.close();
    await daemon.stop();
    s.cleanup();
  });

  test("checkout returns the session's live path and checkpoint flushes live", async () => {
    const c = ok(await m.call('offshoot_checkout', { database: 'app' }));
    assert.equal(c.path, live);
    assert.equal(c.live, true);
    s.sqlite(live, "INSERT INTO t(v) VALUES ('live-1');");
    const cp = ok(await m.call('offshoot_checkpoint', { database: 'app', name: 'live-cp', meta: { run: '7' } }));
    assert.equal(cp.kind, 'live');
    assert.equal(cp.live, true);
    const q = ok(
      await m.call('offshoot_query', {
        database: 'app',
        at: 'live-cp',
        sql: "SELECT count(*) FROM t WHERE v = 'live-1'",
      }),
    );
    assert.deepEqual(q.rows, [[1]]);
    const list = ok(await m.call('offshoot_list', { database: 'app' }));
    const main = (
      list.branches as Array<{
        branch: string;
        live_session: string | null;
        checkpoints: Array<{ name: string; meta?: unknown }>;
      }>
    ).find((b) => b.branch === 'main');
    assert.equal(main?.live_session, live);
    assert.deepEqual(main?.checkpoints.find((x) => x.name === 'live-cp')?.meta, { run: '7' });
    assert.deepEqual(list.daemon, { socket: daemon.sock, sessions: 1 });
  });

  test('fork rides the daemon and the open source is flushed first', async () => {
    s.sqlite(live, "INSERT INTO t(v) VALUES ('live-2');");
    const f = ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'child' }));
    assert.equal(f.via, 'daemon');
    assert.equal(f.ttl, '24h0m0s');
    // The expiry is the one the reaper keeps (the daemon's reply says it), not one the tool works out for itself.
    const listed = (
      JSON.parse(s.cli(['status', 'app', '--json']).stdout) as {
        branches: Array<{ branch: string; expires_at: string }>;
      }
    ).branches.find((b) => b.branch === 'child');
    assert.equal(f.expires_at, listed?.expires_at);
    const q = ok(
      await m.call('offshoot_query', {
        database: 'app',
        branch: 'child',
        sql: "SELECT count(*) FROM t WHERE v = 'live-2'",
      }),
    );
    assert.equal(q.source, 'head');
    assert.deepEqual(q.rows, [[1]], 'the unflushed write landed in the child');
  });

  test('an ephemeral fork rides the daemon, is gone with it unless kept, and the tool says so', async () => {
    const { tools } = await m.client.listTools();
    assert.match(tools.find((t) => t.name === 'offshoot_fork')?.description ?? '', /GONE WITH ITS DAEMON/);
    const call = await m.call('offshoot_fork', { database: 'app', new_branch: 'try-1', ephemeral: true });
    const f = ok(call);
    assert.deepEqual([f.via, f.ephemeral], ['daemon', true]);
    assert.match(call.text, /gone with it/);
    const c = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'try-1' }));
    s.sqlite(c.path as string, "INSERT INTO t(v) VALUES ('try');");
    assert.equal(existsSync(join(s.store, 'refs/app/try-1')), false, 'nothing of it is in the store');
    const listed = ok(await m.call('offshoot_list', { database: 'app' }));
    assert.deepEqual((listed.daemon as { ephemeral?: string[] }).ephemeral, ['app@try-1']);
    const q = ok(
      await m.call('offshoot_query', {
        database: 'app',
        branch: 'try-1',
        sql: "SELECT count(*) FROM t WHERE v = 'try'",
      }),
    );
    assert.deepEqual(q.rows, [[1]], 'the daemon reads its checkout');
    ok(await m.call('offshoot_touch', { database: 'app', branch: 'try-1' }));
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'try-1', name: 'worth-it' }));
    assert.equal(existsSync(join(s.store, 'refs/app/try-1')), true, 'a named checkpoint keeps it');
    const d = ok(
      await m.call('offshoot_diff', { database: 'app', source: 'main', target: 'try-1', target_at: 'worth-it' }),
    );
    assert.equal((d.tables as Array<{ added: number }>)[0]?.added, 1);
    ok(await m.call('offshoot_fork', { database: 'app', branch: 'try-1', new_branch: 'try-2', ephemeral: true }));
    const d2 = ok(await m.call('offshoot_diff', { database: 'app', source: 'try-1', target: 'try-2', summary: true }));
    assert.equal((d2.tables as Array<{ status: string }>)[0]?.status, 'same', 'a diff with an ephemeral side');
    ok(await m.call('offshoot_destroy', { database: 'app', branch: 'try-2' }));
    ok(await m.call('offshoot_destroy', { database: 'app', branch: 'try-1' }));
  });

  test('rollback, promote onto and destroy refuse a branch with a session, force or not', async () => {
    const before = head(s, 'main');
    refused(
      await m.call('offshoot_rollback', { database: 'app', to: 'init' }),
      'SESSION_OPEN',
      /offshoot session close app@main/,
    );
    refused(await forcing.call('offshoot_rollback', { database: 'app', to: 'init' }), 'SESSION_OPEN');
    refused(await m.call('offshoot_promote', { database: 'app', source: 'child', target: 'main' }), 'SESSION_OPEN');
    refused(
      await forcing.call('offshoot_promote', { database: 'app', source: 'child', target: 'main', force: true }),
      'SESSION_OPEN',
      /force does not override/,
    );
    refused(await m.call('offshoot_destroy', { database: 'app', branch: 'main' }), 'SESSION_OPEN');
    refused(await forcing.call('offshoot_destroy', { database: 'app', branch: 'main', force: true }), 'SESSION_OPEN');
    assert.deepEqual(head(s, 'main'), before, 'main is untouched');
  });

  test("promote's source may be open: it is flushed through the daemon first, and the result says so", async () => {
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'other', ttl: 'none' }));
    const childLive = s.cli(['session', 'open', 'app@child', '-socket', daemon.sock]).stdout.trim();
    s.sqlite(childLive, "INSERT INTO t(v) VALUES ('unflushed');");
    const call = await m.call('offshoot_promote', { database: 'app', source: 'child', target: 'other' });
    assert.equal(ok(call).source_live, true);
    assert.match(call.text, /flushed first/);
    const q = ok(
      await m.call('offshoot_query', {
        database: 'app',
        branch: 'other',
        sql: "SELECT v FROM t WHERE v IN ('live-2','unflushed') ORDER BY v",
      }),
    );
    assert.deepEqual(
      q.rows,
      [['live-2'], ['unflushed']],
      'the writes so far, flushed first as the daemon promote does',
    );
    s.cli(['session', 'close', 'app@child', '-socket', daemon.sock]);
  });

  test('with the daemon gone every tool works at rest', async () => {
    s.cli(['session', 'close', 'app', '-socket', daemon.sock]);
    assert.equal(await daemon.stop(), 0);
    const l = ok(await m.call('offshoot_list'));
    assert.equal(l.daemon, null);
    const c = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'child' }));
    assert.equal(c.live, false);
    s.sqlite(c.path as string, "INSERT INTO t(v) VALUES ('rest');");
    assert.equal(
      ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'child', name: 'rest' })).live,
      false,
    );
    assert.equal(
      ok(await m.call('offshoot_fork', { database: 'app', branch: 'child', new_branch: 'grandchild' })).via,
      'at-rest',
    );
    refused(
      await m.call('offshoot_fork', { database: 'app', branch: 'child', new_branch: 'fleeting', ephemeral: true }),
      'UNSUPPORTED',
      /-socket/,
    );
    ok(await m.call('offshoot_destroy', { database: 'app', branch: 'grandchild' }));
  });
});

describe('offshoot mcp without -socket: the daemon serving the store is found', () => {
  let s: McpStore;
  let daemon: DaemonProcess;
  let m: McpSession;
  let live: string;
  const updated: string[] = [];
  before(async () => {
    s = makeMcpStore();
    // A socket of its own, not the store's default one: the MCP server finds it through the daemon's lock.
    daemon = await startDaemon(asStoreDir(s), ['-flush-every', '0', '-reap-every', '0']);
    live = s.cli(['session', 'open', 'app', '-socket', daemon.sock]).stdout.trim();
    m = await startMcp(s.store, ['-reap-every', '0'], {
      setup: (c) => c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri)),
    });
  });
  after(async () => {
    await m.close();
    await daemon.stop();
    s.cleanup();
  });

  test('checkout, checkpoint and touch of a branch the daemon holds go through it, not LEASE_HELD', async () => {
    const c = ok(await m.call('offshoot_checkout', { database: 'app' }));
    assert.equal(c.path, live);
    s.sqlite(live, "INSERT INTO t(v) VALUES ('found');");
    assert.equal(ok(await m.call('offshoot_checkpoint', { database: 'app', name: 'found' })).kind, 'live');
    const t = ok(await m.call('offshoot_touch', { database: 'app' }));
    assert.equal(t.branch, 'main');
    const list = ok(await m.call('offshoot_list', { database: 'app' }));
    assert.deepEqual(list.daemon, { socket: daemon.sock, sessions: 1 });
  });

  test("a subscriber hears of the daemon's flush of a live session", async () => {
    await m.client.subscribeResource({ uri: 'offshoot://app/main' });
    s.sqlite(live, "INSERT INTO t(v) VALUES ('heard');");
    s.cli(['session', 'flush', 'app', 'heard', '-socket', daemon.sock]);
    await until(() => updated.includes('offshoot://app/main'), 'the update after a live flush');
  });

  test('a repoint with no checkout does not claim a busy checkout', async () => {
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'a', ttl: 'none' }));
    ok(await m.call('offshoot_fork', { database: 'app', new_branch: 'b', ttl: 'none' }));
    const p = await m.call('offshoot_promote', { database: 'app', source: 'a', target: 'b' });
    assert.equal(ok(p).refreshed, false);
    assert.doesNotMatch(p.text, /busy/);
    assert.match(p.text, /app@b has no checkout yet/);
  });
});
