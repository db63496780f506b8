// The daemon's checkpoint and query ops: what an SDK needs to name a branch's state and read it without running the
// CLI, over the same ops the CLI and the MCP server call.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runSql } from '../ops/sqlite-cli.js';
import { assertDaemonError, makeStoreDir, startDaemon, type DaemonProcess, type StoreDir } from './daemon-process.js';

describe('daemon checkpoint and query ops', () => {
  let s: StoreDir;
  let d: DaemonProcess;

  before(async () => {
    s = makeStoreDir();
    d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    assert.equal((await d.request({ op: 'create', db: 'app' })).ok, true);
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'f1' })).ok, true);
  });

  after(async () => {
    await d.stop();
    s.cleanup();
  });

  test('checkpoint at rest writes what changed in the checkout; unchanged, it names the head', async () => {
    const co = await d.request({ op: 'checkout', db: 'app', branch: 'f1' });
    runSql(co.checkout ?? '', "CREATE TABLE t(x); INSERT INTO t VALUES ('one');");
    const cp = await d.request({ op: 'checkpoint', db: 'app', branch: 'f1', name: 'one', meta: { run: '7' } });
    assert.equal(cp.ok, true, JSON.stringify(cp));
    assert.deepEqual(cp.result, { kind: 'segment' });
    const again = await d.request({ op: 'checkpoint', db: 'app', branch: 'f1', name: 'same' });
    assert.deepEqual([again.txid, again.result], [cp.txid, { kind: 'none' }]);
    const f1 = (await d.request({ op: 'branches', db: 'app' })).branches?.find((b) => b.branch === 'f1');
    assert.deepEqual(f1?.checkpoints.slice(-2), ['one', 'same']);
    assertDaemonError(await d.request({ op: 'checkpoint', db: 'app', branch: 'f1', name: 'one' }), 'ALREADY_EXISTS');
    assertDaemonError(
      await d.request({ op: 'checkpoint', db: 'app', branch: 'f1' }),
      'INVALID_ARGUMENT',
      /checkpoint name is required/,
    );
  });

  test('a meta key __proto__ is kept over the wire, as the CLI keeps it, and its value checked like any other', async () => {
    const meta = JSON.parse('{"__proto__":"p","run":"8"}') as Record<string, string>;
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'proto', meta })).ok, true);
    const co = await d.request({ op: 'checkout', db: 'app', branch: 'proto' });
    runSql(co.checkout ?? '', 'CREATE TABLE p(x); INSERT INTO p VALUES (1);');
    const cp = await d.request({ op: 'checkpoint', db: 'app', branch: 'proto', name: 'tagged', meta });
    assert.equal(cp.ok, true, JSON.stringify(cp));
    const st = JSON.parse(s.cli(['status', 'app', '--json']).stdout) as {
      branches: Array<{ branch: string; meta?: unknown; checkpoints_v2: Array<{ name: string; meta?: unknown }> }>;
    };
    const b = st.branches.find((x) => x.branch === 'proto');
    assert.equal(JSON.stringify(b?.meta), '{"__proto__":"p","run":"8"}');
    assert.equal(
      JSON.stringify(b?.checkpoints_v2.find((c) => c.name === 'tagged')?.meta),
      '{"__proto__":"p","run":"8"}',
    );
    const bad = JSON.parse('{"__proto__":{"not":"a string"}}') as Record<string, string>;
    assertDaemonError(
      await d.request({ op: 'fork', db: 'app', branch: 'main', name: 'proto-bad', meta: bad }),
      'INVALID_ARGUMENT',
      /must be a string/,
    );
  });

  test('checkpoint of a branch with a session here is that session flushed, under the name', async () => {
    assert.equal((await d.request({ op: 'fork', db: 'app', branch: 'f1', name: 'live' })).ok, true);
    const opened = await d.request({ op: 'open', db: 'app', branch: 'live' });
    runSql(opened.checkout ?? '', "INSERT INTO t VALUES ('live');");
    const cp = await d.request({ op: 'checkpoint', db: 'app', branch: 'live', name: 'captured' });
    assert.equal(cp.result && (cp.result as { kind: string }).kind, 'live', JSON.stringify(cp));
    const st = (await d.request({ op: 'status' })).sessions?.find((x) => x.branch === 'live');
    assert.equal(st?.durable_txid, cp.txid);
    const q = await d.request({ op: 'query', db: 'app', branch: 'live', name: 'captured', sql: 'SELECT x FROM t' });
    assert.deepEqual(q.result, { source: 'checkpoint', columns: ['x'], rows: [['one'], ['live']], truncated: false });
    assert.equal((await d.request({ op: 'close', db: 'app', branch: 'live' })).ok, true);
  });

  test('query reads the checkout, a checkpoint, or the durable head; writes and bad requests are refused', async () => {
    const co = await d.request({ op: 'checkout', db: 'app', branch: 'f1' });
    runSql(co.checkout ?? '', "INSERT INTO t VALUES ('unsaved');");
    const head = await d.request({ op: 'query', db: 'app', branch: 'f1', sql: 'SELECT x FROM t ORDER BY x' });
    assert.deepEqual(head.result, {
      source: 'checkout',
      columns: ['x'],
      rows: [['one'], ['unsaved']],
      truncated: false,
    });
    const cut = await d.request({ op: 'query', db: 'app', branch: 'f1', sql: 'SELECT x FROM t', limit: 1 });
    assert.equal((cut.result as { truncated: boolean }).truncated, true);
    const atOne = await d.request({
      op: 'query',
      db: 'app',
      branch: 'f1',
      name: 'one',
      sql: 'SELECT count(*) n FROM t',
    });
    assert.deepEqual((atOne.result as { rows: unknown[][] }).rows, [[1]]);
    const main = await d.request({ op: 'query', db: 'app', sql: "SELECT count(*) FROM sqlite_schema WHERE name='t'" });
    assert.deepEqual(main.result, { source: 'head', columns: ['count(*)'], rows: [[0]], truncated: false });
    assertDaemonError(
      await d.request({ op: 'query', db: 'app', branch: 'f1', sql: 'DELETE FROM t' }),
      'INVALID_ARGUMENT',
      /query refused/,
    );
    assertDaemonError(await d.request({ op: 'query', db: 'app', branch: 'f1' }), 'INVALID_ARGUMENT', /sql is required/);
    assertDaemonError(
      await d.request({ op: 'query', db: 'app', branch: 'f1', sql: 'SELECT 1', limit: 0 }),
      'INVALID_ARGUMENT',
      /out of range/,
    );
    assertDaemonError(await d.request({ op: 'query', db: 'app', branch: 'nope', sql: 'SELECT 1' }), 'NOT_FOUND');
  });
});
