// The cost model, asserted by counting store requests and bytes (never by timing): a shared fork is a fixed, tiny
// number of requests whatever the database size; a one-row checkpoint uploads only the changed pages; a clean
// checkout and status read no data object at all.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { parseDataKey } from '../../src/core/keys.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkoutAt } from '../../src/ops/checkout-at.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { exportTo } from '../../src/ops/export.js';
import { fork } from '../../src/ops/fork.js';
import { compactBranch } from '../../src/ops/helpers/chain/chain-writer.js';
import { rollback } from '../../src/ops/rollback.js';
import { status } from '../../src/ops/status.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import type { BackendCall } from './counting-backend.js';
import { CountingBackend } from './counting-backend.js';
import { openTestStore, type TestStore } from './harness.js';
import { query, runSql } from './sqlite-cli.js';

const MiB = 1024 * 1024;

/** A database of about `bytes` of incompressible rows. */
function makeDatabase(file: string, bytes: number): void {
  const db = openDatabase(file);
  try {
    db.exec('CREATE TABLE blobs(id INTEGER PRIMARY KEY, b BLOB)');
    const insert = db.prepare('INSERT INTO blobs(b) VALUES (randomblob(1000))');
    db.exec('BEGIN');
    for (let i = 0; i < bytes / 900; i++) insert.run();
    db.exec('COMMIT');
  } finally {
    db.close();
  }
}

const ltxReads = (calls: readonly BackendCall[]): BackendCall[] =>
  calls.filter(
    (c) => (c.op === 'get' || c.op === 'getStream' || c.op === 'getToFile') && parseDataKey(c.key) !== undefined,
  );

