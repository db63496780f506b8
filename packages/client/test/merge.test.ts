import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { connect, isOffshootError, type Client } from '../src/index.js';
import { startDaemon, type TestDaemon } from '../src/testkit.js';

process.env['OFFSHOOT_BIN'] = fileURLToPath(new URL('../../../offshoot', import.meta.url));

describe('merge against a real daemon', { timeout: 120_000 }, () => {
  let daemon: TestDaemon;
  let c: Client;
  const write = async (branch: string, sql: string): Promise<void> => {
    execFileSync('sqlite3', ['-bail', await c.checkout('app', branch), sql]);
    await c.checkpoint('app', branch, `${branch}-done`);
  };

  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    c = await connect(daemon.sock);
    await c.create('app');
    await write('main', "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one');");
    await c.fork('app', 'main', 'a');
    await c.fork('app', 'main', 'b');
    await write('a', "UPDATE t SET v = 'a' WHERE id = 1; INSERT INTO t VALUES (2, 'a2');");
    await write('b', "UPDATE t SET v = 'b' WHERE id = 1;");
  });
  after(async () => {
    c.close();
    await daemon.stop();
  });

  test('merges a fork into another, lists a conflict with nothing changed, and prefer resolves it', async () => {
    await assert.rejects(c.merge('app', 'a', 'main'), (e) => isOffshootError(e, 'PROTECTED'));
    const first = await c.merge('app', 'a', 'b', { prefer: 'target' });
    assert.deepEqual([first.applied, first.base.kind, first.backup], [true, 'siblings', 'b-pre-merge']);
    assert.deepEqual(
      first.conflicts.map((x) => [x.kind, x.key, x.source, x.target]),
      [['update/update', { id: 1 }, { id: 1, v: 'a' }, { id: 1, v: 'b' }]],
    );
    const open = await c.merge('app', 'b', 'main', { force: true });
    assert.deepEqual([open.applied, open.conflicts.length], [true, 0]);
    const again = await c.merge('app', 'a', 'main', { force: true });
    assert.equal(again.applied, false, 'main has b, which took a2 and kept its own row 1: a conflicts on row 1');
    assert.deepEqual(
      again.conflicts.map((x) => x.kind),
      ['update/update'],
    );
  });

  test('resolved rows settle conflicts and prefer the rest; a partial resolution is refused, nothing changed', async () => {
    await c.create('res');
    const at = async (branch: string, sql: string, cp: string): Promise<void> => {
      execFileSync('sqlite3', ['-bail', await c.checkout('res', branch), sql]);
      await c.checkpoint('res', branch, cp);
    };
    await at(
      'main',
      "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, b BLOB); INSERT INTO t VALUES (1, 'one', x'01'), (2, 'two', NULL);",
      'seed',
    );
    await c.fork('res', 'main', 'x');
    await c.fork('res', 'main', 'y');
    await at('x', "UPDATE t SET v = 'x', b = x'0a' WHERE id = 1; UPDATE t SET v = 'x2' WHERE id = 2;", 'x1');
    await at('y', "UPDATE t SET v = 'y', b = x'0b' WHERE id = 1; UPDATE t SET v = 'y2' WHERE id = 2;", 'y1');
    const report = await c.merge('res', 'x', 'y');
    assert.deepEqual([report.applied, report.conflicts.map((x) => x.key)], [false, [{ id: 1 }, { id: 2 }]]);
    const [one] = report.conflicts;
    assert.ok(one?.source);
    const resolved = [{ table: 't', key: one.key, row: { ...one.source, v: 'x+y', b: { $blob: 'ab' } } }];
    await assert.rejects(c.merge('res', 'x', 'y', { resolved }), (e) => isOffshootError(e, 'MERGE_CONFLICT'));
    const r = await c.merge('res', 'x', 'y', { resolved, prefer: 'target' });
    assert.deepEqual([r.applied, r.resolved, r.prefer], [true, 1, 'target']);
    const rows = await c.query('res', 'y', 'SELECT id, v, hex(b) FROM t ORDER BY id');
    assert.deepEqual(rows.rows, [
      [1, 'x+y', 'AB'],
      [2, 'y2', ''],
    ]);
  });

  test('from merges a checkpoint of the source, not its head', async () => {
    await c.create('pts');
    const at = async (branch: string, sql: string, cp: string): Promise<void> => {
      execFileSync('sqlite3', ['-bail', await c.checkout('pts', branch), sql]);
      await c.checkpoint('pts', branch, cp);
    };
    await at('main', 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);', 'schema');
    await c.fork('pts', 'main', 'src');
    await c.fork('pts', 'main', 'dst');
    await at('src', "INSERT INTO t VALUES (1, 'first');", 'one');
    await at('src', "INSERT INTO t VALUES (2, 'second');", 'two');
    const r = await c.merge('pts', 'src', 'dst', { from: 'one' });
    assert.deepEqual([r.applied, r.tables], [true, [{ table: 't', inserted: 1, updated: 0, deleted: 0 }]]);
    const rest = await c.merge('pts', 'src', 'dst');
    assert.deepEqual([rest.base.kind, rest.tables], ['merge', [{ table: 't', inserted: 1, updated: 0, deleted: 0 }]]);
  });
});
