// A live session on a branch that diverges for ever: every flush writes the pages it changed, merged segments keep
// the chain bounded, and a merge that fails at any point costs a longer chain, never data. Counted, never timed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { type DataObject, parseDataKey } from '../../src/core/keys.js';
import { fail } from '../../src/core/errors.js';
import { databaseChecksum } from '../../src/ltx/checksum.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { runGc } from '../../src/ops/gc.js';
import { MAX_CHAIN_MEMBERS } from '../../src/ops/helpers/chain/chain-writer.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { Session } from '../../src/session/session.js';
import type { Body, PutCondition } from '../../src/store/backend.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import { MergeGate } from '../ops/merge-gate.js';
import { openTestStore, type TestStore } from '../ops/harness.js';
import { query, runSql } from '../ops/sqlite-cli.js';

const MiB = 1024 * 1024;

const isMerged = (key: string): boolean => {
  const d = parseDataKey(key);
  return d !== undefined && d.kind === 'segment' && d.minTxid < d.maxTxid;
};

/** A merge gate whose puts of merged segments fail while `failMerges` is set, as a crash before them would. */
class MergeFaults extends MergeGate {
  failMerges = false;
  override async put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    if (this.failMerges && isMerged(key)) throw fail('IO', `injected failure writing ${key}`);
    return super.put(key, body, cond);
  }
}

const ROWS = 'SELECT id, hex(substr(b, 1, 12)), length(b) FROM blobs ORDER BY id';

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

async function headChain(ts: TestStore, branch: string): Promise<DataObject[]> {
  const { ref } = await ts.store.getRef('big', branch);
  return (await new ChainResolver(ts.store).resolve(ref.lineage, ref.head_txid)).members;
}

