// The re-stamp writes only the changed pages' entries of a checkout's page sums: whatever the flushes changed, grew or
// cut, the patched `.pages` file is byte for byte the one a whole rewrite of freshly computed sums would write. A file
// of ours is patched in place, a version-2 one (with fast hashes) too, into version 1; one someone else replaced is
// rewritten whole.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { create } from '../../src/ops/create.js';
import { fork } from '../../src/ops/fork.js';
import { Session } from '../../src/session/session.js';
import { readSidecar } from '../../src/sqlite/checkout-sidecar.js';
import { FileSource, geometryOf, scanPageSums } from '../../src/sqlite/page-scan.js';
import { PageSums, pageSumsPath, readPageSums, SumsBaseline, writePageSums } from '../../src/sqlite/page-sums.js';
import { openTestStore, type TestStore } from '../ops/harness.js';
import { runSql } from '../ops/sqlite-cli.js';

/** A seeded pseudo-random source, so a failure names the seed that reproduces it. */
function random(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

const u64 = (r: (n: number) => number): bigint => (BigInt(r(2 ** 30)) << 34n) | BigInt(r(2 ** 30));

function scan(file: string): PageSums {
  const src = new FileSource(file);
  try {
    return scanPageSums(src, geometryOf(src, src.size, file));
  } finally {
    src.close();
  }
}

describe('patching page sums', () => {
  let ts: TestStore;
  before(async () => {
    ts = await openTestStore();
  });
  after(async () => ts.cleanup());

  it('after random changes, growth and cuts, the patched file equals a whole rewrite of the same sums', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = random(seed);
      const db = ts.tmpPath(`sums-${seed}.db`);
      const count = 200 + r(800);
      let sums = new BigUint64Array(count).map(() => u64(r));
      const hashed = seed % 2 === 0;
      const first = new PageSums(4096, sums, hashed ? new Uint32Array(2 * count).fill(7) : undefined);
      await writePageSums(db, first);
      const read = await readPageSums(db);
      assert.ok(read?.file, 'sums read remember their file');
      const baseline = new SumsBaseline(read.file, count);
      for (let flush = 0; flush < 6; flush++) {
        const inoBefore = statSync(pageSumsPath(db)).ino;
        const changes = r(4) === 0 ? r(sums.length) : r(20);
        for (let i = 0; i < changes; i++) {
          const p = 1 + r(sums.length);
          sums[p - 1] = u64(r);
          baseline.changed.add(p);
        }
        const resize = r(5);
        if (resize === 0 || resize === 1) {
          const n = resize === 0 ? sums.length + 1 + r(50) : Math.max(1, sums.length - 1 - r(50));
          const next = new BigUint64Array(n);
          next.set(sums.subarray(0, Math.min(n, sums.length)));
          for (let p = sums.length + 1; p <= n; p++) next[p - 1] = u64(r);
          baseline.resizedTo(n);
          sums = next;
        }
        await writePageSums(db, new PageSums(4096, sums, undefined, baseline));
        const want = new PageSums(4096, sums).encode();
        assert.deepEqual(readFileSync(pageSumsPath(db)), want, `seed ${seed}, flush ${flush}`);
        assert.equal(baseline.changed.size, 0, 'the baseline moved on to the file written');
        const small = changes + Math.max(0, sums.length - count) < sums.length / 4;
        if (small) assert.equal(statSync(pageSumsPath(db)).ino, inoBefore, `seed ${seed}, flush ${flush}: in place`);
      }
    }
  });

  it('patches a version-2 file into version 1 in place, and rewrites a file someone else replaced since', async () => {
    const db = ts.tmpPath('replaced.db');
    const sums = new BigUint64Array(300).map((_, i) => BigInt(i + 1));
    await writePageSums(db, new PageSums(4096, sums, new Uint32Array(600).fill(9)));
    const read = await readPageSums(db);
    assert.ok(read?.file);
    const baseline = new SumsBaseline(read.file, 300);
    sums[4] = 99n;
    baseline.changed.add(5);
    const ino = statSync(pageSumsPath(db)).ino;
    assert.equal(await writePageSums(db, new PageSums(4096, sums, undefined, baseline)), 1);
    assert.deepEqual(
      readFileSync(pageSumsPath(db)),
      new PageSums(4096, sums).encode(),
      'hashes cut off, page 5 patched',
    );
    assert.equal(statSync(pageSumsPath(db)).ino, ino, 'in place');
    // Another writer replaces the file with other sums: the next patch must not build on it.
    await writePageSums(db, new PageSums(4096, new BigUint64Array(300).fill(1n)));
    sums[6] = 77n;
    baseline.changed.add(7);
    await writePageSums(db, new PageSums(4096, sums, undefined, baseline));
    assert.deepEqual(readFileSync(pageSumsPath(db)), new PageSums(4096, sums).encode(), 'rewritten whole');
  });

  it('a session closed after random writes and flushes leaves the sums a fresh scan of its checkout computes', async () => {
    const seed = ts.tmpPath('seed.db');
    runSql(
      seed,
      `CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB);
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
       INSERT INTO t(body) SELECT randomblob(300) FROM n;`,
    );
    await create(ts.ctx, 'app', { from: seed });
    await fork(ts.ctx, { db: 'app', branch: 'main' }, 'ep');
    const live = ts.context({ now: () => new Date(), holder: 'daemon-host/1' });
    const r = random(7);
    let ino: bigint | undefined;
    for (let round = 0; round < 4; round++) {
      const session = await Session.open(live, { db: 'app', branch: 'ep' }, {});
      for (let step = 0; step < 6; step++) {
        // The last rounds change a few pages only, so their closes patch rather than rewrite.
        const kind = round >= 2 ? 3 : r(4);
        if (kind === 0) runSql(session.path, `INSERT INTO t(body) SELECT randomblob(300) FROM t LIMIT ${1 + r(200)};`);
        else if (kind === 1) runSql(session.path, `DELETE FROM t WHERE id % ${2 + r(30)} = 0;`);
        else runSql(session.path, `UPDATE t SET body = randomblob(300) WHERE id = ${1 + r(3000)};`);
        if (r(2) === 0) await session.flush({ kind: 'manual' });
      }
      await session.close();
      const written = await readPageSums(session.path);
      assert.ok(written, `round ${round}: the close re-stamped the checkout`);
      assert.deepEqual(written.encode(), scan(session.path).encode(), `round ${round}: the sums are the checkout's`);
      assert.equal(written.rollingChecksum().toString(16), readSidecar(session.path)?.ltx_checksum);
      const now = BigInt(statSync(pageSumsPath(session.path), { bigint: true }).ino);
      if (round >= 2) assert.equal(now, ino, `round ${round}: the file is patched in place, not rewritten`);
      ino = now;
    }
  });
});
