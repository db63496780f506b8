// The at-rest checkpoint's cost model: with fast page hashes recorded, finding the changed pages computes the LTX
// checksum of the changed pages only, and the result equals the full-checksum answer. Sidecars of both versions read.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { loadPageHasher } from '../../src/sqlite/page-hash.js';
import { diffPageSums, FileSource, geometryOf, scanPageSums } from '../../src/sqlite/page-scan.js';
import { PageSums } from '../../src/sqlite/page-sums.js';

async function scan(file: string, hashed: boolean): Promise<PageSums> {
  const hasher = hashed ? await loadPageHasher() : undefined;
  const src = new FileSource(file);
  try {
    return scanPageSums(src, geometryOf(src, src.size, file), hasher);
  } finally {
    src.close();
  }
}

test('a one-row change checksums only the changed pages, and agrees with a full comparison', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-pagesums-'));
  try {
    const file = path.join(dir, 'a.db');
    const db = openDatabase(file);
    db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB)');
    const ins = db.prepare('INSERT INTO t(body) VALUES (randomblob(900))');
    db.exec('BEGIN');
    for (let i = 0; i < 2000; i++) ins.run();
    db.exec('COMMIT');
    db.close();
    const hasher = await loadPageHasher();
    const src0 = new FileSource(file);
    const before = scanPageSums(src0, geometryOf(src0, src0.size, file), hasher);
    src0.close();
    assert.ok(before.hashes, 'a scan with a hasher records page hashes');

    const w = openDatabase(file);
    w.prepare('UPDATE t SET body = randomblob(900) WHERE id = 777').run();
    w.close();

    const src = new FileSource(file);
    try {
      const g = geometryOf(src, src.size, file);
      const fast = diffPageSums(src, g, before, hasher);
      const full = diffPageSums(src, g, before.withoutHashes());
      assert.deepEqual(fast.changed, full.changed, 'the same changed pages either way');
      assert.deepEqual(fast.sums.sums, full.sums.sums, 'the same checksums either way');
      assert.ok(fast.changed.length >= 1 && fast.changed.length <= 3, `one row changes a page or so: ${fast.changed}`);
      assert.equal(fast.checksummed, fast.changed.length, 'only the changed pages were checksummed');
      assert.equal(full.checksummed, g.pageCount - (g.pageCount >= 262145 ? 1 : 0), 'without hashes every page is');
    } finally {
      src.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('sidecars round-trip in both versions; version 1 (no hashes) still reads', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-pagesums-'));
  try {
    const file = path.join(dir, 'b.db');
    const db = openDatabase(file);
    db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)');
    db.close();
    const v1 = await scan(file, false);
    const v2 = await scan(file, true);
    const e1 = v1.encode();
    assert.equal(e1.subarray(0, 8).toString(), 'OSPS0001');
    assert.equal(v2.encode().subarray(0, 8).toString(), 'OSPS0002');
    const back1 = PageSums.decode(e1);
    assert.equal(back1.hashes, undefined);
    assert.deepEqual(back1.sums, v1.sums);
    const back2 = PageSums.decode(v2.encode());
    assert.deepEqual(back2.sums, v2.sums);
    assert.deepEqual(back2.hashes, v2.hashes);
    assert.equal(back2.rollingChecksum(), back1.rollingChecksum());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the rolling checksum is the XOR of every page checksum with the flag set, whatever the values', () => {
  const flag = 1n << 63n;
  let x = 0x9e3779b97f4a7c15n;
  const next = (): bigint => {
    x = (x * 6364136223846793005n + 1442695040888963407n) & 0xffff_ffff_ffff_ffffn;
    return x;
  };
  for (const n of [0, 1, 2, 7, 1000]) {
    const backing = new BigUint64Array(n + 3);
    for (let i = 0; i < backing.length; i++) backing[i] = next();
    // A view that starts past its buffer's start, as a subarray would.
    const sums = backing.subarray(2, 2 + n);
    let want = 0n;
    for (const s of sums) want ^= s;
    assert.equal(new PageSums(4096, sums).rollingChecksum(), flag | want, `${n} pages`);
  }
  const high = new BigUint64Array([0xffff_ffff_0000_0001n, 0x8000_0000_ffff_fffen, 0n]);
  assert.equal(new PageSums(4096, high).rollingChecksum(), flag | (0xffff_ffff_0000_0001n ^ 0x8000_0000_ffff_fffen));
});

test('a resized copy grows in place within its room, new pages unknown, and copies past it', () => {
  const base = new PageSums(4096, BigUint64Array.from([1n, 2n, 3n]));
  const shrunk = base.resized(2, 4);
  assert.deepEqual([...shrunk.sums], [1n, 2n]);
  assert.deepEqual([...base.sums], [1n, 2n, 3n], 'a copy: the original is as it was');
  shrunk.sums[0] = 9n;
  assert.equal(base.sums[0], 1n);
  const grown = shrunk.grownInPlace(6);
  assert.ok(grown !== undefined);
  assert.equal(grown.sums.buffer, shrunk.sums.buffer, 'the same buffer: nothing copied');
  assert.deepEqual([...grown.sums], [9n, 2n, 0n, 0n, 0n, 0n], 'the pages it grew by read as unknown');
  assert.equal(grown.grownInPlace(7), undefined, 'past the room it takes a copy');
  assert.equal(grown.grownInPlace(5), undefined, 'and it never shrinks in place');
  const hashed = new PageSums(4096, BigUint64Array.from([1n]), new Uint32Array(2)).resized(1, 4);
  assert.equal(hashed.grownInPlace(2), undefined, 'nor grows sums whose fast hashes would not follow');
});

test('a view shares the arrays and keeps a file of its own', () => {
  const base = new PageSums(4096, BigUint64Array.from([1n, 2n]), new Uint32Array(4));
  base.file = { ino: 1n, size: 28n, mtimeNs: 5n };
  const v = base.view();
  assert.equal(v.sums, base.sums);
  assert.equal(v.hashes, base.hashes);
  assert.deepEqual(v.file, base.file);
  v.file = undefined;
  assert.notEqual(base.file, undefined);
});
