import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyChain, applySegments } from '../../src/ltx/apply.js';
import { EMPTY_DB_CHECKSUM, databaseChecksum, foldPage, lockPgno, pageChecksum } from '../../src/ltx/checksum.js';
import { openLtxFile } from '../../src/ltx/decoder.js';
import { encodeSegment, encodeSnapshotFromDb } from '../../src/ltx/encoder.js';
import { makeDb } from './sqlite-files.js';

const PAGE = 65536;
const LOCK = lockPgno(PAGE);

function readPage(file: string, pgno: number): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(PAGE);
    fs.readSync(fd, b, 0, PAGE, (pgno - 1) * PAGE);
    return b;
  } finally {
    fs.closeSync(fd);
  }
}

function writePage(file: string, pgno: number, data: Buffer): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, data, 0, data.length, (pgno - 1) * PAGE);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A real 64 KiB-page SQLite file stretched (sparsely) past the 1 GiB lock page, with its header page count
 * updated and recognisable bytes on the pages around the lock page.
 */
function buildSparseDb(file: string, pages: number, markers: Map<number, Buffer>): void {
  makeDb(file, PAGE, (db) => {
    db.exec("CREATE TABLE t(x); INSERT INTO t VALUES ('around the pending byte')");
  });
  fs.truncateSync(file, pages * PAGE);
  const header = readPage(file, 1);
  header.writeUInt32BE(pages, 28);
  writePage(file, 1, header);
  for (const [pgno, data] of markers) writePage(file, pgno, data);
}

test('snapshots and segments across the 1 GiB lock page (64 KiB pages, lock page 16385)', {
  timeout: 300_000,
}, async () => {
  assert.equal(LOCK, 16385);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const db = path.join(dir, 'big.db');
    const commit = LOCK + 2;
    const markers = new Map([LOCK - 1, LOCK + 1, LOCK + 2].map((p) => [p, randomBytes(PAGE)]));
    buildSparseDb(db, commit, markers);
    const full = await databaseChecksum(db);
    assert.equal(full.commit, commit);

    const ltx = path.join(dir, 'snap.ltx');
    const snap = await encodeSnapshotFromDb(db, ltx, { txid: 1 });
    assert.equal(snap.postApplyChecksum, full.checksum);
    const dec = openLtxFile(ltx);
    let expect = 1;
    let seen = 0;
    for await (const p of dec.pages()) {
      assert.equal(p.pgno, expect, 'pages run 1..commit and skip only the lock page');
      const marker = markers.get(p.pgno);
      if (marker !== undefined) assert.deepEqual(p.data, marker);
      expect = p.pgno + 1 === LOCK ? p.pgno + 2 : p.pgno + 1;
      seen++;
    }
    assert.equal(seen, commit - 1);
    assert.equal(dec.trailer().postApplyChecksum, full.checksum);

    const restored = path.join(dir, 'restored.db');
    const r = await applyChain([async () => fs.createReadStream(ltx, { highWaterMark: 1 << 20 })], restored);
    assert.deepEqual(r, { txid: 1, checksum: full.checksum, pageSize: PAGE, commit });
    assert.equal(fs.statSync(restored).size, commit * PAGE);
    assert.deepEqual(readPage(restored, LOCK), Buffer.alloc(PAGE), 'the lock page reads as zeros');
    for (const [pgno, data] of markers) assert.deepEqual(readPage(restored, pgno), data);
    assert.deepEqual(readPage(restored, 1), readPage(db, 1));

    // Grow past the lock page with a hole (page LOCK + 4 is zero-extended), then shrink below it.
    const grown = LOCK + 5;
    const grownHeader = readPage(restored, 1);
    grownHeader.writeUInt32BE(grown, 28);
    const growPages: Array<[number, Buffer]> = [
      [1, grownHeader],
      [LOCK - 2, randomBytes(PAGE)],
      [LOCK + 3, randomBytes(PAGE)],
      [LOCK + 5, randomBytes(PAGE)],
    ];
    let post = full.checksum;
    for (const [pgno, data] of growPages) {
      if (pgno <= commit) post = foldPage(post, pageChecksum(pgno, readPage(restored, pgno)));
      post = foldPage(post, pageChecksum(pgno, data));
    }
    post = foldPage(post, pageChecksum(LOCK + 4, Buffer.alloc(PAGE)));
    const grow = path.join(dir, 'grow.ltx');
    await encodeSegment(grow, {
      pageSize: PAGE,
      commit: grown,
      txid: 2,
      preApplyChecksum: full.checksum,
      postApplyChecksum: post,
      pages: growPages,
    });
    const afterGrow = await applySegments(restored, full.checksum, [async () => fs.createReadStream(grow)], {
      txid: 1,
    });
    assert.deepEqual(afterGrow, { txid: 2, checksum: post, pageSize: PAGE, commit: grown });
    assert.equal((await databaseChecksum(restored)).checksum, post, 'incremental checksum equals a full scan');

    const shrunk = LOCK - 3;
    const header = readPage(restored, 1);
    header.writeUInt32BE(shrunk, 28);
    let post2 = EMPTY_DB_CHECKSUM;
    for (let p = 1; p <= shrunk; p++)
      post2 = foldPage(post2, pageChecksum(p, p === 1 ? header : readPage(restored, p)));
    const shrink = path.join(dir, 'shrink.ltx');
    await encodeSegment(shrink, {
      pageSize: PAGE,
      commit: shrunk,
      txid: 3,
      preApplyChecksum: post,
      postApplyChecksum: post2,
      pages: [[1, header]],
    });
    const afterShrink = await applySegments(restored, post, [async () => fs.createReadStream(shrink)]);
    assert.deepEqual(afterShrink, { txid: 3, checksum: post2, pageSize: PAGE, commit: shrunk });
    assert.equal(fs.statSync(restored).size, shrunk * PAGE);
    assert.equal((await databaseChecksum(restored)).checksum, post2);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
