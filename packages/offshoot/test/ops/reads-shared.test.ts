// Which shared branches read objects another branch reads too (the dashboard draws them dashed), on real stores:
// through a live parent, through a destroyed parent's lineage, after a promote, and once every source is gone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { fork } from '../../src/ops/fork.js';
import { type BranchLineage, readsShared } from '../../src/ops/helpers/branch/reads-shared.js';
import { promote } from '../../src/ops/promote.js';
import { scanStatus } from '../../src/ops/status.js';
import { openTestStore, type TestStore } from './harness.js';
import { runSql } from './sqlite-cli.js';

const app = (branch: string) => ({ db: 'app', branch });

async function sharing(ts: TestStore): Promise<{ shared: string[]; storage: Record<string, string> }> {
  const lineages: BranchLineage[] = [];
  const storage: Record<string, string> = {};
  await scanStatus(ts.ctx, { db: 'app' }, (b, ref) => {
    lineages.push({ branch: b.branch, lineage: ref.lineage, base: ref.base });
    storage[b.branch] = b.storage;
  });
  return { shared: [...(await readsShared(ts.ctx.store, lineages))].sort(), storage };
}

describe('readsShared', () => {
  it('follows base pointers through lineages no branch owns, and drops a branch whose sources are all gone', async () => {
    const ts = await openTestStore();
    try {
      const ctx = ts.ctx;
      await create(ctx, 'app');
      runSql((await checkout(ctx, app('main'))).path, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);');
      await checkpoint(ctx, app('main'), 'seeded');
      await fork(ctx, app('main'), 'mid');
      await fork(ctx, app('mid'), 'leaf');
      assert.deepEqual((await sharing(ts)).shared, ['leaf', 'mid'], 'forks read what their parents read');

      await destroy(ctx, app('mid'));
      assert.deepEqual((await sharing(ts)).shared, ['leaf'], "through mid's lineage, leaf still reads main's");

      runSql((await checkout(ctx, app('leaf'))).path, 'INSERT INTO t VALUES (2);');
      await checkpoint(ctx, app('leaf'), 'two');
      await promote(ctx, app('leaf'), 'main', { force: true });
      const promoted = await sharing(ts);
      assert.equal(promoted.storage.main, 'shared');
      assert.ok(promoted.shared.includes('main'), 'main reads what leaf, still here, reads');

      await destroy(ctx, app('leaf'));
      await destroy(ctx, app('main-pre-promote'));
      const alone = await sharing(ts);
      assert.deepEqual(alone.storage, { main: 'shared' });
      assert.deepEqual(alone.shared, [], 'no branch is left that reads what main reads');
    } finally {
      await ts.cleanup();
    }
  });

  it('counts two forks of a gone parent as sharing its lineage, and the last of them as alone', async () => {
    const ts = await openTestStore();
    try {
      const ctx = ts.ctx;
      await create(ctx, 'app');
      runSql((await checkout(ctx, app('main'))).path, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);');
      await checkpoint(ctx, app('main'), 'seeded');
      await fork(ctx, app('main'), 'parent');
      await compact(ctx, app('parent'));
      await fork(ctx, app('parent'), 'one');
      await fork(ctx, app('parent'), 'two');
      await destroy(ctx, app('parent'));
      assert.deepEqual((await sharing(ts)).shared, ['one', 'two']);
      await destroy(ctx, app('two'));
      const left = await sharing(ts);
      assert.equal(left.storage.one, 'shared');
      assert.deepEqual(left.shared, []);
    } finally {
      await ts.cleanup();
    }
  });
});