describe('cost model', () => {
  let ts: TestStore;
  let counting: CountingBackend;

  before(async () => {
    ts = await openTestStore({ wrap: (b) => (counting = new CountingBackend(b)) });
    const small = ts.tmpPath('small.db');
    const big = ts.tmpPath('big.db');
    makeDatabase(small, MiB);
    makeDatabase(big, 20 * MiB);
    assert.ok(statSync(big).size >= 20 * MiB);
    await create(ts.ctx, 'small', { from: small });
    await create(ts.ctx, 'big', { from: big });
    // The first shared fork of a store also bumps the manifest to layout 2; measure the steady state.
    await fork(ts.ctx, { db: 'small', branch: 'main' }, 'warm-up');
  });
  after(async () => ts.cleanup());

  async function measuredFork(db: string, name: string): Promise<BackendCall[]> {
    counting.reset();
    const r = await fork(ts.ctx, { db, branch: 'main' }, name);
    assert.equal(r.mode, 'shared');
    return counting.calls.slice();
  }

  function assertSharedForkCost(calls: readonly BackendCall[], db: string, name: string): void {
    const puts = calls.filter((c) => c.op === 'put' || c.op === 'copy');
    assert.equal(puts.length, 2, `a shared fork writes exactly two objects: ${JSON.stringify(puts)}`);
    assert.match(puts[0]?.key ?? '', /^data\/[0-9a-f]{32}\/base\.json$/);
    assert.equal(puts[1]?.key, `refs/${db}/${name}`);
    const bytes = puts.reduce((a, c) => a + (c.bytes ?? 0), 0);
    // The ref carries the first record of the fork's log (who forked it, from where): about 250 bytes of it.
    assert.ok(bytes <= 700, `base.json + ref are ${bytes} bytes`);
    assert.deepEqual(ltxReads(calls), [], 'a shared fork reads no data object');
    assert.ok(calls.length <= 10, `a shared fork is a handful of requests, not ${calls.length}`);
  }

  it('a shared fork issues the same fixed requests and writes two tiny objects for 1 MB and 20 MB', async (t) => {
    const small = await measuredFork('small', 'f1');
    const big = await measuredFork('big', 'f1');
    assertSharedForkCost(small, 'small', 'f1');
    assertSharedForkCost(big, 'big', 'f1');
    const written = big.filter((c) => c.op === 'put').reduce((a, c) => a + (c.bytes ?? 0), 0);
    t.diagnostic(
      `shared fork of 20 MB: ${big.length} requests (${big.map((c) => c.op).join(', ')}), ${written} bytes written`,
    );
    assert.deepEqual(
      big.map((c) => c.op),
      small.map((c) => c.op),
      'the same request sequence at 20x the size',
    );
  });

  it('a one-row checkpoint on a 20 MB database uploads a segment under 16 KB', async (t) => {
    const co = await checkout(ts.ctx, { db: 'big', branch: 'main' });
    runSql(co.path, "INSERT INTO blobs(b) VALUES (x'0102030405');");
    counting.reset();
    const r = await checkpoint(ts.ctx, { db: 'big', branch: 'main' }, 'one-row');
    assert.equal(r.kind, 'segment');
    const data = counting.of('put', 'data/');
    assert.equal(data.length, 1, 'one data object');
    assert.match(data[0]?.key ?? '', /\/segment-[0-9a-f]{16}-[0-9a-f]{16}\.ltx$/);
    assert.ok((data[0]?.bytes ?? Infinity) < 16 * 1024, `segment is ${data[0]?.bytes} bytes`);
    assert.equal(r.bytes, data[0]?.bytes);
    t.diagnostic(`one-row checkpoint of 20 MB: ${r.pages} pages, ${r.bytes} bytes, ${counting.calls.length} requests`);
    const refCalls = counting.calls.filter((c) => c.key === 'refs/big/main').map((c) => c.op);
    // Take the lease (read, write), read the head, commit, give the lease back from what was written: no re-read.
    assert.deepEqual(
      refCalls,
      ['get', 'put', 'get', 'put', 'put'],
      'the branch ref is read twice and written three times',
    );
    assert.deepEqual(ltxReads(counting.calls), [], 'the checkpoint reads no data object');
    const out = ts.tmpPath('one-row.db');
    await exportTo(ts.ctx, { db: 'big', branch: 'main', checkpoint: 'one-row' }, out);
    assert.equal(query(out, 'SELECT hex(b) FROM blobs ORDER BY id DESC LIMIT 1').trim(), '0102030405');
  });

  it('a second checkout of a clean checkout reads no data object and leaves the file alone', async () => {
    const first = await checkout(ts.ctx, { db: 'big', branch: 'main' });
    const before = statSync(first.path, { bigint: true });
    counting.reset();
    const again = await checkout(ts.ctx, { db: 'big', branch: 'main' });
    assert.equal(again.reused, true);
    assert.equal(again.path, first.path);
    assert.deepEqual(counting.reads('data/'), [], 'no data/ object is read');
    assert.deepEqual(
      counting.calls.filter((c) => c.op !== 'get' && c.op !== 'list'),
      [],
      'and nothing is written',
    );
    const afterStat = statSync(first.path, { bigint: true });
    assert.equal(afterStat.ino, before.ino, 'same inode');
    assert.equal(afterStat.mtimeNs, before.mtimeNs, 'same mtime');
    assert.equal(afterStat.ctimeNs, before.ctimeNs, 'not even its metadata changed');
  });

  it('a fork of a clean, checked-out 20 MB source costs the same as one with no checkout', async () => {
    const withCheckout = await measuredFork('big', 'f2');
    const without = await measuredFork('small', 'f2');
    assertSharedForkCost(withCheckout, 'big', 'f2');
    assert.deepEqual(
      withCheckout.map((c) => c.op),
      without.map((c) => c.op),
    );
  });

  it('a repeated read-only checkpoint checkout reads the branch ref and nothing else', async () => {
    const first = await checkoutAt(ts.ctx, { db: 'big', branch: 'main' }, 'one-row');
    assert.equal(first.cached, false);
    counting.reset();
    const again = await checkoutAt(ts.ctx, { db: 'big', branch: 'main' }, 'one-row');
    assert.equal(again.cached, true);
    assert.equal(again.path, first.path);
    // The ref says whether the file still holds the checkpoint of that name (a later one may share it).
    assert.deepEqual(
      counting.calls.map((c) => c.key),
      ['refs/big/main'],
    );
  });

  it('status reads refs only, never a data object', async () => {
    counting.reset();
    const report = await status(ts.ctx);
    assert.ok(report.branches.length >= 6);
    assert.deepEqual(counting.reads('data/'), []);
    assert.ok(
      counting.calls.every((c) => c.key.startsWith('refs/')),
      `status touches only refs/: ${JSON.stringify(counting.calls.filter((c) => !c.key.startsWith('refs/')))}`,
    );
    const big = report.branches.find((b) => b.db === 'big' && b.branch === 'main');
    assert.equal(big?.state, 'idle');
    assert.equal(big?.checkedOut, true);
  });

  it('whole-store status lists refs/ once and reads each ref once', async () => {
    counting.reset();
    const report = await status(ts.ctx);
    assert.deepEqual(
      counting.of('list').map((c) => c.key),
      ['refs/'],
    );
    const read = counting.reads('refs/').map((c) => c.key);
    assert.equal(new Set(read).size, read.length, `a ref read twice: ${read.join(' ')}`);
    assert.deepEqual([...read].sort(), report.branches.map((b) => `refs/${b.db}/${b.branch}`).sort());
  });

  it("status of one database lists and reads only that database's refs, once each", async () => {
    counting.reset();
    const report = await status(ts.ctx, { db: 'small' });
    assert.ok(report.branches.length >= 2);
    assert.deepEqual(
      counting.of('list').map((c) => c.key),
      ['refs/small/'],
    );
    assert.deepEqual(
      counting.reads().map((c) => c.key),
      report.branches.map((b) => `refs/small/${b.branch}`),
    );
  });

  it('under a limit, every ref is still read once, so the count of the rest is exact', async () => {
    counting.reset();
    const report = await status(ts.ctx, { limit: 1 });
    assert.equal(report.branches.length, 1);
    assert.equal(report.truncated, true);
    const read = counting.reads('refs/').map((c) => c.key);
    assert.equal(new Set(read).size, read.length, `a ref read twice: ${read.join(' ')}`);
    assert.equal(report.more, read.length - 1);
    assert.ok(counting.calls.every((c) => c.key.startsWith('refs/')));
  });
});

