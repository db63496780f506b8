// Data-loss defects that must stay fixed: a forced destroy under a live writer, an undo point written over a user
// branch of the same name, and a busy checkout that a rollback or promote could not refresh.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { fork } from '../../src/ops/fork.js';
import { promote } from '../../src/ops/promote.js';
import { rollback } from '../../src/ops/rollback.js';
import { refKey, TOMBSTONES_KEY } from '../../src/core/keys.js';
import { FaultBackend } from '../store/fault-backend.js';
import { holdWriteTransaction } from './busy-writer.js';
import { exportDump, openTestStore, rejectsCode, storeSnapshot, type TestStore } from './harness.js';
import { dump, runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };
const EXP = { db: 'app', branch: 'exp' };

/** app@main with table t and checkpoint `seed` (then one more row), checked out; app@exp forked from it. */
async function seeded(ts: TestStore): Promise<string> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(co.path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('seed');");
  await checkpoint(ts.ctx, MAIN, 'seed');
  runSql(co.path, "INSERT INTO t(v) VALUES ('later');");
  await checkpoint(ts.ctx, MAIN, 'later');
  await fork(ts.ctx, MAIN, 'exp');
  return co.path;
}

describe('destroy --force of a checkout a foreign connection is writing', () => {
  it('is refused with BUSY, keeps the branch and lets the writer commit into the real file', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const co = await checkout(ts.ctx, EXP);
      const writer = await holdWriteTransaction(co.path, "INSERT INTO t(v) VALUES ('held');");
      try {
        const err = await rejectsCode(destroy(ts.ctx, EXP, { force: true }), 'BUSY');
        assert.ok(err.hint, err.message);
      } finally {
        await writer.commit();
      }
      const { ref } = await ts.store.getRef('app', 'exp');
      assert.equal(ref.deleting, undefined, 'the deleting claim is unwound');
      assert.ok(dump(co.path).includes("'held'"), 'the commit landed in the checkout, not in an unlinked file');
      await destroy(ts.ctx, EXP, { force: true });
      assert.equal(await ts.store.tryGetRef('app', 'exp'), undefined, 'an idle checkout is destroyed with --force');
    } finally {
      await ts.cleanup();
    }
  });
});

/**
 * A branch called `name` forked from src, as an earlier version let a user make one (undo-point names are reserved
 * now): the fork's ref written under that name.
 */
async function forkAsEarlierVersion(ts: TestStore, src: typeof MAIN, name: string): Promise<void> {
  await fork(ts.ctx, src, 'made-earlier');
  const { ref, etag } = await ts.store.getRef('app', 'made-earlier');
  await ts.store.createRef('app', name, ref);
  await ts.store.deleteRef('app', 'made-earlier', etag);
}

