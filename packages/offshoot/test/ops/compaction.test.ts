// Level compaction: merged segments keep every chain bounded while a branch diverges for ever, each flush paying
// for the pages it changed. Asserted by the chains resolved and the bytes and objects written, never by time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { type DataObject, parseDataKey } from '../../src/core/keys.js';
import { databaseChecksum } from '../../src/ltx/checksum.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { compactBranch, compactChain, MAX_CHAIN_MEMBERS, planMerge } from '../../src/ops/helpers/chain/chain-writer.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import { Store } from '../../src/store/store.js';
import { runGc } from '../../src/ops/gc.js';
import { acquireLease, releaseLease } from '../../src/ops/lease.js';
import { exportTo } from '../../src/ops/export.js';
import { upgrade } from '../../src/ops/upgrade.js';
import type { OpsContext } from '../../src/ops/helpers/context/context.js';
import type { Target } from '../../src/core/target.js';
import { MergeGate } from './merge-gate.js';
import { exportDump, openTestStore, type TestStore } from './harness.js';
import { dump, query, runSql } from './sqlite-cli.js';

const MiB = 1024 * 1024;
// The rows the race test writes, and their neighbours.
const ROWS = 'SELECT id, hex(b) FROM blobs WHERE id BETWEEN 195 AND 305 ORDER BY id';

const isMerged = (key: string): boolean => {
  const d = parseDataKey(key);
  return d !== undefined && d.kind === 'segment' && d.minTxid < d.maxTxid;
};

function obj(lineage: string, min: number, max: number): DataObject {
  return {
    key: `${lineage}-${min}-${max}`,
    lineage,
    epoch: 1,
    kind: min === 1 ? 'snapshot' : 'segment',
    minTxid: min,
    maxTxid: max,
  };
}

/** Replays n flushes through planMerge alone: returns the longest chain and the txids rewritten by merges. */
function simulate(n: number, bound: number): { longest: number; rewritten: number } {
  let chain: DataObject[] = [obj('a', 1, 1)];
  let longest = 1;
  let rewritten = 0;
  for (let t = 2; t <= n + 1; t++) {
    chain.push(obj('a', t, t));
    const run = planMerge(chain, bound);
    if (run) {
      const first = run[0] as DataObject;
      rewritten += t - first.minTxid + 1;
      chain = [...chain.slice(0, chain.length - run.length), obj('a', first.minTxid, t)];
    }
    longest = Math.max(longest, chain.length);
  }
  return { longest, rewritten };
}

describe('the merge policy', () => {
  it('keeps any chain within its bound and rewrites each txid O(log n) times', () => {
    for (const bound of [2, 3, 4, 8]) {
      for (const n of [1, 7, 100, 1000, 5000]) {
        const { longest, rewritten } = simulate(n, bound);
        assert.ok(longest <= bound, `bound ${bound}, ${n} flushes: ${longest} members`);
        if (bound === MAX_CHAIN_MEMBERS)
          assert.ok(rewritten <= n * (Math.log2(n + 1) + 1), `${n} flushes rewrote ${rewritten} txids`);
      }
    }
  });

  it('never merges the snapshot, and merges a parent lineage’s members into the child only as a whole', () => {
    const chain = [obj('p', 1, 1), obj('p', 2, 5), obj('p', 6, 6), obj('c', 7, 7)];
    assert.equal(planMerge(chain, 8), undefined, 'a chain within its bound is left alone');
    assert.deepEqual(
      planMerge(chain, 3)?.map((m) => m.key),
      ['p-6-6', 'c-7-7'],
    );
    assert.equal(planMerge([obj('p', 1, 9), obj('c', 10, 10)], 2), undefined);
  });
});

async function headChain(ts: TestStore, branch: string, db = 'big'): Promise<DataObject[]> {
  const { ref } = await ts.store.getRef(db, branch);
  return (await new ChainResolver(ts.store).resolve(ref.lineage, ref.head_txid)).members;
}

async function exportQuery(ts: TestStore, t: Target, ctx: OpsContext): Promise<string> {
  const out = ts.tmpPath('export.db');
  await exportTo(ctx, t, out, { force: true });
  return query(out, ROWS);
}

/** A database of about `bytes` of incompressible rows, one row a page or so. */
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

