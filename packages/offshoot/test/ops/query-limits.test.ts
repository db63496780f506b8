// offshoot_query's bounds: a wide answer stops at the byte cap and says so, queries beyond the slots wait or are
// refused BUSY (never one child process each), and the reporting PRAGMAs of the allow-list answer.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { hasCode } from '../../src/core/errors.js';
import { create } from '../../src/ops/create.js';
import { QUERY_LIMITS, query } from '../../src/ops/query.js';
import { openTestStore, rejectsCode, type TestStore } from './harness.js';

/** Query child processes of this process, from /proc. */
function queryChildren(): number {
  let n = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('query-child')) n++;
    } catch {
      // Gone between the listing and the read.
    }
  }
  return n;
}

describe('query limits', () => {
  let ts: TestStore;
  before(async () => {
    ts = await openTestStore();
    await create(ts.ctx, 'app');
  });
  after(() => ts.cleanup());

  test('1,000 rows of 150 columns of 4,000 characters answer, cut at the byte cap and marked truncated', async () => {
    const cols = Array.from({ length: 150 }, (_, i) => `hex(zeroblob(2000)) AS c${i}`).join(', ');
    const sql = `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000) SELECT ${cols} FROM n`;
    const r = await query(ts.ctx, { db: 'app', branch: 'main' }, sql, { limit: 1000, timeoutMs: 60_000 });
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedBy, 'bytes');
    assert.ok(r.rows.length > 0 && r.rows.length < 1000, `${r.rows.length} rows`);
    assert.equal(r.columns.length, 150);
    assert.ok(JSON.stringify(r.rows).length <= QUERY_LIMITS.maxBytes, 'the answer stays within the cap');
    const small = await query(ts.ctx, { db: 'app', branch: 'main' }, 'SELECT 1 AS one', {});
    assert.equal(small.truncated, false);
    assert.equal(small.truncatedBy, undefined);
  });

  test('40 concurrent queries run at most 4 child processes: the next 16 wait, the rest are refused BUSY', async () => {
    const slow = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
    let most = 0;
    let settled = false;
    const runs = Array.from({ length: 40 }, () =>
      query(ts.ctx, { db: 'app', branch: 'main' }, slow, { timeoutMs: 1500 }).then(
        () => 'answered',
        (err: unknown) => (hasCode(err, 'BUSY') ? 'busy' : hasCode(err, 'TIMEOUT') ? 'timeout' : String(err)),
      ),
    );
    const all = Promise.all(runs).finally(() => {
      settled = true;
    });
    while (!settled) {
      most = Math.max(most, queryChildren());
      await new Promise((r) => setTimeout(r, 20));
    }
    const outcomes = await all;
    assert.ok(most <= QUERY_LIMITS.concurrent, `${most} query processes at once`);
    assert.ok(most >= 1);
    assert.ok(
      outcomes.every((o) => o === 'busy' || o === 'timeout'),
      outcomes.join(', '),
    );
    const busy = outcomes.filter((o) => o === 'busy').length;
    assert.ok(busy >= 40 - QUERY_LIMITS.concurrent - QUERY_LIMITS.queued, `${busy} refused BUSY`);
    const after = await query(ts.ctx, { db: 'app', branch: 'main' }, 'SELECT 2 AS two', {});
    assert.deepEqual(after.rows, [[2]], 'the slots are free again');
  });

  test('PRAGMA journal_mode and the other bare reporting pragmas answer; setting one is still refused', async () => {
    const t = { db: 'app', branch: 'main' };
    assert.deepEqual((await query(ts.ctx, t, 'PRAGMA journal_mode', {})).rows, [['wal']]);
    assert.deepEqual((await query(ts.ctx, t, 'pragma main.journal_mode;', {})).rows, [['wal']]);
    for (const p of ['user_version', 'application_id', 'schema_version', 'page_size', 'encoding', 'freelist_count']) {
      const r = await query(ts.ctx, t, `PRAGMA ${p}`, {});
      assert.equal(r.rows.length, 1, p);
    }
    for (const sql of ['PRAGMA journal_mode = DELETE', 'PRAGMA journal_mode(DELETE)', 'PRAGMA user_version(7)'])
      await rejectsCode(query(ts.ctx, t, sql, {}), 'INVALID_ARGUMENT');
    assert.deepEqual((await query(ts.ctx, t, 'PRAGMA journal_mode', {})).rows, [['wal']], 'nothing changed');
  });
});
