// The reflink path for real: a store and its checkouts on a loop-mounted XFS with reflink=1, where a checkout, a
// fork's checkout and an export share the cache entry's blocks (FIEMAP says so and the filesystem's usage does not
// grow by a copy), and a write to one clone changes none of the others.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { diff } from '../../src/ops/diff.js';
import { exportTo } from '../../src/ops/export.js';
import { fork } from '../../src/ops/fork.js';
import { chainCacheDir } from '../../src/ops/helpers/context/paths.js';
import { cloneOrCopy } from '../../src/sqlite/clone-file.js';
import {
  mountReflinkXfs,
  reflinkMountMissing,
  sharedBlocks,
  usedBytes,
  type ReflinkMount,
} from '../support/xfs-reflink.js';
import { openTestStore, type TestStore } from './harness.js';
import { query, runSql } from './sqlite-cli.js';

const MAIN = { db: 'app', branch: 'main' };
const MiB = 1 << 20;
const skip = reflinkMountMissing();

/** A hash of the database's whole content (the sqlite3 shell's `.sha3sum`). */
function contentHash(file: string): string {
  return query(file, '.sha3sum').trim();
}

/** Every block of `file` is shared with another file (the cache entry it was cloned from). */
function assertAllShared(file: string, what: string): void {
  const { shared, total } = sharedBlocks(file);
  assert.ok(total > 0, `${what} has extents`);
  assert.equal(shared, total, `${what}: every block shared (${shared} of ${total})`);
}

describe('checkouts on a filesystem with reflink (loop-mounted XFS)', { skip }, () => {
  let mount: ReflinkMount;
  let ts: TestStore;
  let seedSize = 0;

  before(async () => {
    mount = mountReflinkXfs(1024);
    ts = await openTestStore({ parent: mount.dir });
    const seed = ts.tmpPath('seed.db');
    runSql(
      seed,
      'PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB);' +
        'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)' +
        ' INSERT INTO t(body) SELECT randomblob(3000) FROM n; PRAGMA wal_checkpoint(TRUNCATE);',
    );
    seedSize = statSync(seed).size;
    assert.ok(seedSize > 16 * MiB, 'the seed is big enough to see a copy in the usage');
    await create(ts.ctx, 'app', { from: seed });
  });

  after(async () => {
    try {
      await ts?.cleanup();
    } finally {
      mount?.unmount();
    }
  });

  it('clones instead of copying, where ext4 and tmpfs copy', async () => {
    const a = join(mount.dir, 'a.bin');
    runSql(a, 'CREATE TABLE x(y); INSERT INTO x VALUES (1);');
    assert.equal(await cloneOrCopy(a, join(mount.dir, 'b.bin')), 'reflink');
    assertAllShared(join(mount.dir, 'b.bin'), 'the clone');
  });

  it('a checkout and a fork checkout share the cache entry blocks; usage grows by far less than a copy', async () => {
    const main = await checkout(ts.ctx, MAIN);
    assertAllShared(main.path, "main's checkout");
    await checkpoint(ts.ctx, MAIN, 'seeded');
    const before = usedBytes(mount.dir);
    for (const name of ['f1', 'f2', 'f3']) {
      await fork(ts.ctx, MAIN, name, { at: 'seeded' });
      const co = await checkout(ts.ctx, { db: 'app', branch: name });
      assertAllShared(co.path, `the checkout of ${name}`);
    }
    const grown = usedBytes(mount.dir) - before;
    assert.ok(grown < seedSize / 4, `three fork checkouts used ${grown} bytes, a copy would be ${seedSize}`);
  });

  it('a write to one clone changes neither the cache entry nor another checkout', async () => {
    const f1 = await checkout(ts.ctx, { db: 'app', branch: 'f1' });
    const f2 = await checkout(ts.ctx, { db: 'app', branch: 'f2' });
    const f2Before = contentHash(f2.path);
    runSql(f1.path, "UPDATE t SET body = zeroblob(3000) WHERE id = 7; INSERT INTO t(body) VALUES (x'01');");
    await checkpoint(ts.ctx, { db: 'app', branch: 'f1' }, 'wrote');
    assert.equal(contentHash(f2.path), f2Before, 'the sibling clone is untouched');
    assert.equal(query(f2.path, 'SELECT count(*) FROM t').trim(), '6000');
    assert.equal(query(f1.path, 'SELECT count(*) FROM t').trim(), '6001');
    const d = await diff(ts.ctx, { db: 'app', branch: 'f2' }, { db: 'app', branch: 'f1' });
    const t = d.tables.find((x) => x.table === 't');
    assert.equal(t?.added.length, 1, 'one row added');
    assert.equal(t?.changed.length, 1, 'one row changed');
    // The cache entry of the seed's chain still holds the seed: a fresh fork's checkout sees 6,000 untouched rows.
    await fork(ts.ctx, MAIN, 'f4', { at: 'seeded' });
    const f4 = await checkout(ts.ctx, { db: 'app', branch: 'f4' });
    assert.equal(contentHash(f4.path), f2Before);
  });

  it('an export to the same filesystem is a clone of the cache entry', async () => {
    const out = join(mount.dir, 'export.db');
    await exportTo(ts.ctx, { db: 'app', branch: 'f2' }, out, { force: true });
    assertAllShared(out, 'the export');
    const entries = chainCacheDir(ts.dir, 'app');
    assert.ok(statSync(entries).isDirectory(), 'the per-chain cache lives on the same mount');
  });
});
