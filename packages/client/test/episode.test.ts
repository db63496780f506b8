// Client.episode against a real daemon: an ephemeral fork with a live session, ended by `await using` (or close())
// with its diff against where it started, and discarded unless kept.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { connect, type Client, type Episode } from '../src/index.js';
import { startDaemon, type TestDaemon } from '../src/testkit.js';

process.env['OFFSHOOT_BIN'] = fileURLToPath(new URL('../../../offshoot', import.meta.url));

function sql(path: string, text: string): string {
  return execFileSync('sqlite3', ['-bail', '-cmd', '.timeout 5000', path, text], { encoding: 'utf8' });
}

describe('Client.episode', { timeout: 120_000 }, () => {
  let daemon: TestDaemon;
  let c: Client;
  const branches = async (): Promise<string[]> => (await c.branches('app')).map((b) => b.branch).sort();

  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    c = await connect(daemon.sock);
    await c.create('app');
    sql(
      await c.checkout('app', 'main'),
      'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES (1);',
    );
    await c.checkpoint('app', 'main', 'seed');
  });
  after(async () => {
    c.close();
    await daemon.stop();
  });

  test('await using ends an episode with its diff and discards it', async () => {
    let ep: Episode | undefined;
    {
      await using e = await c.episode('app', { fromCheckpoint: 'seed' });
      ep = e;
      assert.match(e.branch, /^ep-[0-9a-f]{12}$/);
      const listed = (await c.branches('app')).find((b) => b.branch === e.branch);
      assert.equal(listed?.ephemeral, true, 'an episode is an ephemeral fork');
      sql(e.path, "INSERT INTO t(v) VALUES ('episode');");
    }
    const t = ep.result?.diff.tables.find((x) => x.table === 't');
    assert.deepEqual([t?.status, t?.left_count, t?.right_count], ['changed', 1, 2]);
    assert.equal(ep.result?.kept, undefined);
    assert.deepEqual(await branches(), ['main'], 'the episode is gone');
  });

  test('keep makes the episode a durable branch that closing leaves in place', async () => {
    const ep = await c.episode('app', { fromCheckpoint: 'seed', name: 'keeper' });
    sql(ep.path, "INSERT INTO t(v) VALUES ('kept');");
    assert.equal(typeof (await ep.keep('good', { meta: { score: '1' } })), 'number');
    const r = await ep.close();
    assert.equal(r, await ep.close(), 'close answers once');
    assert.equal(r.kept, 'good');
    const keeper = (await c.branches('app')).find((b) => b.branch === 'keeper');
    assert.ok(keeper !== undefined && keeper.ephemeral === undefined && keeper.checkpoints.includes('good'));
    const rows = await c.query('app', 'keeper', 'SELECT v FROM t ORDER BY id', { at: 'good' });
    assert.deepEqual(rows.rows, [['1'], ['kept']]);
    await c.destroy('app', 'keeper');
  });

  test('an episode whose block throws is discarded all the same', async () => {
    let name = '';
    await assert.rejects(async () => {
      await using e = await c.episode('app', { fromCheckpoint: 'seed' });
      name = e.branch;
      throw new Error('the run failed');
    }, /the run failed/);
    assert.notEqual(name, '');
    assert.deepEqual(await branches(), ['main']);
  });
});
