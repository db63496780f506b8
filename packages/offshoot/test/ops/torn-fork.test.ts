// A torn fork: what a crash leaves of a fork whose ref reached the disk and whose base.json did not (the group commit
// syncs both directories at once and answers only after both). Written here as the crash would leave it: the fork's
// ref in place, its lineage directory (base.json and the directory's entry in data/) gone. Every verb must read it
// cleanly, GC must keep what it names, and a fork of the same name must replace it.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { diff } from '../../src/ops/diff.js';
import { fork, forkMany } from '../../src/ops/fork.js';
import { runGc } from '../../src/ops/gc.js';
import { status } from '../../src/ops/status.js';
import { parseDuration } from '../../src/core/duration.js';
import { exportDump, openTestStore, rejectsCode, type TestStore } from './harness.js';
import { runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };

async function seeded(ts: TestStore): Promise<void> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(co.path, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('seed');");
  await checkpoint(ts.ctx, MAIN, 'seed');
}

/** Tears db@branch as a crash between the fork's directory syncs would: its ref stays, its lineage's entry is lost. */
async function tear(ts: TestStore, branch: string): Promise<string> {
  const { ref } = await ts.store.getRef('app', branch);
  assert.ok(ref.base !== undefined, `${branch} is a shared fork`);
  const dir = path.join(ts.dir, 'store', 'data', ref.lineage);
  assert.ok(existsSync(path.join(dir, 'base.json')), 'the fork wrote its base.json');
  rmSync(dir, { recursive: true });
  return ref.lineage;
}

describe('a torn fork (its ref without its base pointer)', () => {
  it('is listed by status, refused by checkout and diff with a one-line error, and replaced by a fork of its name', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const want = await exportDump(ts, MAIN);
      await fork(ts.ctx, MAIN, 'ep');
      const lineage = await tear(ts, 'ep');
      const listed = (await status(ts.ctx)).branches.map((b) => `${b.db}@${b.branch}`);
      assert.deepEqual(listed.sort(), ['app@ep', 'app@main']);
      const err = await rejectsCode(checkout(ts.ctx, { db: 'app', branch: 'ep' }), 'CORRUPT');
      assert.match(err.message, new RegExp(`lineage ${lineage} has no objects and no base pointer: a torn fork`));
      assert.match(err.hint ?? '', /fork the branch again under the same name/);
      await rejectsCode(diff(ts.ctx, MAIN, { db: 'app', branch: 'ep' }), 'CORRUPT');
      const again = await fork(ts.ctx, MAIN, 'ep');
      assert.equal(again.mode, 'shared');
      const { ref } = await ts.store.getRef('app', 'ep');
      assert.notEqual(ref.lineage, lineage, 'the fork of the same name is a new one');
      assert.equal(await exportDump(ts, { db: 'app', branch: 'ep' }), want);
      await checkout(ts.ctx, { db: 'app', branch: 'ep' });
    } finally {
      await ts.cleanup();
    }
  });

  it('is still a taken name while its lineage holds anything: only a fork with nothing of its own is replaced', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await fork(ts.ctx, MAIN, 'ep');
      const { ref } = await ts.store.getRef('app', 'ep');
      rmSync(path.join(ts.dir, 'store', 'data', ref.lineage, 'base.json'));
      await ts.store.backend.put(`data/${ref.lineage}/1/stray`, new Uint8Array([1]));
      await rejectsCode(fork(ts.ctx, MAIN, 'ep'), 'ALREADY_EXISTS');
      await rejectsCode(forkMany(ts.ctx, MAIN, ['ep', 'other']), 'ALREADY_EXISTS');
      assert.equal((await ts.store.getRef('app', 'ep')).ref.lineage, ref.lineage, 'the ref was left alone');
      assert.equal(await ts.store.tryGetRef('app', 'other'), undefined, 'nothing of the batch was forked');
    } finally {
      await ts.cleanup();
    }
  });

  it('is replaced by a batch fork naming it, and destroyed like any branch', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await forkMany(ts.ctx, MAIN, ['a', 'b', 'c']);
      await tear(ts, 'a');
      await tear(ts, 'c');
      await rejectsCode(forkMany(ts.ctx, MAIN, ['a', 'b']), 'ALREADY_EXISTS');
      assert.ok(await ts.store.tryGetRef('app', 'a'), 'a refused batch replaced nothing');
      await forkMany(ts.ctx, MAIN, ['a', 'd']);
      for (const b of ['a', 'd']) await checkout(ts.ctx, { db: 'app', branch: b });
      await destroy(ts.ctx, { db: 'app', branch: 'c' });
      assert.equal(await ts.store.tryGetRef('app', 'c'), undefined);
    } finally {
      await ts.cleanup();
    }
  });

  it('never fails a GC pass, which keeps what it names and reaps it when it expires', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await fork(ts.ctx, MAIN, 'src');
      const co = await checkout(ts.ctx, { db: 'app', branch: 'src' });
      runSql(co.path, "INSERT INTO t VALUES ('only on src');");
      await checkpoint(ts.ctx, { db: 'app', branch: 'src' }, 'point');
      const srcLineage = (await ts.store.getRef('app', 'src')).ref.lineage;
      await fork(ts.ctx, { db: 'app', branch: 'src' }, 'ep', { at: 'point' });
      await fork(ts.ctx, MAIN, 'brief', { ttl: { kind: 'set', ttl: parseDuration('1m') } });
      await tear(ts, 'ep');
      await tear(ts, 'brief');
      await destroy(ts.ctx, { db: 'app', branch: 'src' }, { force: true });
      const srcObjects = await ts.store.backend.listKeys(`data/${srcLineage}/`);
      assert.ok(srcObjects.length > 0);
      ts.clock.advance(120_000);
      const first = await runGc(ts.ctx, { grace: 0n });
      assert.deepEqual(first.reaped, ['app@brief'], 'the expired torn fork is reaped');
      await runGc(ts.ctx, { grace: 0n });
      assert.deepEqual(
        await ts.store.backend.listKeys(`data/${srcLineage}/`),
        srcObjects,
        'what the torn fork names is kept, so GC never decides for it',
      );
      await destroy(ts.ctx, { db: 'app', branch: 'ep' });
      await runGc(ts.ctx, { grace: 0n });
      await runGc(ts.ctx, { grace: 0n });
      assert.deepEqual(await ts.store.backend.listKeys(`data/${srcLineage}/`), [], 'then collected once it is gone');
    } finally {
      await ts.cleanup();
    }
  });
});
