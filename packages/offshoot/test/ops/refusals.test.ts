// Every verb's refusals carry the right code, and a refused call leaves the store exactly as it was.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseTtl } from '../../src/core/duration.js';
import type { ErrorCode } from '../../src/core/errors.js';
import type { Meta } from '../../src/core/meta.js';
import { parseTarget } from '../../src/core/target.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkoutAt } from '../../src/ops/checkout-at.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { exportTo } from '../../src/ops/export.js';
import { fork } from '../../src/ops/fork.js';
import { acquireLease, releaseLease } from '../../src/ops/lease.js';
import { promote } from '../../src/ops/promote.js';
import { reap } from '../../src/ops/reap.js';
import { rollback } from '../../src/ops/rollback.js';
import { touch } from '../../src/ops/touch.js';
import { setProtected } from '../../src/ops/protect.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import { readTombstones, writeTombstones } from '../../src/store/tombstones.js';
import { holdWriteTransaction } from './busy-writer.js';
import { exportDump, openTestStore, rejectsCode, storeSnapshot, type TestStore } from './harness.js';
import { dump, runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };
const EXP = { db: 'app', branch: 'exp' };

/** app@main with table t and checkpoint `seed`, checked out; app@exp forked from it. */
async function seeded(ts: TestStore): Promise<string> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(co.path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('seed');");
  await checkpoint(ts.ctx, MAIN, 'seed');
  await fork(ts.ctx, MAIN, 'exp');
  return co.path;
}

/** Asserts p is refused with code and that the store is byte-for-byte what it was before. */
async function refusedCleanly(ts: TestStore, p: () => Promise<unknown>, code: ErrorCode): Promise<void> {
  const before = await storeSnapshot(ts.store);
  const err = await rejectsCode(p(), code);
  assert.ok(err.hint, `${code} refusal carries a hint: ${err.message}`);
  assert.deepEqual(await storeSnapshot(ts.store), before, `a ${code} refusal writes nothing to the store`);
}

function metaOf(n: number, key = (i: number) => `k${i}`, value = 'v'): Meta {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [key(i), value]));
}

const BAD_META: Array<[string, Meta]> = [
  ['33 keys', metaOf(33)],
  ['a 65-byte key', { ['k'.repeat(65)]: 'v' }],
  ['a 513-byte value', { k: 'v'.repeat(513) }],
  ['a multi-byte value over 512 bytes', { k: 'é'.repeat(257) }],
  ['an empty key', { '': 'v' }],
];
const EDGE_META: Meta = { ...metaOf(31), ['k'.repeat(64)]: 'v'.repeat(512) };

