// GC's mark against the read path, and the sweep's promises: shared bytes outlive a destroyed parent exactly as long
// as a child reads them, and a tombstone is honoured for its whole grace period.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { baseKey, parseDataKey } from '../../src/core/keys.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { exportTo } from '../../src/ops/export.js';
import { fork } from '../../src/ops/fork.js';
import { keeps, markLive } from '../../src/ops/helpers/gc/gc-mark.js';
import { collectGarbage, runGc } from '../../src/ops/gc.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import type { Store } from '../../src/store/store.js';
import { readTombstones } from '../../src/store/tombstones.js';
import { CountingBackend } from './counting-backend.js';
import { exportDump, openTestStore, type TestStore } from './harness.js';
import { StoreVerifier } from './model-check.js';
import { Prng } from './prng.js';
import { RandomHistory } from './random-history.js';
import { emptyDump, runSql } from './sqlite-cli.js';

const HOUR_NS = 3_600_000_000_000n;
const MINUTE_MS = 60_000;

/** What the read path resolves: every branch's chain at head and at each checkpoint, plus base.json along its spine. */
async function readPathUnion(store: Store): Promise<Set<string>> {
  const resolver = new ChainResolver(store);
  const out = new Set<string>();
  for (const { db, branch } of await store.listAllBranches()) {
    const got = await store.tryGetRef(db, branch);
    if (!got) continue;
    const { ref } = got;
    for (const txid of [ref.head_txid, ...Object.values(ref.checkpoints).map((c) => c.txid)]) {
      const chain = await resolver.resolve(ref.lineage, txid);
      for (const m of chain.members) out.add(m.key);
      for (const k of chain.baseKeys) out.add(k);
    }
    for (let lin = ref.lineage; ; ) {
      const base = await store.readBase(lin);
      if (base === undefined) break;
      out.add(baseKey(lin));
      lin = base.lineage;
    }
  }
  return out;
}

/** The LTX objects materialization actually streams when every head and checkpoint is exported from a cold cache. */
async function objectsExportsRead(ts: TestStore, counting: CountingBackend): Promise<Set<string>> {
  const ctx = makeContext(ts.store, ts.tmpPath('cold'), { now: ts.clock.now });
  counting.reset();
  for (const { db, branch } of await ts.store.listAllBranches()) {
    const { ref } = await ts.store.getRef(db, branch);
    await exportTo(ctx, { db, branch }, ts.tmpPath('head.db'));
    for (const cp of Object.keys(ref.checkpoints))
      await exportTo(ctx, { db, branch, checkpoint: cp }, ts.tmpPath('cp.db'));
  }
  return new Set(counting.of('getStream', 'data/').map((c) => c.key));
}

/** A merged segment: the union of the members covering min..max. */
function isMerged(key: string): boolean {
  const d = parseDataKey(key);
  return d !== undefined && d.kind === 'segment' && d.minTxid < d.maxTxid;
}

const ltxOnly = (keys: Iterable<string>): string[] => [...keys].filter((k) => parseDataKey(k) !== undefined).sort();

async function dataKeys(store: Store): Promise<string[]> {
  return (await store.backend.list('data/')).map((o) => o.key);
}

async function markMatchesReadPath(
  seed: number,
  steps: number,
  opts: { forkFloor?: number; snapshotEvery?: number; layout?: number },
): Promise<void> {
  let counting: CountingBackend | undefined;
  const ts = await openTestStore({ ...opts, wrap: (b) => (counting = new CountingBackend(b)) });
  const h = new RandomHistory(ts, seed, emptyDump(ts.tmpPath('empty.db')));
  let mergedLive = 0;
  try {
    for (let i = 0; i < steps; i++) {
      await h.step();
      const mark = await markLive(ts.ctx);
      assert.deepEqual(
        [...mark.live].sort(),
        [...(await readPathUnion(ts.store))].sort(),
        `mark == read path after: ${h.log.at(-1)}`,
      );
      const present = new Set(await dataKeys(ts.store));
      for (const k of mark.live) assert.ok(present.has(k), `marked ${k} exists in the store`);
      for (const k of mark.live) if (isMerged(k)) mergedLive++;
      if (i % 10 === 9) {
        assert.deepEqual(
          ltxOnly(mark.live),
          ltxOnly(await objectsExportsRead(ts, counting as CountingBackend)),
          'marked LTX objects == what exports stream',
        );
      }
    }
    // Under a low cadence chains are bounded at a few members, so at layout 3 the marks above went through merged
    // segments (below it, through snapshots at the head).
    if (opts.snapshotEvery !== undefined && opts.layout === 3)
      assert.ok(mergedLive > 0, 'some marks resolved through merged segments');
    await runGc(ts.ctx, { grace: 0n });
    await runGc(ts.ctx, { grace: 0n });
    const mark = await markLive(ts.ctx);
    for (const k of await dataKeys(ts.store))
      assert.ok(keeps(mark, k), `after two grace-0 passes only kept objects remain (${k})`);
    const verifier = new StoreVerifier(ts);
    await verifier.verify(h.model);
  } catch (err) {
    (err as Error).message += `\nseed ${seed}; last steps:\n  ${h.log.slice(-10).join('\n  ')}`;
    throw err;
  } finally {
    await ts.cleanup();
  }
}

