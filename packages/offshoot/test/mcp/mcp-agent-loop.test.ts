// A scripted agent running the whole loop through the MCP tools, with the stock sqlite3 CLI as its SQL client and a
// human stepping in on the CLI where the posture says so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeMcpStore, ok, refused, startMcp } from './mcp-harness.js';

test('the agent loop: fork, migrate, checkpoint, diff, promote refused, human promotes, rollback and undo', async () => {
  const s = makeMcpStore();
  const m = await startMcp(s.store);
  try {
    // 1. Look.
    const list = ok(await m.call('offshoot_list'));
    assert.deepEqual(
      (list.branches as Array<{ branch: string }>).map((b) => b.branch),
      ['main'],
    );
    assert.deepEqual(ok(await m.call('offshoot_query', { database: 'app', sql: 'SELECT count(*) FROM t' })).rows, [
      [3],
    ]);
    // 2. Fork for the attempt.
    const f = ok(
      await m.call('offshoot_fork', { database: 'app', new_branch: 'migrate', meta: { agent: 'scripted' } }),
    );
    assert.equal(f.ttl, '24h0m0s');
    // 3. Work in the fork's checkout.
    const path = ok(await m.call('offshoot_checkout', { database: 'app', branch: 'migrate' })).path as string;
    assert.match(path, /checkouts\/app\/migrate\.db$/);
    s.sqlite(
      path,
      'ALTER TABLE t ADD COLUMN n INTEGER NOT NULL DEFAULT 0; UPDATE t SET n = id * 10; CREATE INDEX t_n ON t(n);',
    );
    // 4. Tests pass: checkpoint.
    const cp = ok(
      await m.call('offshoot_checkpoint', {
        database: 'app',
        branch: 'migrate',
        name: 'migrated',
        meta: { tests: 'pass' },
      }),
    );
    assert.notEqual(cp.kind, 'none');
    // 5. Compare with main.
    const d = ok(await m.call('offshoot_diff', { database: 'app', target: 'migrate' }));
    assert.equal(d.left, 'app@main');
    assert.equal(d.right, 'app@migrate');
    const schema = d.schema as Array<{ name: string; change: string }>;
    assert.ok(
      schema.some((c) => c.name === 't' && c.change === 'changed'),
      'the table change is in the diff',
    );
    assert.ok(
      schema.some((c) => c.name === 't_n' && c.change === 'added'),
      'the new index is in the diff',
    );
    const diffText = (await m.call('offshoot_diff', { database: 'app', target: 'migrate' })).text;
    assert.match(diffText, /left: {2}app@main/);
    // 6. Promote: refused onto protected main, the exact human command in the result.
    const p = await m.call('offshoot_promote', { database: 'app', source: 'migrate', target: 'main' });
    refused(p, 'PROTECTED', /-allow-force/);
    const command = /'(offshoot promote app@migrate --onto main --force)'/.exec(p.text)?.[1];
    assert.equal(command, 'offshoot promote app@migrate --onto main --force');
    s.cli((command as string).split(' ').slice(1));
    const cols = ok(
      await m.call('offshoot_query', { database: 'app', sql: "SELECT name FROM pragma_table_info('t') ORDER BY cid" }),
    );
    assert.deepEqual(cols.rows, [['id'], ['v'], ['n']], 'main has the migration');

    // A bad step in the fork: tests fail, roll back, then think better of it and undo through the backup.
    s.sqlite(path, 'DELETE FROM t WHERE id > 1;');
    ok(await m.call('offshoot_checkpoint', { database: 'app', branch: 'migrate', name: 'pruned' }));
    const r = ok(await m.call('offshoot_rollback', { database: 'app', branch: 'migrate', to: 'migrated' }));
    assert.equal(r.backup, 'migrate-pre-rollback');
    assert.equal(s.sqlite(r.path as string, 'SELECT count(*) FROM t;').trim(), '3');
    const undo = r.undo as string;
    assert.equal(undo, 'offshoot_promote database=app source=migrate-pre-rollback target=migrate');
    const args = Object.fromEntries(
      undo
        .split(' ')
        .slice(1)
        .map((kv) => kv.split('=') as [string, string]),
    );
    const u = ok(await m.call('offshoot_promote', args));
    assert.equal(
      s.sqlite(u.path as string, 'SELECT count(*) FROM t;').trim(),
      '1',
      'the undo restored the pruned state',
    );
    ok(await m.call('offshoot_destroy', { database: 'app', branch: 'migrate-pre-rollback' }));
  } finally {
    await m.close();
    s.cleanup();
  }
});
