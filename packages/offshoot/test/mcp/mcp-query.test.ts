// offshoot_query: limits, the time limit, every kind of write refused with nothing changed, value summaries, and a
// checkpoint read without the writable checkout being touched.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeMcpStore, ok, refsSnapshot, refused, startMcp, type McpSession, type McpStore } from './mcp-harness.js';

describe('offshoot_query', () => {
  let s: McpStore;
  let m: McpSession;
  let path: string;
  before(async () => {
    s = makeMcpStore();
    s.cli(['fork', 'app', 'big']);
    path = s.cli(['checkout', 'app@big']).stdout.trim();
    s.sqlite(
      path,
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1500) INSERT INTO t(v) SELECT x FROM c;',
    );
    s.cli(['checkpoint', 'app@big', 'filled']);
    m = await startMcp(s.store, ['-query-timeout', '500ms']);
  });
  after(async () => {
    await m.close();
    s.cleanup();
  });

  test('a row limit with a default and a cap', async () => {
    const d = ok(await m.call('offshoot_query', { database: 'app', branch: 'big', sql: 'SELECT id FROM t' }));
    assert.equal((d.rows as unknown[]).length, 100);
    assert.equal(d.truncated, true);
    assert.deepEqual(d.columns, ['id']);
    const l = ok(
      await m.call('offshoot_query', { database: 'app', branch: 'big', sql: 'SELECT id FROM t', limit: 1000 }),
    );
    assert.equal((l.rows as unknown[]).length, 1000);
    const all = ok(await m.call('offshoot_query', { database: 'app', sql: 'SELECT id FROM t', limit: 3 }));
    assert.equal(all.truncated, false, 'exactly the limit is not truncated');
    refused(
      await m.call('offshoot_query', { database: 'app', sql: 'SELECT 1', limit: 1001 }),
      'INVALID_ARGUMENT',
      /at most 1000/,
    );
    refused(await m.call('offshoot_query', { database: 'app', sql: 'SELECT 1', limit: 0 }), 'INVALID_ARGUMENT');
  });

  test('a statement past the time limit is stopped, and the server keeps serving', async () => {
    const r = await m.call('offshoot_query', {
      database: 'app',
      sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
    });
    refused(r, 'TIMEOUT', /500 ms/);
    assert.deepEqual(ok(await m.call('offshoot_query', { database: 'app', sql: 'SELECT 1 AS one' })).rows, [[1]]);
  });

  test('writes are refused, ATTACH, PRAGMA writes and VACUUM INTO included, and nothing changes', async () => {
    const target = join(s.dir, 'escaped.db');
    const refs = refsSnapshot(s.store);
    const before = createHash('sha256').update(readFileSync(path)).digest('hex');
    for (const sql of [
      "INSERT INTO t(v) VALUES ('x')",
      "UPDATE t SET v = 'x'",
      'DELETE FROM t',
      'DROP TABLE t',
      'CREATE TABLE u(a)',
      'CREATE TEMP TABLE u(a)',
      "ATTACH DATABASE ':memory:' AS m",
      `ATTACH DATABASE '${target}' AS m`,
      'DETACH DATABASE main',
      'PRAGMA user_version = 7',
      'PRAGMA journal_mode = DELETE',
      'PRAGMA query_only = OFF',
      'PRAGMA main.user_version=7',
      'VACUUM',
      `VACUUM INTO '${target}'`,
      ' /* sneaky */ vacuum  into  ' + `'${target}'`,
      'SELECT 1; DROP TABLE t',
      'REINDEX',
      '',
    ]) {
      const r = await m.call('offshoot_query', { database: 'app', branch: 'big', sql });
      assert.equal(r.isError, true, `${sql} was refused`);
      refused(r, 'INVALID_ARGUMENT', /query refused/);
    }
    assert.equal(existsSync(target), false, 'VACUUM INTO wrote no file');
    assert.deepEqual(refsSnapshot(s.store), refs);
    assert.equal(createHash('sha256').update(readFileSync(path)).digest('hex'), before, 'the checkout is unchanged');
    const pragma = ok(await m.call('offshoot_query', { database: 'app', sql: "PRAGMA table_info('t')" }));
    assert.ok((pragma.rows as unknown[]).length === 2, 'reporting pragmas still work');
    assert.deepEqual(ok(await m.call('offshoot_query', { database: 'app', sql: 'PRAGMA user_version' })).rows, [[0]]);
  });

  test('BLOBs are summarised and large integers keep their digits', async () => {
    const r = ok(
      await m.call('offshoot_query', {
        database: 'app',
        sql: "SELECT zeroblob(300) AS b, 9007199254740993 AS big, 1.5 AS r, NULL AS n, 'x' AS s",
      }),
    );
    const [row] = r.rows as unknown[][];
    assert.deepEqual(row?.[0], {
      blob: 300,
      sha256: createHash('sha256').update(Buffer.alloc(300)).digest('hex').slice(0, 16),
      hex: '00'.repeat(16),
    });
    assert.deepEqual(row?.slice(1), ['9007199254740993', 1.5, null, 'x']);
  });

  test("a checkpoint's state is read without the writable checkout being touched", async () => {
    s.sqlite(path, "INSERT INTO t(v) VALUES ('uncheckpointed');");
    const st = statSync(path);
    const hash = createHash('sha256').update(readFileSync(path)).digest('hex');
    const atCp = ok(
      await m.call('offshoot_query', {
        database: 'app',
        branch: 'big',
        at: 'filled',
        sql: "SELECT count(*) FROM t WHERE v = 'uncheckpointed'",
      }),
    );
    assert.equal(atCp.source, 'checkpoint');
    assert.deepEqual(atCp.rows, [[0]]);
    assert.equal(createHash('sha256').update(readFileSync(path)).digest('hex'), hash);
    assert.equal(statSync(path).mtimeMs, st.mtimeMs);
    // The head reads the checkout (read-only), so the agent sees what it wrote.
    const headNow = ok(
      await m.call('offshoot_query', {
        database: 'app',
        branch: 'big',
        sql: "SELECT count(*) FROM t WHERE v = 'uncheckpointed'",
      }),
    );
    assert.equal(headNow.source, 'checkout');
    assert.deepEqual(headNow.rows, [[1]]);
    // A branch with no checkout is read from its durable head, and gets none.
    s.cli(['fork', 'app', 'bare']);
    const bare = ok(await m.call('offshoot_query', { database: 'app', branch: 'bare', sql: 'SELECT count(*) FROM t' }));
    assert.equal(bare.source, 'head');
    assert.equal(existsSync(join(s.store, 'checkouts/app/bare.db')), false);
    refused(await m.call('offshoot_query', { database: 'app', at: 'nosuch', sql: 'SELECT 1' }), 'NOT_FOUND');
  });
});