describe('refusals', () => {
  let ts: TestStore;
  let mainPath: string;
  before(async () => {
    ts = await openTestStore();
    mainPath = await seeded(ts);
  });
  after(async () => ts.cleanup());

  it('create: bad names, an existing database, an unreadable import', async () => {
    for (const bad of ['App', 'a/b', '..', 'a..b', '.', '', 'x'.repeat(129), 'sp ace', 'at@sign']) {
      await refusedCleanly(ts, () => create(ts.ctx, bad), 'INVALID_NAME');
    }
    await refusedCleanly(ts, () => create(ts.ctx, 'app'), 'ALREADY_EXISTS');
    await refusedCleanly(ts, () => create(ts.ctx, 'imported', { from: ts.tmpPath('missing.db') }), 'INVALID_ARGUMENT');
    const junk = ts.tmpPath('junk.db');
    writeFileSync(junk, 'this is not a database, just text padded out '.repeat(100));
    await refusedCleanly(ts, () => create(ts.ctx, 'imported', { from: junk }), 'INVALID_ARGUMENT');
  });

  it('targets: bad names and shapes', async () => {
    assert.throws(
      () => parseTarget('app@Main'),
      (e: unknown) => (e as { code?: string }).code === 'INVALID_NAME',
    );
    assert.throws(
      () => parseTarget('app@main@cp'),
      (e: unknown) => (e as { code?: string }).code === 'INVALID_ARGUMENT',
    );
    assert.throws(
      () => parseTarget('app@main@cp@x', { allowCheckpoint: true }),
      (e: unknown) => (e as { code?: string }).code === 'INVALID_ARGUMENT',
    );
  });

  it('checkout and export: missing branch, missing checkpoint, existing destination', async () => {
    await refusedCleanly(ts, () => checkout(ts.ctx, { db: 'app', branch: 'nope' }), 'NOT_FOUND');
    await refusedCleanly(ts, () => checkout(ts.ctx, { db: 'nodb', branch: 'main' }), 'NOT_FOUND');
    await refusedCleanly(ts, () => checkoutAt(ts.ctx, MAIN, 'nope'), 'NOT_FOUND');
    await refusedCleanly(ts, () => exportTo(ts.ctx, { ...MAIN, checkpoint: 'nope' }, ts.tmpPath('x.db')), 'NOT_FOUND');
    const dest = ts.tmpPath('exists.db');
    writeFileSync(dest, 'keep me');
    await refusedCleanly(ts, () => exportTo(ts.ctx, MAIN, dest), 'ALREADY_EXISTS');
    assert.equal(dump(dest).includes('seed'), false, 'the existing destination is untouched');
  });

  it('checkpoint: existing name, bad name, meta caps, no checkout, no branch', async () => {
    await refusedCleanly(ts, () => checkpoint(ts.ctx, MAIN, 'seed'), 'ALREADY_EXISTS');
    await refusedCleanly(ts, () => checkpoint(ts.ctx, MAIN, 'init'), 'ALREADY_EXISTS');
    await refusedCleanly(ts, () => checkpoint(ts.ctx, MAIN, 'Bad Name'), 'INVALID_NAME');
    runSql(mainPath, "INSERT INTO t(v) VALUES ('pending');");
    for (const [what, meta] of BAD_META) {
      await refusedCleanly(ts, () => checkpoint(ts.ctx, MAIN, `meta-${what.length}`, meta), 'INVALID_ARGUMENT');
    }
    await refusedCleanly(ts, () => checkpoint(ts.ctx, EXP, 'x'), 'NOT_FOUND');
    await refusedCleanly(ts, () => checkpoint(ts.ctx, { db: 'app', branch: 'nope' }, 'x'), 'NOT_FOUND');
    const ok = await checkpoint(ts.ctx, MAIN, 'edge-meta', EDGE_META);
    assert.equal(ok.kind, 'segment', 'meta at exactly the caps is accepted');
    assert.deepEqual({ ...(await ts.store.getRef('app', 'main')).ref.checkpoints['edge-meta']?.meta }, EDGE_META);
  });

  it('fork: existing child, missing source or checkpoint, bad name, meta caps, TTL none or not positive', async () => {
    await refusedCleanly(ts, () => fork(ts.ctx, MAIN, 'exp'), 'ALREADY_EXISTS');
    await refusedCleanly(ts, () => fork(ts.ctx, MAIN, 'main'), 'ALREADY_EXISTS');
    await refusedCleanly(ts, () => fork(ts.ctx, { db: 'app', branch: 'nope' }, 'x'), 'NOT_FOUND');
    await refusedCleanly(ts, () => fork(ts.ctx, { db: 'nodb', branch: 'main' }, 'x'), 'NOT_FOUND');
    await refusedCleanly(ts, () => fork(ts.ctx, MAIN, 'x', { at: 'nope' }), 'NOT_FOUND');
    await refusedCleanly(ts, () => fork(ts.ctx, MAIN, 'X'), 'INVALID_NAME');
    await refusedCleanly(ts, () => fork(ts.ctx, MAIN, 'a@b'), 'INVALID_NAME');
    for (const [, meta] of BAD_META)
      await refusedCleanly(ts, () => fork(ts.ctx, MAIN, 'x', { meta }), 'INVALID_ARGUMENT');
    assert.throws(
      () => parseTtl('none', { allowNone: false }),
      (e: unknown) => (e as { code?: string }).code === 'INVALID_ARGUMENT',
    );
    // One grammar: zero clears a TTL as none does (touch), but is no fork TTL; negatives are refused everywhere.
    for (const text of ['0', '0s']) assert.deepEqual(parseTtl(text), { kind: 'none' }, `--ttl ${text}`);
    for (const [text, opts] of [
      ['0', { fork: true }],
      ['0s', { fork: true, allowNone: true }],
      ['-1s', {}],
      ['-2h', { fork: true }],
    ] as const) {
      assert.throws(
        () => parseTtl(text, opts),
        (e: unknown) => (e as { code?: string }).code === 'INVALID_ARGUMENT',
        `--ttl ${text} ${JSON.stringify(opts)}`,
      );
    }
    await refusedCleanly(ts, () => fork(ts.ctx, MAIN, 'x', { ttl: { kind: 'none' } }), 'INVALID_ARGUMENT');
    await refusedCleanly(
      ts,
      () => fork(ts.ctx, MAIN, 'x', { ttl: parseTtl('0s', { allowZeroAsNone: true }) }),
      'INVALID_ARGUMENT',
    );
    await refusedCleanly(ts, () => fork(ts.ctx, MAIN, 'x', { ttl: { kind: 'set', ttl: 0n } }), 'INVALID_ARGUMENT');
    await refusedCleanly(
      ts,
      () => fork(ts.ctx, MAIN, 'x', { ttl: { kind: 'set', ttl: -1_000_000_000n } }),
      'INVALID_ARGUMENT',
    );
  });

  it('rollback: missing checkpoint or branch', async () => {
    await refusedCleanly(ts, () => rollback(ts.ctx, MAIN, 'nope'), 'NOT_FOUND');
    await refusedCleanly(ts, () => rollback(ts.ctx, { db: 'app', branch: 'nope' }, 'init'), 'NOT_FOUND');
  });

  it('promote: protected target without force, onto itself, missing source or target, bad name', async () => {
    await refusedCleanly(ts, () => promote(ts.ctx, EXP, 'main'), 'PROTECTED');
    await refusedCleanly(ts, () => promote(ts.ctx, EXP, 'main', { force: false }), 'PROTECTED');
    await refusedCleanly(ts, () => promote(ts.ctx, EXP, 'exp', { force: true }), 'INVALID_ARGUMENT');
    await refusedCleanly(ts, () => promote(ts.ctx, EXP, 'nope', { force: true }), 'NOT_FOUND');
    await refusedCleanly(ts, () => promote(ts.ctx, { db: 'app', branch: 'nope' }, 'exp'), 'NOT_FOUND');
    await refusedCleanly(ts, () => promote(ts.ctx, EXP, '..', { force: true }), 'INVALID_NAME');
  });

  it('compact, touch and destroy: missing branch; destroy of a protected branch without force', async () => {
    await refusedCleanly(ts, () => compact(ts.ctx, { db: 'app', branch: 'nope' }), 'NOT_FOUND');
    await refusedCleanly(ts, () => touch(ts.ctx, { db: 'app', branch: 'nope' }), 'NOT_FOUND');
    await refusedCleanly(ts, () => destroy(ts.ctx, { db: 'app', branch: 'nope' }), 'NOT_FOUND');
    await refusedCleanly(ts, () => destroy(ts.ctx, MAIN), 'PROTECTED');
    await refusedCleanly(ts, () => destroy(ts.ctx, MAIN, { force: false }), 'PROTECTED');
    await refusedCleanly(ts, () => releaseLease(ts.ctx, MAIN), 'NOT_FOUND');
  });

  it('touch during reaping is refused and changes nothing', async () => {
    await fork(ts.ctx, MAIN, 'reaped', { ttl: { kind: 'set', ttl: 1_000_000_000n } });
    await ts.store.updateRef('app', 'reaped', (r) => ({ ...r, reaping: true }));
    await refusedCleanly(ts, () => touch(ts.ctx, { db: 'app', branch: 'reaped' }), 'CAS_CONFLICT');
    await refusedCleanly(ts, () => touch(ts.ctx, { db: 'app', branch: 'reaped' }, { kind: 'none' }), 'CAS_CONFLICT');
    await ts.store.updateRef('app', 'reaped', (r) => ({
      ...r,
      deleting: true,
      deleting_at: ts.clock.now().toISOString(),
    }));
    await refusedCleanly(ts, () => touch(ts.ctx, { db: 'app', branch: 'reaped' }), 'CAS_CONFLICT');
    await refusedCleanly(ts, () => checkout(ts.ctx, { db: 'app', branch: 'reaped' }), 'NOT_FOUND');
    await refusedCleanly(ts, () => fork(ts.ctx, { db: 'app', branch: 'reaped' }, 'x'), 'NOT_FOUND');
  });
});

