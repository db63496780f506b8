// offshoot_query answers TEXT holding a NUL whole, on runtimes whose node:sqlite cuts text at a NUL (Node 22) too.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { create } from '../../src/ops/create.js';
import { query } from '../../src/ops/query.js';
import { openTestStore, type TestStore } from './harness.js';

let ts: TestStore;
before(async () => {
  ts = await openTestStore();
  await create(ts.ctx, 'app');
});
after(() => ts.cleanup());

const main = { db: 'app', branch: 'main' };

test('NUL-bearing text answers whole, beside duplicate column names, in a WITH and a VALUES statement', async () => {
  const r = await query(ts.ctx, main, "SELECT 'a' || char(0) || 'b' AS a, char(0) AS a, 'plain' AS p, 1, NULL", {});
  assert.deepEqual(r.columns, ['a', 'a', 'p', '1', 'NULL']);
  assert.deepEqual(r.rows, [['a\0b', '\0', 'plain', 1, null]]);
  const w = await query(
    ts.ctx,
    main,
    "WITH x(v) AS (VALUES ('z' || char(0)), ('y' || char(0) || 'y')) SELECT v FROM x ORDER BY v DESC -- last\n;",
    {},
  );
  assert.deepEqual(w.rows, [['z\0'], ['y\0y']]);
  const v = await query(ts.ctx, main, "VALUES (char(0) || 'q')", {});
  assert.deepEqual(v.rows, [['\0q']]);
});

test('an endless statement still streams: the rows up to the limit answer, NULs whole', async () => {
  const sql = 'WITH RECURSIVE c(x) AS (SELECT char(0) UNION ALL SELECT x || char(0) FROM c) SELECT x FROM c';
  const r = await query(ts.ctx, main, sql, { limit: 3, timeoutMs: 60_000 });
  assert.deepEqual(r.rows, [['\0'], ['\0\0'], ['\0\0\0']]);
  assert.equal(r.truncatedBy, 'rows');
});
