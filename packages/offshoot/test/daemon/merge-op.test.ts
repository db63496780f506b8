// The daemon's merge op on a real socket: two forks written by the stock sqlite3 CLI merged into protected main,
// the conflict listed with nothing changed, `prefer` resolving it, and an agent held to the one safety policy.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { refsSnapshot } from '../mcp/mcp-harness.js';
import { runSql } from '../ops/sqlite-cli.js';
import { assertDaemonError, makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

interface JsonMerge {
  applied: boolean;
  checkpoint?: string;
  backup?: string;
  base: { kind: string; at: string };
  conflicts: Array<{ kind: string; key: Record<string, unknown>; source: unknown; target: unknown }>;
}

describe('the daemon: merge', () => {
  let s: StoreDir;
  let d: DaemonProcess;
  const write = async (branch: string, sql: string): Promise<void> => {
    const co = await d.request({ op: 'checkout', db: 'app', branch });
    runSql(co.checkout as string, sql);
  };
  before(async () => {
    s = makeStoreDir();
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    assert.deepEqual(await d.request({ op: 'create', db: 'app' }), { ok: true });
    await write('main', "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one');");
    assert.equal((await d.request({ op: 'checkpoint', db: 'app', branch: 'main', name: 'seed' })).ok, true);
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', names: ['a', 'b'] })).ok, true);
    await write('a', "UPDATE t SET v = 'a' WHERE id = 1; INSERT INTO t VALUES (2, 'a2');");
    await write('b', "UPDATE t SET v = 'b' WHERE id = 1; INSERT INTO t VALUES (3, 'b3');");
  });
  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('an agent without allow_force is refused on protected main, liftable; a human with force merges', async () => {
    const before = refsSnapshot(s.store);
    const agent = await d.request({ op: 'merge', db: 'app', branch: 'a', into: 'main', force: true, actor: 'agent' });
    assertDaemonError(agent, 'PROTECTED', /-allow-force/);
    assert.equal(agent.human_can_allow, true);
    assert.deepEqual(refsSnapshot(s.store), before, 'the refusal wrote nothing');
    const res = await d.request({ op: 'merge', db: 'app', branch: 'a', into: 'main', force: true });
    assert.equal(res.ok, true, JSON.stringify(res));
    const r = res.result as JsonMerge;
    assert.equal(r.applied, true);
    assert.equal(r.backup, 'main-pre-merge');
    assert.equal(res.txid, 3, 'the new head: a segment on main');
  });

  test('a conflict is listed and nothing changes; prefer resolves it', async () => {
    assert.equal((await d.request({ op: 'checkpoint', db: 'app', branch: 'b', name: 'done' })).ok, true);
    const before = refsSnapshot(s.store);
    const res = await d.request({ op: 'merge', db: 'app', branch: 'b', into: 'main', force: true });
    assert.equal(res.ok, true);
    const r = res.result as JsonMerge;
    assert.equal(r.applied, false);
    assert.deepEqual(
      r.conflicts.map((c) => [c.kind, c.key, c.source, c.target]),
      [['update/update', { id: 1 }, { id: 1, v: 'b' }, { id: 1, v: 'a' }]],
    );
    assert.deepEqual(refsSnapshot(s.store), before, 'nothing was written');
    const resolved = await d.request({
      op: 'merge',
      db: 'app',
      branch: 'b',
      into: 'main',
      force: true,
      prefer: 'source',
      name: 'with-b',
    });
    assert.equal((resolved.result as JsonMerge).checkpoint, 'with-b');
    assertDaemonError(await d.request({ op: 'merge', db: 'app', branch: 'b' }), 'INVALID_ARGUMENT', /into/);
  });

  test('resolved rows settle the conflicts; a partial or stray resolution is refused with nothing written', async () => {
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', names: ['c', 'e'] })).ok, true);
    await write('c', "UPDATE t SET v = 'c' WHERE id = 1; UPDATE t SET v = 'c2' WHERE id = 2;");
    await write('e', "UPDATE t SET v = 'e' WHERE id = 1; DELETE FROM t WHERE id = 2;");
    const merge = { op: 'merge', db: 'app', branch: 'c', into: 'e' };
    const report = (await d.request(merge)).result as JsonMerge;
    assert.deepEqual(
      report.conflicts.map((c) => [c.kind, c.key]),
      [
        ['update/update', { id: 1 }],
        ['update/delete', { id: 2 }],
      ],
    );
    const before = refsSnapshot(s.store);
    const one = [{ table: 't', key: { id: 1 }, row: { id: 1, v: 'c+e' } }];
    const partial = await d.request({ ...merge, resolved: one });
    assertDaemonError(partial, 'MERGE_CONFLICT', /1 of 2 conflicting row\(s\) have no resolved row/);
    assert.match(String(partial.hint), /to resolved, or pass prefer/, 'the hint in the SDK caller terms');
    const stray = await d.request({ ...merge, resolved: [...one, { table: 't', key: { id: 3 }, row: null }] });
    assertDaemonError(stray, 'INVALID_ARGUMENT', /names no conflicting row/);
    assert.deepEqual(refsSnapshot(s.store), before, 'nothing was written');

    const res = await d.request({ ...merge, resolved: [...one, { table: 't', key: { id: 2 }, row: null }] });
    assert.equal(res.ok, true, JSON.stringify(res));
    const r = res.result as JsonMerge & { resolved?: number };
    assert.deepEqual([r.applied, r.resolved], [true, 2]);
    const rows = await d.request({ op: 'query', db: 'app', branch: 'e', sql: 'SELECT id, v FROM t ORDER BY id' });
    assert.deepEqual((rows.result as { rows: unknown[] }).rows, [
      [1, 'c+e'],
      [3, 'b3'],
    ]);
  });

  test('check of a merge asks about the source point named in from, as the merge op takes it', async () => {
    const check = { op: 'check', verb: 'merge', db: 'app', branch: 'b', into: 'main', force: true };
    const head = await d.request(check);
    assert.equal(head.ok, true, JSON.stringify(head));
    assertDaemonError(await d.request({ ...check, from: 'nosuch' }), 'NOT_FOUND', /nosuch/);
    const done = await d.request({ ...check, from: 'done' });
    assert.equal(done.ok, true, JSON.stringify(done));
  });
});
