// What one GC pass costs in store requests (counted, never timed): every ref is read once for reap, stale-claim
// clearing and the first mark together, and once more only by the fresh mark that guards deletes; data/ is listed a
// fixed number of times whatever the number of lineages, and each base pointer is read at most once per mark.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refKey } from '../../src/core/keys.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { fork } from '../../src/ops/fork.js';
import { runGc } from '../../src/ops/gc.js';
import { CountingBackend } from './counting-backend.js';
import { openTestStore } from './harness.js';
import { runSql } from './sqlite-cli.js';

const HOUR_NS = 3_600_000_000_000n;
const HOUR_MS = 3_600_000;

/** How many times each key was read by a get. */
function readsPerKey(counting: CountingBackend, prefix: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of counting.reads(prefix)) out.set(c.key, (out.get(c.key) ?? 0) + 1);
  return out;
}

describe("a GC pass's requests", () => {
  it('reads each ref once (twice when stones are due), lists data/ and log/ a fixed number of times', async () => {
    let counting!: CountingBackend;
    const ts = await openTestStore({ wrap: (b) => (counting = new CountingBackend(b)) });
    try {
      await create(ts.ctx, 'app');
      const co = await checkout(ts.ctx, { db: 'app', branch: 'main' });
      runSql(co.path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('a');");
      await checkpoint(ts.ctx, { db: 'app', branch: 'main' }, 'one');
      const keep: string[] = ['main'];
      for (let i = 0; i < 8; i++) {
        const ttl = i % 2 === 0 ? { ttl: { kind: 'set' as const, ttl: HOUR_NS } } : {};
        await fork(ts.ctx, { db: 'app', branch: 'main' }, `f${i}`, ttl);
        if (i % 2 === 1) keep.push(`f${i}`);
      }
      const w = await checkout(ts.ctx, { db: 'app', branch: 'f1' });
      runSql(w.path, "INSERT INTO t(v) VALUES ('b');");
      await checkpoint(ts.ctx, { db: 'app', branch: 'f1' }, 'two');
      await fork(ts.ctx, { db: 'app', branch: 'f1' }, 'doomed');
      const d = await checkout(ts.ctx, { db: 'app', branch: 'doomed' });
      runSql(d.path, "INSERT INTO t(v) VALUES ('c');");
      await checkpoint(ts.ctx, { db: 'app', branch: 'doomed' }, 'three');
      await destroy(ts.ctx, { db: 'app', branch: 'doomed' });
      ts.clock.advance(2 * HOUR_MS);

      counting.reset();
      const first = await runGc(ts.ctx, { grace: HOUR_NS });
      assert.equal(first.reaped.length, 4, 'the four expired forks were reaped');
      assert.ok(first.tombstoned > 0, 'what only the reaped and destroyed branches reached was condemned');
      assert.equal(first.deleted, 0);
      const firstReads = readsPerKey(counting, 'refs/');
      for (const b of keep) assert.equal(firstReads.get(refKey('app', b)), 1, `${b}'s ref read once`);
      // Each mark also lists the daemons' liveness objects, for what their ephemeral forks pin.
      assert.deepEqual(
        counting.of('list').map((c) => c.key),
        ['data/', 'log/', 'refs/', 'liveness/', 'data/', 'log/'],
        'data/ and log/ listed before the refs are read and once after, never per lineage',
      );
      for (const [k, n] of readsPerKey(counting, 'data/')) {
        assert.ok(k.endsWith('/base.json'), `a mark reads no data object (${k})`);
        assert.equal(n, 1, `${k} read once`);
      }

      ts.clock.advance(2 * HOUR_MS);
      counting.reset();
      const second = await runGc(ts.ctx, { grace: HOUR_NS });
      assert.ok(second.deleted > 0, 'the stones came due and were deleted');
      const secondReads = readsPerKey(counting, 'refs/');
      for (const b of keep) assert.equal(secondReads.get(refKey('app', b)), 2, `${b}: snapshot and fresh mark`);
      assert.deepEqual(
        counting.of('list').map((c) => c.key),
        ['data/', 'log/', 'refs/', 'liveness/', 'data/', 'log/', 'refs/', 'liveness/', 'data/', 'log/'],
        'the fresh mark lists refs/, data/ and log/ once more, and that listing is the presence check',
      );
      for (const [k, n] of readsPerKey(counting, 'data/')) assert.ok(n <= 2, `${k} read at most once per mark`);
    } finally {
      await ts.cleanup();
    }
  });
});
