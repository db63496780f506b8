// Diff reads a branch's clean checkout in place (no per-chain cache entry is built for it, so nothing is copied),
// and only then: a checkout written since its last checkpoint, or a branch under someone's lease, is read from the
// store, so the diff is always of durable states.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { diff } from '../../src/ops/diff.js';
import { fork } from '../../src/ops/fork.js';
import { chainCacheDir } from '../../src/ops/helpers/context/paths.js';
import { acquireLease, releaseLease } from '../../src/ops/lease.js';
import { openTestStore, type TestStore } from './harness.js';
import { runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };
const SEED = { ...MAIN, checkpoint: 'seed' };
const F = { db: 'app', branch: 'f' };

function entries(ts: TestStore): Set<string> {
  const dir = chainCacheDir(ts.dir, 'app');
  return new Set(existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.db')) : []);
}

async function seeded(ts: TestStore): Promise<string> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(
    co.path,
    'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);' +
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) INSERT INTO t(v) SELECT 'row ' || i FROM n;",
  );
  await checkpoint(ts.ctx, MAIN, 'seed');
  await fork(ts.ctx, MAIN, 'f', { at: 'seed' });
  const f = await checkout(ts.ctx, F);
  runSql(f.path, "INSERT INTO t(v) VALUES ('a'), ('b'), ('c'); UPDATE t SET v = 'changed' WHERE id = 9;");
  await checkpoint(ts.ctx, F, 'wrote');
  return f.path;
}

function addedIn(d: Awaited<ReturnType<typeof diff>>): string[] {
  return (d.tables.find((t) => t.table === 't')?.added ?? []).map((r) => String(r.v));
}

describe('diff of a clean checkout', () => {
  it('reads the checkout in place: no cache entry is built for its head, and the rows and counts are exact', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await diff(ts.ctx, SEED, SEED);
      const before = entries(ts);
      const d = await diff(ts.ctx, SEED, F);
      assert.deepEqual(entries(ts), before, 'no entry was materialized for the clean checkout');
      const t = d.tables.find((x) => x.table === 't');
      assert.deepEqual(addedIn(d), ['a', 'b', 'c']);
      assert.equal(t?.changed.length, 1);
      assert.equal(t?.leftCount, 500);
      assert.equal(t?.rightCount, 503);
      assert.equal(d.stats.tablesCounted, 1, 'the seed is counted once; the right count follows from it');
      // The left side's count is remembered for the unchanged seed file; a second diff reports the same counts
      // without counting the seed again.
      const again = await diff(ts.ctx, SEED, F);
      assert.equal(again.tables.find((x) => x.table === 't')?.leftCount, 500);
      assert.equal(again.tables.find((x) => x.table === 't')?.rightCount, 503);
      assert.equal(again.stats.tablesCounted, 0, 'the second diff against the same seed counts nothing');
      // Another fork of the seed, as an eval loop makes one an episode: forking and writing it leaves the seed's
      // checkout as it was, so its count is still the remembered one.
      const G = { db: 'app', branch: 'g' };
      await fork(ts.ctx, MAIN, 'g', { at: 'seed' });
      runSql((await checkout(ts.ctx, G)).path, "INSERT INTO t(v) VALUES ('g');");
      await checkpoint(ts.ctx, G, 'wrote');
      const other = await diff(ts.ctx, SEED, G);
      assert.deepEqual(addedIn(other), ['g']);
      assert.equal(other.tables.find((x) => x.table === 't')?.rightCount, 501);
      assert.equal(other.stats.tablesCounted, 0, 'a diff of another fork against the seed does not count it again');
      // Reversed, the clean checkout is the left side and the seed the right.
      const back = await diff(ts.ctx, F, SEED);
      assert.deepEqual(
        (back.tables.find((x) => x.table === 't')?.removed ?? []).map((r) => String(r.v)),
        ['a', 'b', 'c'],
      );
    } finally {
      await ts.cleanup();
    }
  });

  it('a checkout written since its checkpoint is not read: the diff is of the durable head', async () => {
    const ts = await openTestStore();
    try {
      const path = await seeded(ts);
      runSql(path, "INSERT INTO t(v) VALUES ('not durable');");
      const before = entries(ts);
      const d = await diff(ts.ctx, SEED, F);
      assert.deepEqual(addedIn(d), ['a', 'b', 'c'], 'the unflushed row is not in the diff');
      assert.equal(entries(ts).size, before.size + 1, 'the head was materialized from the store instead');
    } finally {
      await ts.cleanup();
    }
  });

  it('a leased branch is read from the store, never from the checkout its writer holds', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await acquireLease(ts.ctx, F, '1m');
      const before = entries(ts);
      const d = await diff(ts.ctx, SEED, F);
      assert.deepEqual(addedIn(d), ['a', 'b', 'c']);
      assert.equal(entries(ts).size, before.size + 1, 'the head was materialized from the store');
      await releaseLease(ts.ctx, F);
    } finally {
      await ts.cleanup();
    }
  });
});
