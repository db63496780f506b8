// The per-chain read-only cache (checkouts-ro/<db>/~by-chain/): never served once its fingerprint changed, not
// filled by export, pruned by gc when no live chain uses an entry, and reported by status.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, openSync, closeSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkoutAt } from '../../src/ops/checkout-at.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { exportTo } from '../../src/ops/export.js';
import { fork } from '../../src/ops/fork.js';
import { runGc } from '../../src/ops/gc.js';
import { chainCacheDir } from '../../src/ops/helpers/context/paths.js';
import { status } from '../../src/ops/status.js';
import { readSidecar } from '../../src/sqlite/checkout-sidecar.js';
import { pageSumsPath, readPageSums } from '../../src/sqlite/page-sums.js';
import { exportDump, openTestStore, type TestStore } from './harness.js';
import { dump, runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };

function entries(ts: TestStore, db: string): string[] {
  const dir = chainCacheDir(ts.dir, db);
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.db')) : [];
}

/** Overwrites the first occurrence of `from` in a read-only file with `to` (same length), as bit rot or a user would. */
function flip(path: string, from: string, to: string): void {
  const at = readFileSync(path).indexOf(from);
  assert.ok(at >= 0, `${from} is in ${path}`);
  chmodSync(path, 0o644);
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from(to), 0, to.length, at);
  closeSync(fd);
  chmodSync(path, 0o444);
}

async function seeded(ts: TestStore): Promise<string> {
  await create(ts.ctx, 'app');
  const co = await checkout(ts.ctx, MAIN);
  runSql(co.path, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('precious-row');");
  await checkpoint(ts.ctx, MAIN, 'one');
  return co.path;
}

describe('the per-chain read-only cache', () => {
  it("gives a fork's checkout the entry's page sums byte for byte, and they vouch for the checkout", async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      await fork(ts.ctx, MAIN, 'kid');
      const co = await checkout(ts.ctx, { db: 'app', branch: 'kid' });
      const placed = readFileSync(pageSumsPath(co.path));
      const dir = chainCacheDir(ts.dir, 'app');
      const same = entries(ts, 'app').filter((n) => readFileSync(pageSumsPath(join(dir, n))).equals(placed));
      assert.equal(same.length, 1, "the checkout holds its cache entry's sums");
      const sums = await readPageSums(co.path);
      assert.equal(sums?.rollingChecksum().toString(16), readSidecar(co.path)?.ltx_checksum);
    } finally {
      await ts.cleanup();
    }
  });

  it('discards and rebuilds an entry whose fingerprint changed instead of serving it', async () => {
    const ts = await openTestStore();
    try {
      const path = await seeded(ts);
      const want = dump(path);
      // A read-only checkout of the head's checkpoint builds the head chain's cache entry.
      await checkoutAt(ts.ctx, MAIN, 'one');
      const [entry] = entries(ts, 'app').filter((n) =>
        readFileSync(join(chainCacheDir(ts.dir, 'app'), n)).includes('precious-row'),
      );
      assert.ok(entry, 'the head has a cache entry');
      const file = join(chainCacheDir(ts.dir, 'app'), entry);
      const before = statSync(file).ino;
      flip(file, 'precious-row', 'tampered-row');
      assert.equal(await exportDump(ts, MAIN), want, 'export never serves the tampered entry');
      const ro = ts.tmpPath('ro.db');
      await exportTo(ts.ctx, { ...MAIN, checkpoint: 'one' }, ro);
      assert.equal(dump(ro), want);
      const rebuilt = join(chainCacheDir(ts.dir, 'app'), entry);
      if (existsSync(rebuilt)) {
        assert.notEqual(statSync(rebuilt).ino, before, 'the entry was rebuilt, not reused');
        assert.ok(!readFileSync(rebuilt).includes('tampered-row'));
      }
    } finally {
      await ts.cleanup();
    }
  });

  it('is not filled by export, is pruned by gc when no live chain uses an entry, and is reported by status', async () => {
    const ts = await openTestStore();
    try {
      await create(ts.ctx, 'app');
      const out = ts.tmpPath('out.db');
      await exportTo(ts.ctx, MAIN, out);
      assert.deepEqual(entries(ts, 'app'), [], 'export streamed to its destination without a cache entry');
      await create(ts.ctx, 'gone');
      await checkout(ts.ctx, MAIN);
      await checkout(ts.ctx, { db: 'gone', branch: 'main' });
      assert.equal(entries(ts, 'gone').length, 1);
      const report = await status(ts.ctx);
      assert.equal(report.roCache.entries, 2);
      assert.ok(report.roCache.bytes > 0, 'status reports the bytes the cache holds');
      await destroy(ts.ctx, { db: 'gone', branch: 'main' }, { force: true });
      const gc = await runGc(ts.ctx, { grace: 0n });
      assert.equal(gc.roCachePruned, 1, 'the destroyed branch’s entry is pruned');
      assert.deepEqual(entries(ts, 'gone'), []);
      assert.equal(entries(ts, 'app').length, 1, 'a live chain keeps its entry');
    } finally {
      await ts.cleanup();
    }
  });
});