describe('undo points never replace a user branch of the same name (from an earlier version)', () => {
  let ts: TestStore;
  before(async () => {
    ts = await openTestStore();
    await seeded(ts);
  });
  after(async () => ts.cleanup());

  it('rollback refuses when <branch>-pre-rollback is a user branch, and writes nothing', async () => {
    const mine = await checkout(ts.ctx, EXP);
    runSql(mine.path, "INSERT INTO t(v) VALUES ('precious');");
    await checkpoint(ts.ctx, EXP, 'mine');
    await forkAsEarlierVersion(ts, EXP, 'exp-pre-rollback');
    const precious = await exportDump(ts, { db: 'app', branch: 'exp-pre-rollback' });
    const before = await storeSnapshot(ts.store);
    const err = await rejectsCode(rollback(ts.ctx, EXP, 'fork'), 'ALREADY_EXISTS');
    assert.match(err.message, /exp-pre-rollback/);
    assert.match(err.message, /not an undo point/);
    assert.ok(err.hint?.includes('destroy'), err.hint);
    assert.deepEqual(await storeSnapshot(ts.store), before, 'the refusal wrote nothing');
    assert.equal(await exportDump(ts, { db: 'app', branch: 'exp-pre-rollback' }), precious);
  });

  it('promote refuses when <target>-pre-promote is a user branch', async () => {
    await fork(ts.ctx, MAIN, 'target');
    await forkAsEarlierVersion(ts, MAIN, 'target-pre-promote');
    const before = await storeSnapshot(ts.store);
    await rejectsCode(promote(ts.ctx, EXP, 'target'), 'ALREADY_EXISTS');
    assert.deepEqual(await storeSnapshot(ts.store), before, 'the refusal wrote nothing');
  });

  it('an untouched undo point offshoot made is replaced; one written to since is kept and refused', async () => {
    await fork(ts.ctx, MAIN, 'work');
    const work = { db: 'app', branch: 'work' };
    await rollback(ts.ctx, work, 'fork');
    const first = await ts.store.getRef('app', 'work-pre-rollback');
    assert.equal(first.ref.meta?.['offshoot.safety'], 'pre-rollback');
    await rollback(ts.ctx, work, 'fork');
    const second = await ts.store.getRef('app', 'work-pre-rollback');
    assert.notEqual(second.ref.lineage, first.ref.lineage, 'the previous, untouched undo point was replaced');
    // Someone adopted the undo point: its checkout got new rows and a checkpoint.
    const undo = { db: 'app', branch: 'work-pre-rollback' };
    const co = await checkout(ts.ctx, undo);
    runSql(co.path, "INSERT INTO t(v) VALUES ('adopted');");
    await checkpoint(ts.ctx, undo, 'kept');
    const err = await rejectsCode(rollback(ts.ctx, work, 'fork'), 'ALREADY_EXISTS');
    assert.match(err.message, /changed since/);
    assert.ok((await exportDump(ts, undo)).includes("'adopted'"), 'the adopted undo point keeps its data');
  });
});

describe('a rollback or promote whose checkout is busy', () => {
  it('moves the branch but reports the checkout as stale, with the error that kept it from being refreshed', async () => {
    const ts = await openTestStore();
    try {
      const path = await seeded(ts);
      const writer = await holdWriteTransaction(path, "INSERT INTO t(v) VALUES ('held');");
      let r: Awaited<ReturnType<typeof rollback>>;
      let p: Awaited<ReturnType<typeof promote>>;
      try {
        r = await rollback(ts.ctx, MAIN, 'seed');
        p = await promote(ts.ctx, EXP, 'main', { force: true });
      } finally {
        await writer.kill();
      }
      assert.equal(r.refreshed, false);
      assert.equal(r.refreshError?.code, 'BUSY');
      assert.equal(p.refreshed, false);
      assert.equal(p.refreshError?.code, 'BUSY');
    } finally {
      await ts.cleanup();
    }
  });
});

describe('a fork whose fork-point check fails', () => {
  it('withdraws the new branch, and says so when the withdrawal fails too', async () => {
    let faults: FaultBackend | undefined;
    const ts = await openTestStore({ wrap: (b) => (faults = new FaultBackend(b)) });
    try {
      await seeded(ts);
      const fb = faults as FaultBackend;
      fb.inject({ method: 'get', key: TOMBSTONES_KEY, fault: { status: 503 }, times: 1 });
      const first = await rejectsCode(fork(ts.ctx, MAIN, 'withdrawn'), 'UNAVAILABLE');
      assert.doesNotMatch(first.message, /left/);
      assert.equal(await ts.store.tryGetRef('app', 'withdrawn'), undefined, 'a failed fork leaves no branch');

      fb.inject({ method: 'get', key: TOMBSTONES_KEY, fault: { status: 503 }, times: 1 });
      fb.inject({ method: 'delete', key: refKey('app', 'stuck'), fault: { status: 503 }, times: 1 });
      const err = await rejectsCode(fork(ts.ctx, MAIN, 'stuck'), 'UNAVAILABLE');
      assert.match(err.message, /app@stuck was left/);
      assert.match(err.hint ?? '', /offshoot destroy app@stuck/);
      assert.ok(await ts.store.tryGetRef('app', 'stuck'), 'the branch the error names is really there');
    } finally {
      await ts.cleanup();
    }
  });
});