describe('chains stay bounded', () => {
  for (const layout of [2, 3])
    it(`forks of forks, each writing, never resolve through more members than the floors allow (layout ${layout})`, async () => {
      const ts = await openTestStore({ forkFloor: 4, snapshotEvery: 4, layout });
      try {
        await create(ts.ctx, 'deep');
        const resolver = () => new ChainResolver(ts.store);
        let parent = 'main';
        let longest = 0;
        let deepest = 0;
        for (let gen = 0; gen < 24; gen++) {
          const co = await checkout(ts.ctx, { db: 'deep', branch: parent });
          runSql(
            co.path,
            `CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, g INTEGER); INSERT INTO t(g) VALUES (${gen});`,
          );
          await checkpoint(ts.ctx, { db: 'deep', branch: parent }, `g${gen}`);
          // As `offshoot checkpoint` does once it has reported: the chain it grew is compacted back to the soft bound.
          await compactBranch(ts.ctx, 'deep', parent);
          const child = `gen${gen}`;
          await fork(ts.ctx, { db: 'deep', branch: parent }, child);
          for (const branch of [parent, child]) {
            const { ref } = await ts.store.getRef('deep', branch);
            const chain = await resolver().resolve(ref.lineage, ref.head_txid);
            longest = Math.max(longest, chain.members.length);
            deepest = Math.max(deepest, chain.spine.length);
            assert.ok(chain.members.length <= 4, `generation ${gen}, ${branch}: ${chain.members.length} members`);
            assert.ok(chain.spine.length <= 4, `generation ${gen}, ${branch}: spine of ${chain.spine.length} lineages`);
          }
          parent = child;
        }
        // Merged segments keep members within the bound; each generation deepens the spine until the floor cuts it.
        // Below layout 3 a snapshot at the head bounds the members, and cuts the spine with them.
        assert.ok(longest <= 4);
        if (layout === 3) assert.equal(deepest, 4, 'the spine reaches the floor, so the floor is what keeps it');
        const out = ts.tmpPath('deep.db');
        await exportTo(ts.ctx, { db: 'deep', branch: parent }, out);
        assert.equal(
          query(out, 'SELECT group_concat(g) FROM t').trim(),
          Array.from({ length: 24 }, (_, i) => i).join(','),
        );
      } finally {
        await ts.cleanup();
      }
    });

  it('repeated rollbacks to one checkpoint keep the base spine one hop deep', async () => {
    const ts = await openTestStore();
    try {
      await create(ts.ctx, 'rb');
      const co = await checkout(ts.ctx, { db: 'rb', branch: 'main' });
      runSql(co.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO t(v) VALUES (0);');
      await checkpoint(ts.ctx, { db: 'rb', branch: 'main' }, 'good');
      const original = (await ts.store.getRef('rb', 'main')).ref.lineage;
      for (let i = 1; i <= 6; i++) {
        runSql(co.path, `INSERT INTO t(v) VALUES (${i});`);
        await checkpoint(ts.ctx, { db: 'rb', branch: 'main' }, `bad${i}`);
        const r = await rollback(ts.ctx, { db: 'rb', branch: 'main' }, 'good');
        assert.equal(r.mode, 'shared');
        const { ref } = await ts.store.getRef('rb', 'main');
        assert.deepEqual(
          ref.base,
          { lineage: original, txid: 2 },
          `rollback ${i} points straight at the original lineage`,
        );
        const chain = await new ChainResolver(ts.store).resolve(ref.lineage, ref.head_txid);
        assert.deepEqual(chain.spine, [ref.lineage, original]);
      }
      assert.equal(query(co.path, 'SELECT count(*) FROM t').trim(), '1');
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a fork of a branch with a long history', () => {
  it('lists the lineages it resolves by key alone, never with sizes (a stat per object on the local backend)', async () => {
    const listings: Array<{ op: string; prefix: string }> = [];
    const ts = await openTestStore({
      wrap: (b) =>
        new Proxy(b, {
          get(target, prop, receiver) {
            const v: unknown = Reflect.get(target, prop, receiver);
            if (typeof v !== 'function') return v;
            if (prop !== 'list' && prop !== 'listKeys') return v.bind(target);
            return (prefix: string) => {
              listings.push({ op: prop, prefix });
              return v.call(target, prefix);
            };
          },
        }),
    });
    try {
      const main = { db: 'hist', branch: 'main' };
      await create(ts.ctx, 'hist');
      const co = await checkout(ts.ctx, main);
      runSql(co.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER);');
      for (let i = 0; i < 6; i++) {
        runSql(co.path, `INSERT INTO t(v) VALUES (${i});`);
        await checkpoint(ts.ctx, main, `c${i}`);
      }
      const { ref } = await ts.store.getRef('hist', 'main');
      const sized = await ts.store.listLineage(ref.lineage);
      const keyed = await ts.store.listLineage(ref.lineage, { sizes: false });
      assert.ok(sized.length >= 6, `the lineage holds its history: ${sized.length} objects`);
      assert.deepEqual(
        keyed.map((o) => o.key),
        sized.map((o) => o.key),
      );
      assert.ok(keyed.every((o) => o.size === undefined) && sized.every((o) => (o.size ?? 0) > 0));
      listings.length = 0;
      const r = await fork(ts.ctx, main, 'child');
      assert.equal(r.mode, 'shared');
      const data = listings.filter((l) => l.prefix.startsWith('data/'));
      assert.ok(data.length > 0, 'the fork lists the chain it depends on');
      assert.deepEqual(
        data.filter((l) => l.op !== 'listKeys'),
        [],
        'no listing of data/ with sizes',
      );
      const child = await checkout(ts.ctx, { db: 'hist', branch: 'child' });
      assert.equal(query(child.path, 'SELECT group_concat(v) FROM t').trim(), '0,1,2,3,4,5');
    } finally {
      await ts.cleanup();
    }
  });
});
