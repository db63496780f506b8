// Seeded random histories of every at-rest verb against a model: after each step every branch's head and every
// checkpoint materialize, from the store, to exactly the `.dump` the model expects. OFFSHOOT_PROPERTY_STEPS sets
// the steps per seed for longer runs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDataKey } from '../../src/core/keys.js';
import { DEFAULT_LAYOUT_VERSION } from '../../src/store/manifest.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { runGc } from '../../src/ops/gc.js';
import { promote } from '../../src/ops/promote.js';
import { rollback } from '../../src/ops/rollback.js';
import { exportDump, openTestStore } from './harness.js';
import { StoreVerifier } from './model-check.js';
import { RandomHistory } from './random-history.js';
import { dump, emptyDump, runSql } from './sqlite-cli.js';

const STEPS = Number(process.env.OFFSHOOT_PROPERTY_STEPS ?? 0) || undefined;

async function runHistory(
  seed: number,
  steps: number,
  opts: { forkFloor?: number; snapshotEvery?: number; layout?: number } = {},
): Promise<void> {
  const ts = await openTestStore(opts);
  const h = new RandomHistory(ts, seed, emptyDump(ts.tmpPath('empty.db')));
  const verifier = new StoreVerifier(ts);
  const merged = new Set<string>();
  try {
    for (let i = 0; i < steps; i++) {
      const kind = await h.step();
      // After a GC, and now and then regardless, every state is materialized from the store's objects again.
      if (kind === 'gc' || i % 10 === 9) verifier.forget();
      await verifier.verify(h.model);
      for (const o of await ts.store.backend.list('data/')) {
        const d = parseDataKey(o.key);
        if (d?.kind === 'segment' && d.minTxid < d.maxTxid) merged.add(o.key);
      }
    }
    // Under a low cadence chains are bounded at a few members: at layout 3 merged segments were written, read and
    // collected along the way, so every verification above covered them; below it, snapshots at the head instead.
    const layout = opts.layout ?? DEFAULT_LAYOUT_VERSION;
    if (opts.snapshotEvery !== undefined && layout === 3)
      assert.ok(merged.size > 0, 'the history wrote merged segments');
    if (layout !== 3) assert.deepEqual([...merged], [], 'a store below layout 3 never gets a merged segment');
    assert.equal(ts.store.layoutVersion, Math.max(2, layout), 'the layout never moved unasked');
  } catch (err) {
    const tail = h.log.slice(-15).map((l, i) => `  ${h.log.length - Math.min(15, h.log.length) + i + 1}: ${l}`);
    (err as Error).message += `\nseed ${seed}, ${h.log.length} steps; last steps:\n${tail.join('\n')}`;
    throw err;
  } finally {
    await ts.cleanup();
  }
}

describe('random histories match the model after every step', () => {
  it('seed 1 (default floors)', async () => runHistory(1, STEPS ?? 110));
  it('seed 2 (default floors)', async () => runHistory(2, STEPS ?? 110));
  it('seed 3 (forkFloor 4, snapshotEvery 4, layout 3)', async () =>
    runHistory(3, STEPS ?? 110, { forkFloor: 4, snapshotEvery: 4, layout: 3 }));
  it('seed 4 (forkFloor 2, snapshotEvery 3, layout 3)', async () =>
    runHistory(4, STEPS ?? 80, { forkFloor: 2, snapshotEvery: 3, layout: 3 }));
  it('seed 5 (forkFloor 4, snapshotEvery 4, layout 2: chains bounded by snapshots)', async () =>
    runHistory(5, STEPS ?? 110, { forkFloor: 4, snapshotEvery: 4, layout: 2 }));
  it('seed 23 (a replaced undo point with a checkout)', async () => runHistory(23, STEPS ?? 80));
});

describe('implicit checkpoints never lose uncheckpointed edits', () => {
  it("promote keeps the target's uncheckpointed edits in <target>-pre-promote", async () => {
    const ts = await openTestStore();
    try {
      const { ctx } = ts;
      await create(ctx, 'app');
      await fork(ctx, { db: 'app', branch: 'main' }, 'exp');
      const exp = await checkout(ctx, { db: 'app', branch: 'exp' });
      runSql(exp.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES (1);');
      await checkpoint(ctx, { db: 'app', branch: 'exp' }, 'done');
      const main = await checkout(ctx, { db: 'app', branch: 'main' });
      runSql(
        main.path,
        "CREATE TABLE notes(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO notes(v) VALUES ('typed on main');",
      );
      const edited = dump(main.path);
      const r = await promote(ctx, { db: 'app', branch: 'exp' }, 'main', { force: true });
      assert.equal(r.backup, 'main-pre-promote');
      assert.equal(
        await exportDump(ts, { db: 'app', branch: 'main-pre-promote' }),
        edited,
        'the undo point holds the edits promote replaced',
      );
      assert.equal(dump(main.path), await exportDump(ts, { db: 'app', branch: 'exp' }));
    } finally {
      await ts.cleanup();
    }
  });

  it('rollback is undone by promoting <branch>-pre-rollback, and that promote by promoting <branch>-pre-promote', async () => {
    const ts = await openTestStore();
    try {
      const { ctx } = ts;
      const main = { db: 'app', branch: 'main' };
      await create(ctx, 'app');
      const co = await checkout(ctx, main);
      runSql(co.path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('good');");
      await checkpoint(ctx, main, 'good');
      runSql(co.path, "INSERT INTO t(v) VALUES ('later'); UPDATE t SET v = 'changed' WHERE id = 1;");
      const later = dump(co.path);
      const good = await exportDump(ts, { ...main, checkpoint: 'good' });
      const rb = await rollback(ctx, main, 'good');
      assert.equal(dump(co.path), good);
      assert.equal(
        await exportDump(ts, { db: 'app', branch: rb.backup }),
        later,
        'the uncheckpointed edits went into the undo point',
      );
      const undo = await promote(ctx, { db: 'app', branch: rb.backup }, 'main', { force: true });
      assert.equal(dump(co.path), later);
      assert.equal(await exportDump(ts, main), later);
      assert.equal(await exportDump(ts, { db: 'app', branch: undo.backup }), good);
      // Promoting the pre-promote branch back swaps again: its ref is replaced by main's head as it is read.
      const redo = await promote(ctx, { db: 'app', branch: undo.backup }, 'main', { force: true });
      assert.equal(redo.backup, undo.backup);
      assert.equal(await exportDump(ts, main), good);
      assert.equal(await exportDump(ts, { db: 'app', branch: redo.backup }), later);
      await runGc(ctx, { grace: 0n });
      await runGc(ctx, { grace: 0n });
      const cold = makeContext(ts.store, ts.tmpPath('cold'), { now: ts.clock.now });
      assert.equal(await exportDump(ts, main, cold), good);
      assert.equal(await exportDump(ts, { db: 'app', branch: redo.backup }, cold), later);
    } finally {
      await ts.cleanup();
    }
  });
});