describe('the mark is exactly what the read path resolves', () => {
  it('seed 11 (default floors)', async () => markMatchesReadPath(11, 60, {}));
  it('seed 12 (forkFloor 3, snapshotEvery 3, layout 3)', async () =>
    markMatchesReadPath(12, 60, { forkFloor: 3, snapshotEvery: 3, layout: 3 }));
  it('seed 13 (forkFloor 3, snapshotEvery 3, layout 2)', async () =>
    markMatchesReadPath(13, 60, { forkFloor: 3, snapshotEvery: 3, layout: 2 }));
});

/** main with checkpoints a (txid 2) and b (txid 3), then a shared child forked at b, then main moves on to txid 4. */
async function parentAndChild(ts: TestStore): Promise<{ parentLineage: string; childDump: string }> {
  const { ctx } = ts;
  await create(ctx, 'app');
  const main = await checkout(ctx, { db: 'app', branch: 'main' });
  runSql(main.path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('a');");
  await checkpoint(ctx, { db: 'app', branch: 'main' }, 'a');
  runSql(main.path, "INSERT INTO t(v) VALUES ('b');");
  await checkpoint(ctx, { db: 'app', branch: 'main' }, 'b');
  const f = await fork(ctx, { db: 'app', branch: 'main' }, 'child');
  assert.equal(f.mode, 'shared');
  runSql(main.path, "INSERT INTO t(v) VALUES ('after the fork');");
  await checkpoint(ctx, { db: 'app', branch: 'main' }, 'c');
  const { ref } = await ts.store.getRef('app', 'main');
  return { parentLineage: ref.lineage, childDump: await exportDump(ts, { db: 'app', branch: 'child' }) };
}

async function gcTwice(ts: TestStore): Promise<void> {
  await runGc(ts.ctx, { grace: 0n });
  await runGc(ts.ctx, { grace: 0n });
}

describe('a destroyed parent’s objects live exactly as long as a shared child reads them', () => {
  it('survive the parent, then go when the child is destroyed', async () => {
    const ts = await openTestStore();
    try {
      const { parentLineage, childDump } = await parentAndChild(ts);
      const before = await ts.store.listLineage(parentLineage);
      assert.equal(before.length, 4, 'snapshot 1 and segments 2, 3, 4');
      await destroy(ts.ctx, { db: 'app', branch: 'main' }, { force: true });
      await gcTwice(ts);
      const needed = (
        await new ChainResolver(ts.store).resolve((await ts.store.getRef('app', 'child')).ref.lineage, 3)
      ).members.map((m) => m.key);
      assert.deepEqual(
        (await ts.store.listLineage(parentLineage)).map((o) => o.key).sort(),
        needed.filter((k) => k.startsWith(`data/${parentLineage}/`)).sort(),
      );
      assert.equal(
        (await ts.store.listLineage(parentLineage)).length,
        3,
        'the segment written after the fork is collected',
      );
      const fresh = makeContext(ts.store, ts.tmpPath('cold'), { now: ts.clock.now });
      assert.equal(await exportDump(ts, { db: 'app', branch: 'child' }, fresh), childDump);
      await destroy(ts.ctx, { db: 'app', branch: 'child' });
      await gcTwice(ts);
      assert.deepEqual(await dataKeys(ts.store), [], 'nothing is left once no branch reads the lineage');
    } finally {
      await ts.cleanup();
    }
  });

  it('survive the parent, then go when the child is compacted', async () => {
    const ts = await openTestStore();
    try {
      const { parentLineage, childDump } = await parentAndChild(ts);
      await destroy(ts.ctx, { db: 'app', branch: 'main' }, { force: true });
      await gcTwice(ts);
      assert.ok((await ts.store.listLineage(parentLineage)).length > 0, 'the child still pins the parent lineage');
      const oldChild = (await ts.store.getRef('app', 'child')).ref.lineage;
      const r = await compact(ts.ctx, { db: 'app', branch: 'child' });
      assert.equal(r.compacted, true);
      await gcTwice(ts);
      assert.ok(
        (await ts.store.listLineage(parentLineage)).length > 0,
        "the child's states before the compaction are inside its history window (a day): kept",
      );
      ts.clock.advance(25 * 60 * MINUTE_MS);
      await gcTwice(ts);
      assert.deepEqual(
        await ts.store.listLineage(parentLineage),
        [],
        'the parent lineage is collected once no chain, and no state inside the window, reads it',
      );
      assert.equal(await ts.store.readBase(oldChild), undefined, "the old child lineage's base.json is collected too");
      const { ref } = await ts.store.getRef('app', 'child');
      assert.ok(
        (await dataKeys(ts.store)).every((k) => k.startsWith(`data/${ref.lineage}/`)),
        'only the compacted lineage remains',
      );
      const fresh = makeContext(ts.store, ts.tmpPath('cold'), { now: ts.clock.now });
      assert.equal(await exportDump(ts, { db: 'app', branch: 'child' }, fresh), childDump);
      assert.equal(await exportDump(ts, { db: 'app', branch: 'child', checkpoint: 'fork' }, fresh), childDump);
    } finally {
      await ts.cleanup();
    }
  });
});

describe('tombstones and the grace period', () => {
  it('a tombstone younger than the grace is not deleted; an older one is', async () => {
    const ts = await openTestStore();
    try {
      await create(ts.ctx, 'app');
      await fork(ts.ctx, { db: 'app', branch: 'main' }, 'doomed');
      const co = await checkout(ts.ctx, { db: 'app', branch: 'doomed' });
      runSql(co.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY);');
      await checkpoint(ts.ctx, { db: 'app', branch: 'doomed' }, 'x');
      const doomedLineage = (await ts.store.getRef('app', 'doomed')).ref.lineage;
      const garbage = (await dataKeys(ts.store)).filter((k) => k.startsWith(`data/${doomedLineage}/`));
      assert.equal(garbage.length, 2, 'base.json and one segment');
      await destroy(ts.ctx, { db: 'app', branch: 'doomed' });

      const first = await collectGarbage(ts.ctx, HOUR_NS);
      assert.equal(first.tombstoned, 2);
      assert.equal(first.deleted, 0);
      const { stones } = await readTombstones(ts.store.backend);
      assert.deepEqual(Object.keys(stones).sort(), garbage.sort());
      assert.ok(
        Object.values(stones).every((t) => t === ts.clock.now().toISOString()),
        'stones carry the injected time',
      );

      ts.clock.advance(59 * MINUTE_MS);
      const early = await collectGarbage(ts.ctx, HOUR_NS);
      assert.equal(early.deleted, 0, 'a stone younger than the grace is kept');
      assert.equal(early.backlog, 2);
      for (const k of garbage) assert.ok(await ts.store.backend.stat(k), `${k} still exists`);
      assert.deepEqual((await readTombstones(ts.store.backend)).stones, stones, 'stones keep their original time');

      ts.clock.advance(MINUTE_MS);
      const due = await collectGarbage(ts.ctx, HOUR_NS);
      assert.equal(due.deleted, 2);
      assert.equal(due.backlog, 0);
      for (const k of garbage) assert.equal(await ts.store.backend.stat(k), undefined, `${k} is deleted`);
      assert.deepEqual((await readTombstones(ts.store.backend)).stones, {});
    } finally {
      await ts.cleanup();
    }
  });

  it('an object that becomes reachable again within the grace loses its stone and is never deleted', async () => {
    const ts = await openTestStore();
    try {
      await create(ts.ctx, 'app');
      await fork(ts.ctx, { db: 'app', branch: 'main' }, 'gone');
      const co = await checkout(ts.ctx, { db: 'app', branch: 'gone' });
      runSql(co.path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('kept');");
      await checkpoint(ts.ctx, { db: 'app', branch: 'gone' }, 'x');
      const expected = await exportDump(ts, { db: 'app', branch: 'gone' });
      const { ref } = await ts.store.getRef('app', 'gone');
      await destroy(ts.ctx, { db: 'app', branch: 'gone' });
      assert.equal((await collectGarbage(ts.ctx, HOUR_NS)).tombstoned, 2);
      // A ref naming the lineage again (as a restore from backup would) makes its objects live before the grace ends.
      await ts.store.createRef('app', 'restored', ref);
      ts.clock.advance(2 * 60 * MINUTE_MS);
      const r = await collectGarbage(ts.ctx, HOUR_NS);
      assert.equal(r.deleted, 0);
      assert.deepEqual((await readTombstones(ts.store.backend)).stones, {});
      const fresh = makeContext(ts.store, ts.tmpPath('cold'), { now: ts.clock.now });
      assert.equal(await exportDump(ts, { db: 'app', branch: 'restored' }, fresh), expected);
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a pass racing a create', () => {
  it('objects written while the pass marks are not condemned: a fork of the new database right after is no BUSY', async () => {
    let during: (() => Promise<void>) | undefined;
    // Runs a create by another process at the moment the pass lists data/: after a mark (ref reads) taken before it,
    // its objects would be listed unmarked and condemned; listed before the mark, they are not listed at all.
    const ts = await openTestStore({
      wrap: (b) =>
        new (class extends CountingBackend {
          override async list(prefix: string) {
            const run = during;
            if (run && prefix === 'data/') {
              during = undefined;
              await run();
            }
            return super.list(prefix);
          }
        })(b),
    });
    try {
      await create(ts.ctx, 'app');
      during = async () => void (await create(ts.context(), 'late'));
      const r = await collectGarbage(ts.ctx, HOUR_NS);
      assert.equal(during, undefined, 'the create ran inside the pass');
      assert.equal(r.tombstoned, 0);
      assert.deepEqual((await readTombstones(ts.store.backend)).stones, {});
      await fork(ts.ctx, { db: 'late', branch: 'main' }, 'first-fork');
    } finally {
      await ts.cleanup();
    }
  });
});

describe('GC passes from several daemons racing forks, destroys and compacts', () => {
  it('at most one pass runs at a time and no pass ever deletes an object a branch reads', async () => {
    const ts = await openTestStore();
    const rng = new Prng(14);
    try {
      const daemons = [0, 1, 2].map(() => ts.context());
      await create(ts.ctx, 'app');
      const co = await checkout(ts.ctx, { db: 'app', branch: 'main' });
      runSql(co.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);');
      const branches = ['main'];
      let forks = 0;
      let busy = 0;
      let ran = 0;
      const tolerated = (err: unknown): void => {
        const e = err as { code?: string; retryable?: boolean };
        if (!(e.retryable || e.code === 'NOT_FOUND' || e.code === 'BUSY' || e.code === 'LEASE_HELD')) throw err;
      };
      for (let round = 0; round < 12; round++) {
        runSql(co.path, `INSERT INTO t(v) VALUES ('r${round}');`);
        await checkpoint(ts.ctx, { db: 'app', branch: 'main' }, `c${round}`);
        const from = branches[rng.int(0, branches.length - 1)] ?? 'main';
        const victim = branches.length > 2 ? branches[rng.int(1, branches.length - 1)] : undefined;
        const work: Array<Promise<unknown>> = daemons.map((d) =>
          collectGarbage(d, 0n).then(
            () => ran++,
            (err: unknown) => {
              if ((err as { code?: string }).code !== 'BUSY') throw err;
              busy++;
            },
          ),
        );
        const name = `f${forks++}`;
        const d = daemons[round % 3] as (typeof daemons)[number];
        work.push(
          fork(d, { db: 'app', branch: from }, name).then(() => branches.push(name), tolerated),
          victim === undefined
            ? Promise.resolve()
            : destroy(daemons[(round + 1) % 3] as typeof d, { db: 'app', branch: victim }).then(
                () => branches.splice(branches.indexOf(victim), 1),
                tolerated,
              ),
        );
        if (round % 4 === 3 && branches.length > 1)
          work.push(
            compact(daemons[(round + 2) % 3] as typeof d, { db: 'app', branch: branches.at(-1) ?? 'main' }).catch(
              tolerated,
            ),
          );
        await Promise.all(work);
        const present = new Set(await dataKeys(ts.store));
        for (const k of await readPathUnion(ts.store))
          assert.ok(present.has(k), `round ${round}: ${k}, which a branch reads, still exists`);
      }
      assert.ok(ran >= 12, 'every round ran at least one pass');
      assert.ok(busy > 0, 'passes that overlapped another were refused, not run');
      for (const b of branches) await exportDump(ts, { db: 'app', branch: b });
    } finally {
      await ts.cleanup();
    }
  });
});
