import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { walChecksum } from '../../src/sqlite/wal-checksum.js';
import { WAL_MAGIC_BE, WAL_MAGIC_LE, parseWalHeader } from '../../src/sqlite/wal-header.js';
import { WalReader, readAllTransactions } from '../../src/sqlite/wal-reader.js';

interface SyntheticFrame {
  pgno: number;
  data: Buffer;
}
interface SyntheticTxn {
  frames: SyntheticFrame[];
  commitSize: number;
}

/**
 * Writes a WAL the way SQLite would on a host of the given byte order. frameOrder lets a test checksum the
 * frames in the other order than the magic announces.
 */
function buildWal(opts: {
  bigEndian: boolean;
  pageSize: number;
  txns: SyntheticTxn[];
  frameOrderBigEndian?: boolean;
}): Buffer {
  const header = Buffer.alloc(32);
  header.writeUInt32BE(opts.bigEndian ? WAL_MAGIC_BE : WAL_MAGIC_LE, 0);
  header.writeUInt32BE(3007000, 4);
  header.writeUInt32BE(opts.pageSize, 8);
  header.writeUInt32BE(3, 12);
  header.writeUInt32BE(0x11223344, 16);
  header.writeUInt32BE(0x99aabbcc, 20);
  let seed = walChecksum(header.subarray(0, 24), opts.bigEndian, 0, 0);
  header.writeUInt32BE(seed[0], 24);
  header.writeUInt32BE(seed[1], 28);
  const frameOrder = opts.frameOrderBigEndian ?? opts.bigEndian;
  const parts = [header];
  for (const txn of opts.txns) {
    txn.frames.forEach((f, i) => {
      const frame = Buffer.alloc(24 + opts.pageSize);
      frame.writeUInt32BE(f.pgno, 0);
      frame.writeUInt32BE(i === txn.frames.length - 1 ? txn.commitSize : 0, 4);
      header.copy(frame, 8, 16, 24);
      f.data.copy(frame, 24);
      seed = walChecksum(frame.subarray(24), frameOrder, ...walChecksum(frame.subarray(0, 8), frameOrder, ...seed));
      frame.writeUInt32BE(seed[0], 16);
      frame.writeUInt32BE(seed[1], 20);
      parts.push(frame);
    });
  }
  return Buffer.concat(parts);
}

const txn = (pageSize: number, pgnos: number[], commitSize: number): SyntheticTxn => ({
  frames: pgnos.map((pgno) => ({ pgno, data: randomBytes(pageSize) })),
  commitSize,
});

async function inTempWal(bytes: Buffer, fn: (walPath: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const walPath = path.join(dir, 'x.db-wal');
    fs.writeFileSync(walPath, bytes);
    await fn(walPath);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function assertSameTransactions(
  got: Array<{ frames: SyntheticFrame[]; commitSize: number }>,
  want: SyntheticTxn[],
): void {
  assert.equal(got.length, want.length);
  got.forEach((t, i) => {
    const w = want[i] as SyntheticTxn;
    assert.equal(t.commitSize, w.commitSize, `txn ${i} commit size`);
    assert.deepEqual(
      t.frames.map((f) => f.pgno),
      w.frames.map((f) => f.pgno),
      `txn ${i} pages`,
    );
    for (const [k, f] of t.frames.entries()) {
      assert.ok(f.data.equals((w.frames[k] as SyntheticFrame).data), `txn ${i} frame ${k} data`);
    }
  });
}

test('big-endian checksum path: magic 0x377f0683 with every checksum computed over big-endian words', async () => {
  const txns = [txn(512, [1], 1), txn(512, [2, 3, 1], 3), txn(512, [3, 3], 3)];
  const bytes = buildWal({ bigEndian: true, pageSize: 512, txns });
  assert.equal(parseWalHeader(bytes)?.bigEndianChecksum, true);
  await inTempWal(bytes, async (walPath) => {
    const scan = await readAllTransactions(walPath, 512);
    assertSameTransactions(scan.transactions, txns);
    assert.equal(scan.endOffset, bytes.length);
  });
});

test('frames checksummed in the other byte order than the magic announces are not read', async () => {
  const txns = [txn(512, [1], 1), txn(512, [1], 1)];
  for (const bigEndian of [true, false]) {
    const bytes = buildWal({ bigEndian, pageSize: 512, txns, frameOrderBigEndian: !bigEndian });
    await inTempWal(bytes, async (walPath) => {
      const scan = await readAllTransactions(walPath);
      assert.equal(scan.header?.bigEndianChecksum, bigEndian, 'the header itself is valid');
      assert.deepEqual([scan.transactions.length, scan.endOffset], [0, 32]);
    });
  }
});

test('the same content written by a little- and a big-endian host differs only in magic and checksums', async () => {
  const txns = [txn(1024, [1, 2], 2)];
  const le = buildWal({ bigEndian: false, pageSize: 1024, txns });
  const be = buildWal({ bigEndian: true, pageSize: 1024, txns });
  assert.ok(!le.equals(be));
  for (const bytes of [le, be]) {
    await inTempWal(bytes, async (walPath) =>
      assertSameTransactions((await readAllTransactions(walPath)).transactions, txns),
    );
  }
});

test('transactions larger than one read are returned whole, in order, with a repeated page kept in place', async () => {
  // 64 KiB pages: 40 frames span several maximum-size reads; the 9-frame 512-byte case crosses the small first reads.
  for (const [pageSize, count] of [
    [65536, 40],
    [512, 9],
  ] as const) {
    const pgnos = Array.from({ length: count }, (_, i) => (i % 7) + 1);
    const txns = [txn(pageSize, pgnos, 7), txn(pageSize, [2], 7), txn(pageSize, [1, 1], 5)];
    const bytes = buildWal({ bigEndian: false, pageSize, txns });
    await inTempWal(bytes, async (walPath) => {
      const r = new WalReader(walPath, pageSize);
      const got = [];
      for (let t = await r.next(); t; t = await r.next()) got.push(t);
      assertSameTransactions(got, txns);
      assert.deepEqual(
        got.map((t) => t.endOffset),
        [count, count + 1, count + 3].map((n) => 32 + n * (24 + pageSize)),
      );
      assert.equal(r.framesRead, count + 3);
    });
  }
});

test('a large transaction with a torn commit frame is not returned, and is once the frame is complete', async () => {
  const pageSize = 65536;
  const txns = [
    txn(
      pageSize,
      Array.from({ length: 30 }, (_, i) => i + 1),
      30,
    ),
  ];
  const bytes = buildWal({ bigEndian: true, pageSize, txns });
  await inTempWal(bytes.subarray(0, bytes.length - 1), async (walPath) => {
    const r = new WalReader(walPath, pageSize);
    assert.equal(await r.next(), undefined);
    assert.deepEqual([r.bound, r.offset, r.framesRead], [true, 32, 0]);
    fs.writeFileSync(walPath, bytes);
    const t = await r.next();
    assert.equal(t?.frames.length, 30);
    assert.equal(r.offset, bytes.length);
  });
});
