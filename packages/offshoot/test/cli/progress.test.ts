// Progress bars speak bytes: MiB done of total, the rate and an ETA, under the label of the verb doing the work.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { progressLine } from '../../src/cli/progress.js';
import type { ProgressSink } from '../../src/ops/helpers/context/context.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { compact } from '../../src/ops/compact.js';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import { openTestStore } from '../ops/harness.js';

const MIB = 1024 * 1024;

test('a progress line shows MiB, the rate and the ETA', () => {
  assert.equal(
    progressLine('export app', 3 * MIB, 12 * MIB, 2000),
    `export app [${'='.repeat(8)}${'-'.repeat(22)}] 25% 3.0/12.0 MiB 1.5 MiB/s ETA 6s`,
  );
  assert.match(progressLine('checkout app@main', 0, 5 * MIB, 0), / 0% 0\.0\/5\.0 MiB 0\.0 MiB\/s ETA --$/);
  assert.match(progressLine('x', 1 * MIB, 1000 * MIB, 1000), /ETA 16m39s$/);
  assert.match(progressLine('x', 10 * MIB, 10 * MIB, 1000), / 100% 10\.0\/10\.0 MiB 10\.0 MiB\/s ETA 0s$/);
});

test('compact reports its progress as compact, not as a checkout', async () => {
  const ts = await openTestStore();
  try {
    await create(ts.ctx, 'app');
    await fork(ts.ctx, { db: 'app', branch: 'main' }, 'kid');
    const co = await checkout(ts.ctx, { db: 'app', branch: 'kid' });
    execFileSync('sqlite3', [co.path, 'CREATE TABLE t(v); INSERT INTO t VALUES (randomblob(100000));']);
    await checkpoint(ts.ctx, { db: 'app', branch: 'kid' }, 'one');
    const labels: string[] = [];
    const sink = (): ProgressSink => ({ start: (label) => void labels.push(label), update: () => {}, stop: () => {} });
    const r = await compact(ts.context({ progress: sink }), { db: 'app', branch: 'kid' });
    assert.equal(r.compacted, true);
    assert.ok(labels.length > 0, 'compact showed progress');
    for (const l of labels) assert.equal(l, 'compact app@kid');
  } finally {
    await ts.cleanup();
  }
});

test('a checkout built from a chain listed by key alone reports progress against the bytes it downloads', async () => {
  const ts = await openTestStore();
  try {
    await create(ts.ctx, 'app');
    const co = await checkout(ts.ctx, { db: 'app', branch: 'main' });
    execFileSync('sqlite3', [co.path, 'CREATE TABLE t(v); INSERT INTO t VALUES (randomblob(300000));']);
    await checkpoint(ts.ctx, { db: 'app', branch: 'main' }, 'one');
    execFileSync('sqlite3', [co.path, 'INSERT INTO t VALUES (randomblob(100000));']);
    await checkpoint(ts.ctx, { db: 'app', branch: 'main' }, 'two');
    await fork(ts.ctx, { db: 'app', branch: 'main' }, 'kid');
    // No cache entry to clone: the checkout downloads and applies the whole chain.
    rmSync(join(ts.ctx.checkoutRoot, 'checkouts-ro'), { recursive: true, force: true });
    const totals: number[] = [];
    let done = 0;
    const sink = (): ProgressSink => ({
      start: (_label, total) => void totals.push(total),
      update: (n) => void (done = n),
      stop: () => {},
    });
    await checkout(ts.context({ progress: sink }), { db: 'app', branch: 'kid' });
    const { ref } = await ts.store.getRef('app', 'main');
    const chain = await new ChainResolver(ts.store).resolve(ref.lineage, ref.head_txid);
    const bytes = chain.members.reduce((a, m) => a + (m.size ?? 0), 0);
    assert.ok(chain.members.length >= 2 && bytes > 300_000, `${chain.members.length} members, ${bytes} bytes`);
    assert.deepEqual(totals, [bytes]);
    assert.equal(done, bytes);
  } finally {
    await ts.cleanup();
  }
});

test('a checkout stopped by its progress sink closes the store object it was reading (Node 26 aborts on a FileHandle left to the GC)', async () => {
  const ts = await openTestStore();
  try {
    const seed = join(ts.dir, 'big.db');
    // Several MiB: the store's stream reads 1 MiB at a time, so the stop lands before the object's end.
    execFileSync('sqlite3', [
      seed,
      'CREATE TABLE b(x BLOB); INSERT INTO b SELECT randomblob(8192) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c LIMIT 600) SELECT i FROM c);',
    ]);
    await create(ts.ctx, 'big', { from: seed });
    rmSync(join(ts.ctx.checkoutRoot, 'checkouts-ro'), { recursive: true, force: true });
    const stop = new Error('the caller went away');
    const sink = (): ProgressSink => ({
      start: () => {},
      update: () => {
        throw stop;
      },
      stop: () => {},
    });
    await assert.rejects(
      checkout(ts.context({ progress: sink }), { db: 'big', branch: 'main' }),
      /the caller went away/,
    );
    const storeData = join(ts.dir, 'store', 'data');
    const open = readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        return [readlinkSync(`/proc/self/fd/${fd}`)];
      } catch {
        return [];
      }
    });
    assert.deepEqual(
      open.filter((target) => target.startsWith(storeData)),
      [],
      'no descriptor is left open on a store object',
    );
  } finally {
    await ts.cleanup();
  }
});
