// The dashboard's storage figures against GC itself: what a branch alone pins is what GC reclaims once it is gone,
// and "reclaimable" is exactly what two GC passes then delete.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { fork } from '../../src/ops/fork.js';
import { collectGarbage } from '../../src/ops/gc.js';
import { storageUsage } from '../../src/ops/helpers/gc/storage-usage.js';
import { openTestStore } from './harness.js';
import { runSql } from './sqlite-cli.js';

describe('storageUsage', () => {
  it('attributes shared and own bytes, and predicts what GC reclaims', async () => {
    const ts = await openTestStore();
    try {
      const ctx = ts.ctx;
      await create(ctx, 'app');
      const main = await checkout(ctx, { db: 'app', branch: 'main' });
      runSql(main.path, 'CREATE TABLE t(x); INSERT INTO t VALUES (randomblob(20000));');
      await checkpoint(ctx, { db: 'app', branch: 'main' }, 'filled');
      await fork(ctx, { db: 'app', branch: 'main' }, 'child');

      const shared = await storageUsage(ctx);
      const child = shared.branches.find((b) => b.branch === 'child');
      const mainUse = shared.branches.find((b) => b.branch === 'main');
      assert.ok(child && mainUse);
      assert.equal(child.uniqueBytes, 0, 'a fresh shared fork pins nothing of its own');
      assert.ok(child.pinnedBytes > 0 && child.pinnedBytes <= mainUse.pinnedBytes);
      assert.deepEqual(shared.reclaimable, { objects: 0, bytes: 0 });
      assert.deepEqual(shared.dbs, [{ db: 'app', branches: 2, bytes: mainUse.pinnedBytes }]);

      await compact(ctx, { db: 'app', branch: 'child' });
      const own = (await storageUsage(ctx)).branches.find((b) => b.branch === 'child');
      assert.ok(own && own.uniqueBytes > 0, 'a compacted fork owns its snapshot');

      await destroy(ctx, { db: 'app', branch: 'child' });
      const after = await storageUsage(ctx);
      assert.ok(after.reclaimable.bytes >= own.uniqueBytes, 'the destroyed branch’s own bytes become reclaimable');
      assert.ok(
        after.lineages.some((l) => l.dbs.length === 0 && l.liveBytes === 0),
        'its lineage reads as garbage',
      );

      await collectGarbage(ctx, 0n);
      const gc = await collectGarbage(ctx, 0n);
      assert.equal(gc.deleted, after.reclaimable.objects, 'GC deletes exactly the objects predicted');
      assert.deepEqual((await storageUsage(ctx)).reclaimable, { objects: 0, bytes: 0 });
    } finally {
      await ts.cleanup();
    }
  });
});
