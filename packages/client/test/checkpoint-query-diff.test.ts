import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { connect, isOffshootError, type Client } from '../src/index.js';
import { startDaemon, type TestDaemon } from '../src/testkit.js';

process.env['OFFSHOOT_BIN'] = fileURLToPath(new URL('../../../offshoot', import.meta.url));

describe('checkpoint, query and diff against a real daemon', { timeout: 120_000 }, () => {
  let daemon: TestDaemon;
  let c: Client;

  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    c = await connect(daemon.sock);
    await c.create('app');
    await c.fork('app', 'main', 'f1');
  });
  after(async () => {
    c.close();
    await daemon.stop();
  });

  test('checkpoint writes an at-rest checkout, or flushes the session open on the branch', async () => {
    const path = await c.checkout('app', 'f1');
    execFileSync('sqlite3', [
      '-bail',
      path,
      "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a');",
    ]);
    const one = await c.checkpoint('app', 'f1', 'one', { meta: { run: '1' } });
    assert.equal(one.kind, 'segment');
    assert.deepEqual(await c.checkpoint('app', 'f1', 'same'), { txid: one.txid, kind: 'none' });
    await assert.rejects(c.checkpoint('app', 'f1', 'one'), (e) => isOffshootError(e, 'ALREADY_EXISTS'));

    await c.fork('app', 'f1', 'live');
    const s = await c.open('app', 'live');
    execFileSync('sqlite3', ['-bail', s.path, "INSERT INTO t VALUES (2, 'b');"]);
    const live = await c.checkpoint('app', 'live', 'captured');
    assert.equal(live.kind, 'live');
    assert.equal((await c.status()).find((x) => x.branch === 'live')?.durable_txid, live.txid);
    await s.close();
  });

  test('query reads the checkout, a checkpoint or the head; a write is refused with the daemon code', async () => {
    assert.deepEqual(await c.query('app', 'f1', 'SELECT v FROM t'), {
      source: 'checkout',
      columns: ['v'],
      rows: [['a']],
      truncated: false,
    });
    const atCaptured = await c.query('app', 'live', 'SELECT id FROM t ORDER BY id', { at: 'captured', limit: 1 });
    assert.deepEqual([atCaptured.source, atCaptured.rows, atCaptured.truncated], ['checkpoint', [[1]], true]);
    await assert.rejects(c.query('app', 'f1', 'DELETE FROM t'), (e) => isOffshootError(e, 'INVALID_ARGUMENT'));
  });

  test('diff compares two durable states, heads or checkpoints, rows or a summary', async () => {
    const d = await c.diff('app', 'app@live');
    const t = d.tables.find((x) => x.table === 't');
    assert.equal(t?.status, 'added');
    assert.deepEqual(t?.added, [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
    ]);
    const first = await c.diff('app', 'app@live', { table: 't', limit: 1 });
    assert.deepEqual(
      first.tables.map((x) => [x.table, x.added, x.counts]),
      [['t', [{ id: 1, v: 'a' }], { added: 2, removed: 0, changed: 0 }]],
      'one table, its first row listed, every row counted',
    );
    const step = await c.diff('app@live@captured', 'app@f1@one', { summary: true });
    assert.equal(step.summary_only, true);
    assert.equal(step.tables.find((x) => x.table === 't')?.status, 'changed');
    await assert.rejects(c.diff('app@nope', 'app'), (e) => isOffshootError(e, 'NOT_FOUND'));
  });
});
