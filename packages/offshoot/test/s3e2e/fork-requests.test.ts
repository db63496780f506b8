// What the at-rest engine costs in S3 requests, counted on the real backend: a shared fork is a fixed handful of
// small requests whatever the database size, a one-row checkpoint uploads one small object, and a checkout that is
// already current (or whose chain is cached) downloads nothing.
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { baseKey, refKey } from '../../src/core/keys.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { checkoutFiles } from '../../src/ops/helpers/context/paths.js';
import { Store } from '../../src/store/store.js';
import { runSql } from '../ops/sqlite-cli.js';
import { countingBackend, type BackendMethod, type CountingBackend } from '../store/fault-backend.js';
import { s3Unavailable } from '../store/s3-test-env.js';
import { openS3TestStore, openTestS3Backend, type S3TestStore } from './s3-store.js';

const MiB = 1024 * 1024;
const main = { db: 'app', branch: 'main' };
const LTX = /^data\/[^/]+\/\d+\/(snapshot|segment)-[0-9a-f-]+\.ltx$/;
const READS: readonly BackendMethod[] = ['get', 'getStream', 'getToFile'];

/** A database of about `size` bytes: one row of incompressible blob per page, so the snapshot is as large as the file. */
function buildDatabase(file: string, size: number): void {
  const db = openDatabase(file);
  try {
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE items(id INTEGER PRIMARY KEY, k TEXT, body BLOB)');
    const ins = db.prepare('INSERT INTO items(k, body) VALUES (?, randomblob(3000))');
    db.exec('BEGIN');
    for (let i = 0; i < Math.floor(size / 4200); i++) ins.run(`key-${i}`);
    db.exec('COMMIT');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** The keys of LTX objects that calls of the given methods read. */
function ltxReads(c: CountingBackend): string[] {
  return c.calls
    .filter((call) => READS.some((m) => call.startsWith(`${m} `)))
    .map((call) => call.slice(call.indexOf(' ') + 1))
    .filter((k) => LTX.test(k));
}

/** What one shared fork cost, measured from a freshly opened store (as a CLI run would see it). */
interface ForkCost {
  counts: Record<BackendMethod, number>;
  calls: string[];
  child: string;
}

interface SizedStore {
  ts: S3TestStore;
  file: number;
  fork: ForkCost;
}

async function sizedStore(size: number): Promise<SizedStore> {
  const ts = await openS3TestStore();
  try {
    const src = ts.tmpPath('src.db');
    buildDatabase(src, size);
    await create(ts.ctx, 'app', { from: src });
    // The first fork of a store also moves its manifest to the shared layout, once; the cost measured is a later one.
    await fork(ts.ctx, main, 'first');
    const counter = countingBackend(await openTestS3Backend(ts.bucket.name, ts.prefix));
    const store = await Store.open(ts.spec, { backend: counter });
    try {
      const ctx = makeContext(store, ts.dir, { now: ts.clock.now, warn: () => undefined });
      counter.reset();
      await fork(ctx, main, 'measured');
      const cost = { counts: { ...counter.counts }, calls: [...counter.calls] };
      const { ref } = await store.getRef('app', 'measured');
      return { ts, file: statSync(src).size, fork: { ...cost, child: ref.lineage } };
    } finally {
      await store.close();
    }
  } catch (err) {
    await ts.cleanup();
    throw err;
  }
}

describe('S3 request counts of the at-rest engine', { concurrency: false }, () => {
  if (s3Unavailable('S3 request counts')) return;
  let small: SizedStore;
  let large: SizedStore;

  before(async () => {
    small = await sizedStore(1 * MiB);
    large = await sizedStore(16 * MiB);
  });

  after(async () => {
    await small?.ts.cleanup();
    await large?.ts.cleanup();
  });

  it('a shared fork issues the same requests, method by method, for a 1 MB and a 16 MB database', () => {
    assert.ok(Math.abs(small.file - 1 * MiB) < MiB / 10, `small database is ${small.file} bytes`);
    assert.ok(Math.abs(large.file - 16 * MiB) < MiB, `large database is ${large.file} bytes`);
    assert.deepEqual(
      large.fork.counts,
      small.fork.counts,
      `1 MB fork:\n  ${small.fork.calls.join('\n  ')}\n16 MB fork:\n  ${large.fork.calls.join('\n  ')}`,
    );
    const total = Object.values(small.fork.counts).reduce((a, b) => a + b, 0);
    assert.ok(total <= 10, `a fork is a handful of requests, not ${total}:\n  ${small.fork.calls.join('\n  ')}`);
  });

  it('a shared fork writes exactly two objects, base.json and the child ref, and reads no LTX object', () => {
    for (const { fork: f } of [small, large]) {
      assert.equal(f.counts.put, 2);
      assert.deepEqual(
        f.calls.filter((c) => c.startsWith('put ')),
        [`put ${baseKey(f.child)}`, `put ${refKey('app', 'measured')}`],
      );
      assert.equal(f.counts.copy, 0, 'nothing is copied');
      assert.equal(f.counts.delete + f.counts.deleteMany, 0, 'nothing is deleted');
      assert.deepEqual(
        f.calls.filter((c) => READS.some((m) => c.startsWith(`${m} `)) && LTX.test(c.slice(c.indexOf(' ') + 1))),
        [],
        'no LTX object is read',
      );
    }
  });

  it('a one-row checkpoint of a 16 MB database uploads one object smaller than 16 KB, and reads none', async () => {
    const counter = countingBackend(await openTestS3Backend(large.ts.bucket.name, large.ts.prefix));
    const store = await Store.open(large.ts.spec, { backend: counter });
    try {
      const ctx = makeContext(store, large.ts.dir, { now: large.ts.clock.now, warn: () => undefined });
      const co = await checkout(ctx, main);
      runSql(co.path, "UPDATE items SET k = 'changed' WHERE id = 42;");
      counter.reset();
      const r = await checkpoint(ctx, main, 'one-row');
      assert.equal(r.kind, 'segment');
      const puts = counter.calls.filter((c) => c.startsWith('put ')).map((c) => c.slice(4));
      // The branch lease taken and given back around it, the segment, and the ref that records it.
      assert.equal(puts.length, 4, `puts: ${puts.join(', ')}`);
      const [lease, data, ref, release] = puts as [string, string, string, string];
      assert.deepEqual([lease, release], [refKey('app', 'main'), refKey('app', 'main')]);
      assert.match(data, LTX);
      assert.match(data, /\/segment-/);
      assert.equal(ref, refKey('app', 'main'));
      const info = await store.backend.stat(data);
      assert.ok(info !== undefined && info.size > 0 && info.size < 16 * 1024, `the segment is ${info?.size} bytes`);
      assert.deepEqual(ltxReads(counter), [], 'a checkpoint diffs against local page sums, not the store');
    } finally {
      await store.close();
    }
  });

  it('a clean re-checkout, a rebuilt checkout and a checkout of a fork of a cached chain issue zero snapshot GETs', async () => {
    const counter = countingBackend(await openTestS3Backend(large.ts.bucket.name, large.ts.prefix));
    const store = await Store.open(large.ts.spec, { backend: counter });
    try {
      const ctx = makeContext(store, large.ts.dir, { now: large.ts.clock.now, warn: () => undefined });
      await checkout(ctx, main);
      counter.reset();
      const again = await checkout(ctx, main);
      assert.equal(again.reused, true);
      assert.deepEqual(ltxReads(counter), []);
      assert.deepEqual(
        counter.calls,
        [`get ${refKey('app', 'main')}`],
        'a current checkout is proven clean with one ref read',
      );

      for (const f of checkoutFiles(again.path)) rmSync(f, { force: true });
      counter.reset();
      const rebuilt = await checkout(ctx, main);
      assert.equal(rebuilt.reused, false);
      const [segment, ...rest] = ltxReads(counter);
      assert.deepEqual(rest, [], 'a deleted checkout is rebuilt from the cached chain');
      assert.match(
        segment ?? '',
        /\/segment-/,
        'only the segment the checkpoint wrote is fetched, on top of the cached snapshot',
      );

      await fork(ctx, main, 'reader');
      counter.reset();
      const child = await checkout(ctx, { db: 'app', branch: 'reader' });
      assert.equal(child.reused, false);
      assert.deepEqual(ltxReads(counter), [], "a fork's checkout reads through to its parent's cached chain");
    } finally {
      await store.close();
    }
  });
});