describe('named read-only checkouts (checkouts-ro/<db>/<branch>@<checkpoint>.db)', () => {
  it('are served again only while they hold that very checkpoint, untouched', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const first = await checkoutAt(ts.ctx, MAIN, 'one');
      assert.equal(first.cached, false);
      assert.equal((await checkoutAt(ts.ctx, MAIN, 'one')).cached, true);
      flip(first.path, 'precious-row', 'tampered-row');
      const healed = await checkoutAt(ts.ctx, MAIN, 'one');
      assert.equal(healed.cached, false, 'a changed file is re-materialized, not served');
      assert.match(dump(healed.path), /precious-row/);
      assert.doesNotMatch(dump(healed.path), /tampered-row/);

      // A checkpoint of the same name on a branch of the same name, made later, is another checkpoint.
      const SIDE = { db: 'app', branch: 'side' };
      await fork(ts.ctx, MAIN, 'side');
      const side = await checkout(ts.ctx, SIDE);
      runSql(side.path, "INSERT INTO t VALUES ('first-life');");
      await checkpoint(ts.ctx, SIDE, 'x');
      assert.match(dump((await checkoutAt(ts.ctx, SIDE, 'x')).path), /first-life/);
      await destroy(ts.ctx, SIDE, { force: true });
      await fork(ts.ctx, MAIN, 'side');
      runSql((await checkout(ts.ctx, SIDE)).path, "INSERT INTO t VALUES ('second-life');");
      await checkpoint(ts.ctx, SIDE, 'x');
      const again = await checkoutAt(ts.ctx, SIDE, 'x');
      assert.equal(again.cached, false);
      assert.match(dump(again.path), /second-life/);
      assert.doesNotMatch(dump(again.path), /first-life/);
    } finally {
      await ts.cleanup();
    }
  });

  it('are removed by gc once no branch has their checkpoint, and kept while one does', async () => {
    const ts = await openTestStore();
    try {
      await seeded(ts);
      const SIDE = { db: 'app', branch: 'side' };
      await fork(ts.ctx, MAIN, 'side');
      runSql((await checkout(ts.ctx, SIDE)).path, "INSERT INTO t VALUES ('side-row');");
      await checkpoint(ts.ctx, SIDE, 'x');
      const kept = (await checkoutAt(ts.ctx, MAIN, 'one')).path;
      const gone = (await checkoutAt(ts.ctx, SIDE, 'x')).path;
      await destroy(ts.ctx, SIDE, { force: true });
      const r = await runGc(ts.ctx, { grace: 0n });
      assert.ok(r.roCachePruned >= 1, JSON.stringify(r));
      assert.equal(existsSync(gone), false, 'the destroyed branch’s checkpoint checkout is gone');
      assert.equal(existsSync(`${gone}.id`), false);
      assert.equal(existsSync(`${gone}.last-used`), false);
      assert.equal(existsSync(kept), true, 'a live checkpoint’s checkout stays');
      assert.equal((await checkoutAt(ts.ctx, MAIN, 'one')).cached, true);
    } finally {
      await ts.cleanup();
    }
  });
});