describe('a fork point condemned by GC', () => {
  it('refuses the fork with a retryable BUSY and leaves no child ref', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const { ref } = await ts.store.getRef('app', 'main');
      const chain = await new ChainResolver(ts.store).resolve(ref.lineage, ref.head_txid);
      // As if a GC pass had marked before this ref existed and tombstoned the fork point.
      await writeTombstones(
        ts.store.backend,
        { [chain.members[0]?.key ?? '']: ts.clock.now().toISOString() },
        undefined,
      );
      const err = await rejectsCode(fork(ts.ctx, MAIN, 'late'), 'BUSY');
      assert.equal(err.retryable, true);
      assert.equal(await ts.store.tryGetRef('app', 'late'), undefined, 'the child ref was deleted again');
      await writeTombstones(ts.store.backend, {}, (await readTombstones(ts.store.backend)).etag);
      assert.equal((await fork(ts.ctx, MAIN, 'late')).mode, 'shared', 'the retry succeeds once the stone is gone');
    } finally {
      await ts.cleanup();
    }
  });
});

describe('leases held by another holder', () => {
  it('refuse checkpoint, rollback, compact, promote onto and destroy until the lease expires', async () => {
    const ts = await openTestStore();
    try {
      const path = await seeded(ts);
      const other = ts.context({ holder: 'elsewhere/4242' });
      const lease = await acquireLease(other, MAIN, '30s');
      const otherExp = await acquireLease(other, EXP, '30s');
      assert.equal(lease.renewed, false);
      await refusedCleanly(ts, () => acquireLease(ts.ctx, MAIN), 'LEASE_HELD');
      runSql(path, "INSERT INTO t(v) VALUES ('local');");
      await refusedCleanly(ts, () => checkpoint(ts.ctx, MAIN, 'mine'), 'LEASE_HELD');
      await refusedCleanly(ts, () => rollback(ts.ctx, MAIN, 'seed'), 'LEASE_HELD');
      await refusedCleanly(ts, () => compact(ts.ctx, EXP), 'LEASE_HELD');
      await refusedCleanly(ts, () => promote(ts.ctx, MAIN, 'exp', { force: true }), 'LEASE_HELD');
      await refusedCleanly(ts, () => destroy(ts.ctx, EXP), 'LEASE_HELD');
      await refusedCleanly(ts, () => destroy(ts.ctx, MAIN, { force: true }), 'LEASE_HELD');
      await refusedCleanly(ts, () => touch(ts.ctx, MAIN, { kind: 'none' }), 'LEASE_HELD');
      await refusedCleanly(ts, () => setProtected(ts.ctx, EXP, true), 'LEASE_HELD');
      // The holder itself is not refused by its own lease.
      const mine = await checkpoint(other, MAIN, 'holders');
      assert.equal(mine.kind, 'segment');
      ts.clock.advance(31_000);
      assert.ok(otherExp.expiry < ts.clock.now().toISOString());
      const r = await checkpoint(ts.ctx, MAIN, 'after-expiry');
      assert.equal(r.kind, 'none', 'the holder already checkpointed this checkout');
      await destroy(ts.ctx, EXP);
    } finally {
      await ts.cleanup();
    }
  });

  it('destroy --force never takes a live lease; it destroys once the lease has expired', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await acquireLease(ts.context({ holder: 'elsewhere/1' }), EXP, '1h');
      await refusedCleanly(ts, () => destroy(ts.ctx, EXP, { force: true }), 'LEASE_HELD');
      ts.clock.advance(3_600_001);
      await destroy(ts.ctx, EXP, { force: true });
      assert.equal(await ts.store.tryGetRef('app', 'exp'), undefined);
    } finally {
      await ts.cleanup();
    }
  });

  it('a leased branch is never reaped, even past its TTL', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await fork(ts.ctx, MAIN, 'ttl', { ttl: { kind: 'set', ttl: 1_000_000_000n } });
      await acquireLease(ts.context({ holder: 'elsewhere/1' }), { db: 'app', branch: 'ttl' }, '1h');
      ts.clock.advance(30 * 60_000);
      assert.deepEqual((await reap(ts.ctx)).reaped, []);
      ts.clock.advance(31 * 60_000);
      assert.deepEqual((await reap(ts.ctx)).reaped, ['app@ttl'], 'reaped one TTL after the lease lapsed');
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a busy checkout', () => {
  it('checkpoint fails with BUSY after the busy timeout and writes nothing; it succeeds once the writer commits', async () => {
    const ts = await openTestStore();
    try {
      const path = await seeded(ts);
      runSql(path, "INSERT INTO t(v) VALUES ('committed before');");
      const writer = await holdWriteTransaction(path, "INSERT INTO t(v) VALUES ('held');");
      try {
        const started = Date.now();
        await refusedCleanly(ts, () => checkpoint(ts.ctx, MAIN, 'busy'), 'BUSY');
        const waited = Date.now() - started;
        assert.ok(waited >= 2500, `waited out the busy timeout (${waited} ms)`);
        assert.ok(waited < 15_000, `then gave up (${waited} ms)`);
      } finally {
        await writer.commit();
      }
      const r = await checkpoint(ts.ctx, MAIN, 'busy');
      assert.equal(r.kind, 'segment');
      const got = await exportDump(ts, { ...MAIN, checkpoint: 'busy' });
      assert.ok(got.includes("'committed before'") && got.includes("'held'"), 'the checkpoint holds both commits');
    } finally {
      await ts.cleanup();
    }
  });

  it('a checkout left detached by a busy rollback refuses checkpoint, so it cannot overwrite the repointed branch', async () => {
    const ts = await openTestStore({ warn: () => undefined });
    try {
      const path = await seeded(ts);
      await checkpoint(ts.ctx, MAIN, 'before');
      runSql(path, "INSERT INTO t(v) VALUES ('after');");
      await checkpoint(ts.ctx, MAIN, 'later');
      const writer = await holdWriteTransaction(path, "INSERT INTO t(v) VALUES ('held');");
      let r;
      try {
        r = await rollback(ts.ctx, MAIN, 'before');
      } finally {
        await writer.commit();
      }
      assert.equal(r.refreshed, false, 'the busy checkout was left as it was');
      const head = await exportDump(ts, MAIN);
      await refusedCleanly(ts, () => checkpoint(ts.ctx, MAIN, 'stale-content'), 'CAS_CONFLICT');
      assert.equal(await exportDump(ts, MAIN), head, 'the rolled-back head is untouched');
      await checkout(ts.ctx, MAIN);
      assert.equal(
        (await checkpoint(ts.ctx, MAIN, 'fresh')).kind,
        'none',
        'after a refresh the checkout is the head again',
      );
    } finally {
      await ts.cleanup();
    }
  });

  it('destroy of a busy checkout is refused with BUSY and its claim is unwound', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const co = await checkout(ts.ctx, EXP);
      const before = (await ts.store.getRef('app', 'exp')).ref.generation ?? 0;
      const writer = await holdWriteTransaction(co.path, "INSERT INTO t(v) VALUES ('held');");
      try {
        await rejectsCode(destroy(ts.ctx, EXP), 'BUSY');
      } finally {
        await writer.kill();
      }
      const { ref } = await ts.store.getRef('app', 'exp');
      assert.equal(ref.deleting, undefined, 'the deleting claim is cleared');
      assert.equal(ref.deleting_at, undefined);
      assert.equal(ref.lease_holder, undefined, 'the lease is given back');
      // Every ref write bumps the generation: the lease taken with the claim in one write, the claim cleared, the
      // lease given back.
      assert.equal((ref.generation ?? 0) - before, 3, 'the claim is written with the lease, not after it');
      assert.equal((await checkout(ts.ctx, EXP)).path, co.path, 'the branch is usable again');
    } finally {
      await ts.cleanup();
    }
  });

  it('a fork of a busy, dirty checkout warns and forks the last durable head', async () => {
    const warnings: string[] = [];
    const ts = await openTestStore({ warn: (m) => warnings.push(m) });
    try {
      const path = await seeded(ts);
      runSql(path, "INSERT INTO t(v) VALUES ('not yet durable');");
      const durable = await exportDump(ts, MAIN);
      const writer = await holdWriteTransaction(path, "INSERT INTO t(v) VALUES ('held');");
      try {
        const r = await fork(ts.ctx, MAIN, 'while-busy');
        assert.equal(r.txid, (await ts.store.getRef('app', 'main')).ref.head_txid);
      } finally {
        await writer.kill();
      }
      assert.ok(
        warnings.some((w) => w.includes('proceeding from the last durable head')),
        warnings.join('\n'),
      );
      assert.equal(await exportDump(ts, { db: 'app', branch: 'while-busy' }), durable);
    } finally {
      await ts.cleanup();
    }
  });
});