describe('merged segments', () => {
  it('are written only once the store is upgraded, and reproduce every state across shrinks and regrowth', async () => {
    // A cadence of 3 bounds chains at 2 members, so nearly every checkpoint compacts.
    const ts = await openTestStore({ snapshotEvery: 3, layout: 2 });
    try {
      await create(ts.ctx, 'app');
      assert.equal(ts.store.layoutVersion, 2, 'a store made at the earlier implementation’s layout');
      const co = await checkout(ts.ctx, { db: 'app', branch: 'main' });
      const steps = [
        'CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) SELECT hex(randomblob(600)) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<300) SELECT x FROM c);',
        'DELETE FROM t WHERE id > 20; VACUUM;',
        "INSERT INTO t(v) VALUES ('after the shrink');",
        "INSERT INTO t(v) SELECT hex(randomblob(300)) FROM t; UPDATE t SET v = 'x' WHERE id = 3;",
        'DELETE FROM t WHERE id % 2 = 0; VACUUM;',
        'CREATE TABLE u(x); INSERT INTO u VALUES (zeroblob(20000));',
        'DROP TABLE u; VACUUM;',
      ];
      const expected = new Map<string, string>();
      const write = async (round: string) => {
        for (const [i, s] of steps.entries()) {
          runSql(co.path, s);
          await checkpoint(ts.ctx, { db: 'app', branch: 'main' }, `${round}${i}`);
          await compactBranch(ts.ctx, 'app', 'main');
          expected.set(`${round}${i}`, dump(co.path));
        }
      };
      const manifest = async () =>
        JSON.parse((await ts.store.backend.get('offshoot.json')).body.toString('utf8')).layout_version;
      await write('a');
      let keys = (await ts.store.backend.list('data/')).map((o) => o.key);
      assert.deepEqual(keys.filter(isMerged), [], 'below layout 3 no merged segment is written');
      assert.equal(await manifest(), 2, 'and the layout is never raised unasked');
      assert.ok((await headChain(ts, 'main', 'app')).length <= 3, 'snapshots at the head keep the chain bounded');

      // Another process upgrades the store: this one reads the new layout before it next compacts.
      const other = await Store.open(ts.spec, { probe: false });
      try {
        const up = await upgrade(makeContext(other, ts.tmpPath('other'), { now: ts.clock.now }));
        assert.deepEqual([up.from, up.to, up.upgraded], [2, 3, true]);
      } finally {
        await other.close();
      }
      assert.equal(ts.store.layoutVersion, 2, 'this process has not read the manifest again yet');
      await write('b');
      keys = (await ts.store.backend.list('data/')).map((o) => o.key);
      assert.ok(keys.some(isMerged), `once upgraded, merged segments are written: ${keys.join(' ')}`);
      assert.equal(await manifest(), 3);
      const { ref } = await ts.store.getRef('app', 'main');
      const chain = await new ChainResolver(ts.store).resolve(ref.lineage, ref.head_txid);
      assert.ok(
        chain.members.some((m) => isMerged(m.key)),
        'the head resolves through a merged segment',
      );
      const cold = makeContext(ts.store, ts.tmpPath('cold'), { now: ts.clock.now });
      for (const [name, want] of expected)
        assert.equal(await exportDump(ts, { db: 'app', branch: 'main', checkpoint: name }, cold), want, name);
      assert.equal(await exportDump(ts, { db: 'app', branch: 'main' }, cold), expected.get(`b${steps.length - 1}`));
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a merged segment of a fork', () => {
  it('may reach below its base pointer, and the base lineage then continues just below it', async () => {
    const ts = await openTestStore({ snapshotEvery: 4, layout: 3 });
    try {
      await create(ts.ctx, 'app');
      const main = await checkout(ts.ctx, { db: 'app', branch: 'main' });
      runSql(main.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);');
      await checkpoint(ts.ctx, { db: 'app', branch: 'main' }, 'schema');
      for (let i = 0; i < 2; i++) {
        runSql(main.path, `INSERT INTO t(v) VALUES ('main ${i}');`);
        await checkpoint(ts.ctx, { db: 'app', branch: 'main' }, `m${i}`);
      }
      await fork(ts.ctx, { db: 'app', branch: 'main' }, 'kid');
      const kid = await checkout(ts.ctx, { db: 'app', branch: 'kid' });
      const dumps = new Map<string, string>();
      for (let i = 0; i < 4; i++) {
        runSql(kid.path, `INSERT INTO t(v) VALUES ('kid ${i}');`);
        await checkpoint(ts.ctx, { db: 'app', branch: 'kid' }, `k${i}`);
        dumps.set(`k${i}`, dump(kid.path));
      }
      const { ref } = await ts.store.getRef('app', 'kid');
      const base = ref.base;
      assert.ok(base, 'the fork is shared');
      const chain = await new ChainResolver(ts.store).resolve(ref.lineage, ref.head_txid);
      const own = chain.members.filter((m) => m.lineage === ref.lineage);
      assert.ok(
        own.some((m) => isMerged(m.key) && m.minTxid <= base.txid),
        `a merge of the fork reaches below its base pointer at ${base.txid}: ${chain.members.map((m) => m.key).join(' ')}`,
      );
      assert.ok(chain.members.length <= 3);
      const cold = makeContext(ts.store, ts.tmpPath('cold'), { now: ts.clock.now });
      for (const [name, want] of dumps)
        assert.equal(await exportDump(ts, { db: 'app', branch: 'kid', checkpoint: name }, cold), want, name);
      assert.equal(await exportDump(ts, { db: 'app', branch: 'kid', checkpoint: 'fork' }, cold), dump(main.path));
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a branch that diverges for ever', () => {
  let ts: TestStore;
  let counting: MergeGate;
  const FLUSHES = 100;

  before(async () => {
    ts = await openTestStore({ layout: 3, wrap: (b) => (counting = new MergeGate(b)) });
    const src = ts.tmpPath('src.db');
    makeDatabase(src, 4 * MiB);
    await create(ts.ctx, 'big', { from: src });
  });
  after(async () => ts.cleanup());

  const dataPuts = (from: number) =>
    counting.calls.slice(from).filter((c) => c.op === 'put' && parseDataKey(c.key) !== undefined);

  it('pays O(changed pages) per checkpoint, merges after it, and resolves through at most 8 members', async (tc) => {
    await fork(ts.ctx, { db: 'big', branch: 'main' }, 'agent');
    const t = { db: 'big', branch: 'agent' };
    const co = await checkout(ts.ctx, t);
    let headBytes = 0;
    let longest = 0;
    let worst = 0;
    const pagesAt = new Map<number, number>();
    counting.reset();
    for (let i = 0; i < FLUSHES; i++) {
      // A single-row update somewhere in the table: about one leaf page.
      runSql(co.path, `UPDATE blobs SET b = randomblob(1000) WHERE id = ${1 + ((i * 2654435761) % 4000)};`);
      let before = counting.calls.length;
      const r = await checkpoint(ts.ctx, t, `c${i}`);
      assert.equal(r.kind, 'segment', `checkpoint ${i} writes a segment, never a snapshot`);
      assert.equal(r.merged, undefined, `checkpoint ${i} never merges inline while merges keep up`);
      headBytes += r.bytes;
      // The checkpoint itself writes its own segment and nothing else.
      const own = dataPuts(before);
      assert.equal(own.length, 1, `checkpoint ${i} wrote ${own.length} objects`);
      assert.equal(own[0]?.bytes, r.bytes);
      assert.ok(r.bytes <= 4 * 4096 + 1024, `checkpoint ${i}'s own segment is ${r.bytes} bytes for one row`);
      worst = Math.max(worst, (own[0]?.bytes ?? 0) / (r.pages * 4096));
      pagesAt.set(r.txid, r.pages);
      // What the CLI does once the checkpoint is reported: at most one merge, of no more pages than it replaces.
      before = counting.calls.length;
      const c = await compactBranch(ts.ctx, t.db, t.branch);
      const merges = dataPuts(before);
      assert.equal(merges.length, c?.merged ? 1 : 0);
      if (c?.merged) {
        const m = c.merged.object;
        let changed = 0;
        for (let x = m.minTxid; x <= m.maxTxid; x++) changed += pagesAt.get(x) ?? Number.NaN;
        assert.ok(c.merged.pages <= changed, `merge ${m.minTxid}-${m.maxTxid}: ${c.merged.pages} > ${changed} pages`);
      }
      const { ref } = await ts.store.getRef('big', 'agent');
      longest = Math.max(
        longest,
        (await new ChainResolver(ts.store).resolve(ref.lineage, ref.head_txid)).members.length,
      );
    }
    const total = counting.of('put', 'data/').reduce((a, c) => a + (c.bytes ?? 0), 0);
    // Binary-counter merges rewrite each flush's pages a few times (about 3 here).
    assert.ok(total <= 10 * headBytes, `total ${total} bytes for ${headBytes} bytes of head segments`);
    // The depth-floor cadence this replaces wrote a full snapshot every 16 checkpoints: six of the database here.
    assert.ok(total < 4 * MiB, `100 one-row checkpoints of a 4 MB branch wrote ${total} bytes, a snapshot's worth`);
    assert.ok(longest <= MAX_CHAIN_MEMBERS, `the chain reached ${longest} members`);
    tc.diagnostic(
      `${FLUSHES} checkpoints: head segments ${headBytes} B, all writes ${total} B, longest chain ${longest}, largest checkpoint ${worst.toFixed(2)}x the pages it changed`,
    );

    counting.reset();
    const cold = makeContext(ts.store, ts.tmpPath('cold'), { now: ts.clock.now });
    const again = await checkout(cold, t);
    const applied = counting.reads('data/').filter((c) => parseDataKey(c.key) !== undefined);
    assert.ok(applied.length <= MAX_CHAIN_MEMBERS, `a cold checkout applied ${applied.length} members`);
    assert.equal((await databaseChecksum(again.path)).checksum, (await databaseChecksum(co.path)).checksum);
  });

  it('with no merge run after the writes, the writer merges inline at the hard bound', async () => {
    await fork(ts.ctx, { db: 'big', branch: 'main' }, 'lazy');
    const t = { db: 'big', branch: 'lazy' };
    const co = await checkout(ts.ctx, t);
    let inline = 0;
    let length = 0;
    // Until the writer has merged inline and the chain is again past the soft bound, for the catch-up below.
    for (let i = 0; i < 60 && (inline === 0 || length <= MAX_CHAIN_MEMBERS - 2); i++) {
      runSql(co.path, `UPDATE blobs SET b = randomblob(1000) WHERE id = ${100 + i};`);
      const { ref } = await ts.store.getRef('big', 'lazy');
      const below = (await new ChainResolver(ts.store).resolve(ref.lineage, ref.head_txid)).members.length;
      const r = await checkpoint(ts.ctx, t, `l${i}`);
      // Only a chain already at the bound is merged by the writer; every other checkpoint writes its segment alone.
      assert.equal(r.merged !== undefined, below === MAX_CHAIN_MEMBERS, `checkpoint ${i} on ${below} members`);
      if (r.merged) inline++;
      length = (await headChain(ts, 'lazy')).length;
      assert.ok(length <= MAX_CHAIN_MEMBERS, `checkpoint ${i}: ${length} members`);
    }
    assert.ok(inline > 0);
    // A branch under someone's live lease is left to its holder (a session merges its own chain).
    const holder = ts.context({ holder: 'daemon-host/9' });
    await acquireLease(holder, t, '1h');
    const before = counting.calls.length;
    assert.equal(await compactBranch(ts.ctx, t.db, t.branch), undefined);
    assert.equal(dataPuts(before).length, 0);
    await releaseLease(holder, t);
    const c = await compactBranch(ts.ctx, t.db, t.branch);
    assert.ok(c?.merged, 'the background merge catches up');
    assert.ok((await headChain(ts, 'lazy')).length <= MAX_CHAIN_MEMBERS - 2);
    const cold = makeContext(ts.store, ts.tmpPath('cold-lazy'), { now: ts.clock.now });
    assert.equal(
      (await databaseChecksum((await checkout(cold, t)).path)).checksum,
      (await databaseChecksum(co.path)).checksum,
    );
  });

  it('a merge racing checkpoints on the same branch loses nothing, and neither do they', async () => {
    await fork(ts.ctx, { db: 'big', branch: 'main' }, 'racer');
    const t = { db: 'big', branch: 'racer' };
    const co = await checkout(ts.ctx, t);
    const dumps = new Map<string, string>();
    const write = async (name: string, id: number) => {
      runSql(co.path, `UPDATE blobs SET b = randomblob(1000) WHERE id = ${id};`);
      const r = await checkpoint(ts.ctx, t, name);
      dumps.set(name, query(co.path, ROWS));
      return r;
    };
    // Seven members: one past the soft bound, one below the hard one.
    for (let i = 0; i < 6; i++) await write(`r${i}`, 200 + i);
    const pre = await headChain(ts, 'racer');
    assert.equal(pre.length, MAX_CHAIN_MEMBERS - 1);
    const { ref: at } = await ts.store.getRef('big', 'racer');
    const held = counting.holdNextMerge();
    const merging = compactBranch(ts.ctx, t.db, t.branch);
    const key = await held.entered;
    // While the merge is in flight a checkpoint lands above its head: it writes its own segment, no merge.
    const r = await write('during', 300);
    assert.equal(r.merged, undefined);
    assert.equal((await headChain(ts, 'racer')).length, MAX_CHAIN_MEMBERS);
    held.release();
    const c = await merging;
    assert.equal(c?.merged?.object.key, key);
    const chain = await headChain(ts, 'racer');
    assert.deepEqual(
      chain.slice(-2).map((m) => m.key),
      [key, chain.at(-1)?.key],
      'the merged segment sits right under the checkpoint that raced it',
    );
    assert.equal(chain.at(-1)?.maxTxid, r.txid);
    // A second merge of the same span (another process's, say) finds its key taken by an equal object.
    const again = await compactChain(ts.ctx, 'big', at.lineage, at.head_txid, at.epoch, pre);
    assert.equal(again.merged?.object.key, key);
    await write('after', 301);
    await runGc(ts.ctx, { grace: 0n });
    await runGc(ts.ctx, { grace: 0n });
    const cold = makeContext(ts.store, ts.tmpPath('cold-racer'), { now: ts.clock.now });
    for (const [name, want] of dumps) {
      const got = await exportQuery(ts, { ...t, checkpoint: name }, cold);
      assert.equal(got, want, `checkpoint ${name}`);
    }
  });
});