describe('session flushes on a diverging branch', () => {
  let ts: TestStore;
  let faults: MergeFaults;

  before(async () => {
    ts = await openTestStore({ layout: 3, wrap: (b) => (faults = new MergeFaults(b)) });
    const src = ts.tmpPath('src.db');
    makeDatabase(src, 3 * MiB);
    await create(ts.ctx, 'big', { from: src });
  });
  after(async () => ts.cleanup());

  it('100 one-row flushes write O(changed pages), merge after answering, and stay within 8 members', async (tc) => {
    await fork(ts.ctx, { db: 'big', branch: 'main' }, 'agent');
    const live = ts.context({ now: () => new Date(), holder: 'daemon-host/1' });
    const session = await Session.open(live, { db: 'big', branch: 'agent' }, {});
    let headBytes = 0;
    let longest = 0;
    let worst = 0;
    try {
      faults.reset();
      for (let i = 0; i < 100; i++) {
        runSql(session.path, `UPDATE blobs SET b = randomblob(1000) WHERE id = ${1 + ((i * 7919) % 3000)};`);
        const before = faults.calls.length;
        const out = await session.flush({ kind: 'manual' });
        assert.equal(out.kind, 'segment', `flush ${i} writes a segment`);
        headBytes += out.bytes ?? 0;
        // The flush writes its head and nothing else: the merge it triggers runs once it has answered.
        const puts = faults.calls.slice(before).filter((c) => c.op === 'put' && parseDataKey(c.key) !== undefined);
        assert.deepEqual(
          puts.map((c) => isMerged(c.key)),
          [false],
          `flush ${i}: one head object`,
        );
        assert.ok((out.bytes ?? 0) <= 4 * 4096 + 1024, `flush ${i}'s own segment is ${out.bytes} bytes for one row`);
        worst = Math.max(worst, puts.reduce((a, c) => a + (c.bytes ?? 0), 0) / 4096);
        longest = Math.max(longest, (await headChain(ts, 'agent')).length);
        await session.merged();
        longest = Math.max(longest, (await headChain(ts, 'agent')).length);
      }
      await session.flush({ kind: 'manual' });
      const total = faults.of('put', 'data/').reduce((a, c) => a + (c.bytes ?? 0), 0);
      const merges = faults.of('put', 'data/').filter((c) => isMerged(c.key)).length;
      tc.diagnostic(
        `100 flushes: head segments ${headBytes} B, all writes ${total} B, ${merges} merges, largest flush ${worst.toFixed(2)} pages' worth`,
      );
      assert.ok(merges > 0);
      assert.ok(total <= 10 * headBytes, `total ${total} bytes for ${headBytes} bytes of head segments`);
      assert.ok(longest <= MAX_CHAIN_MEMBERS - 1, `the chain reached ${longest} members`);
    } finally {
      await session.close();
    }
    const cold = makeContext(ts.store, ts.tmpPath('cold'), { now: ts.clock.now });
    const co = await checkout(cold, { db: 'big', branch: 'agent' });
    assert.equal(query(co.path, ROWS), query(session.path, ROWS), 'a cold checkout reproduces the session checkout');
  });

  it('flushes land while a merge is in flight; at the hard bound the next one waits for it', async () => {
    await fork(ts.ctx, { db: 'big', branch: 'main' }, 'racer');
    const live = ts.context({ now: () => new Date(), holder: 'daemon-host/2' });
    const session = await Session.open(live, { db: 'big', branch: 'racer' }, {});
    const flush = async (id: number) => {
      runSql(session.path, `UPDATE blobs SET b = randomblob(1000) WHERE id = ${id};`);
      return session.flush({ kind: 'manual' });
    };
    try {
      // The snapshot and five segments: at the soft bound, so the next flush's merge is the one held.
      for (let i = 0; i < 5; i++) await flush(400 + i);
      await session.merged();
      assert.equal((await headChain(ts, 'racer')).length, MAX_CHAIN_MEMBERS - 2);
      const held = faults.holdNextMerge();
      const grew = await flush(500);
      const key = await held.entered;
      const planned = parseDataKey(key) as DataObject;
      assert.equal(planned.maxTxid, grew.txid, 'the merge is planned at the head that grew the chain');
      // One flush lands above the merge in flight without waiting for it (its head reaches the hard bound).
      const during = await flush(501);
      assert.equal(during.kind, 'segment');
      const listed = (await ts.store.backend.list('data/')).map((o) => o.key);
      assert.ok(!listed.includes(key), 'the merge has not landed yet');
      assert.equal((await headChain(ts, 'racer')).length, MAX_CHAIN_MEMBERS);
      // The next one would pass the bound: it waits for the merge, which lands under both flushes.
      const waiting = flush(502);
      held.release();
      const last = await waiting;
      const chain = await headChain(ts, 'racer');
      assert.ok(chain.length <= MAX_CHAIN_MEMBERS, `${chain.length} members`);
      assert.deepEqual(
        chain.slice(-3).map((m) => m.maxTxid),
        [planned.maxTxid, during.txid, last.txid],
        `the merged segment sits under the flushes that raced it: ${chain.map((m) => m.key).join(' ')}`,
      );
      assert.equal(chain.at(-3)?.key, key);
      await session.merged();
    } finally {
      await session.close();
    }
    await runGc(ts.ctx, { grace: 0n });
    await runGc(ts.ctx, { grace: 0n });
    const cold = makeContext(ts.store, ts.tmpPath('cold-racer'), { now: ts.clock.now });
    const co = await checkout(cold, { db: 'big', branch: 'racer' });
    assert.equal(query(co.path, ROWS), query(session.path, ROWS), 'nothing a flush wrote was dropped');
  });

  it('a merge that fails at any point loses nothing and is made by the next write', async () => {
    await fork(ts.ctx, { db: 'big', branch: 'main' }, 'faulty');
    const t = { db: 'big', branch: 'faulty' };
    const co = await checkout(ts.ctx, t);
    faults.failMerges = true;
    const warnings: string[] = [];
    const ctx = ts.context({ warn: (m) => warnings.push(m) });
    // The ninth member is one past the bound: from then on every checkpoint tries to merge, and fails.
    for (let i = 0; i < 9; i++) {
      runSql(co.path, `UPDATE blobs SET b = randomblob(1000) WHERE id = ${10 + i};`);
      const r = await checkpoint(ctx, t, `f${i}`);
      assert.equal(r.merged, undefined);
    }
    assert.ok(
      warnings.some((w) => /chain not compacted/.test(w)),
      'the failed merge is reported',
    );
    const unmerged = await headChain(ts, 'faulty');
    assert.equal(unmerged.length, 10, 'the snapshot and nine segments: longer, and complete');
    await runGc(ts.ctx, { grace: 0n });
    await runGc(ts.ctx, { grace: 0n });
    const want = (await databaseChecksum(co.path)).checksum;
    const cold = makeContext(ts.store, ts.tmpPath('cold-faulty'), { now: ts.clock.now });
    assert.equal((await databaseChecksum((await checkout(cold, t)).path)).checksum, want);

    faults.failMerges = false;
    runSql(co.path, 'UPDATE blobs SET b = randomblob(1000) WHERE id = 99;');
    const r = await checkpoint(ctx, t, 'healed');
    assert.ok(r.merged, 'the next checkpoint merges');
    const merged = await headChain(ts, 'faulty');
    assert.ok(merged.length < unmerged.length && merged.some((m) => isMerged(m.key)));
    await runGc(ts.ctx, { grace: 0n });
    await runGc(ts.ctx, { grace: 0n });
    const cold2 = makeContext(ts.store, ts.tmpPath('cold-healed'), { now: ts.clock.now });
    assert.equal(
      (await databaseChecksum((await checkout(cold2, t)).path)).checksum,
      (await databaseChecksum(co.path)).checksum,
    );
    const cp = makeContext(ts.store, ts.tmpPath('cold-f2'), { now: ts.clock.now });
    const { ref } = await ts.store.getRef('big', 'faulty');
    const at = await new ChainResolver(cp.store).resolve(ref.lineage, ref.checkpoints.f2?.txid ?? 0);
    assert.ok(at.members.length >= 2, 'a checkpoint inside the merged span still resolves through its own members');
  });
});
