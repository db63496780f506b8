import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasCode } from '../../src/core/errors.js';
import { walChecksum } from '../../src/sqlite/wal-checksum.js';
import { WalReader, isWalRestarted, readAllTransactions, type WalTransaction } from '../../src/sqlite/wal-reader.js';

const VECTOR_DIR = fileURLToPath(new URL('../vectors/wal/', import.meta.url));
const PAGE = 512;
const FRAME = 24 + PAGE;

interface WalFacts {
  page_size: number;
  salt1: string;
  salt2: string;
  valid_frames: number;
  valid_end_offset: number;
  transactions: Array<Array<[number, number]>>;
}
const facts = JSON.parse(fs.readFileSync(path.join(VECTOR_DIR, 'vectors.json'), 'utf8')) as {
  files: Record<string, WalFacts>;
};
const walVectors = Object.entries(facts.files).filter(([name]) => name.endsWith('.wal'));
const vector = (name: string): Buffer => fs.readFileSync(path.join(VECTOR_DIR, name));

function withTempDir(fn: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    try {
      await fn(dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** Transactions as vectors.json writes them: [pgno, commit size] per frame, commit size only on the last. */
const shape = (txns: WalTransaction[]): Array<Array<[number, number]>> =>
  txns.map((t) => t.frames.map((f, i): [number, number] => [f.pgno, i === t.frames.length - 1 ? t.commitSize : 0]));

function applyAll(base: Buffer, txns: WalTransaction[]): Buffer {
  let image = Buffer.from(base);
  for (const t of txns) {
    const next = Buffer.alloc(Math.max(image.length, t.commitSize * PAGE));
    image.copy(next);
    for (const f of t.frames) f.data.copy(next, (f.pgno - 1) * PAGE);
    image = next.subarray(0, t.commitSize * PAGE);
  }
  return image;
}

/** A frame that continues the chain of `wal` (whose last frame is valid): right salts, right checksum unless told. */
function nextFrame(
  wal: Buffer,
  opts: { pgno?: number; commit?: number; salt1?: number; corruptChecksum?: boolean; fill?: number } = {},
): Buffer {
  const frame = Buffer.alloc(FRAME, opts.fill ?? 0x5a);
  frame.writeUInt32BE(opts.pgno ?? 2, 0);
  frame.writeUInt32BE(opts.commit ?? 2, 4);
  frame.writeUInt32BE(opts.salt1 ?? wal.readUInt32BE(16), 8);
  frame.writeUInt32BE(wal.readUInt32BE(20), 12);
  const last = wal.length - FRAME;
  const seed: [number, number] =
    last >= 32
      ? [wal.readUInt32BE(last + 16), wal.readUInt32BE(last + 20)]
      : [wal.readUInt32BE(24), wal.readUInt32BE(28)];
  const [c1, c2] = walChecksum(frame.subarray(24), false, ...walChecksum(frame.subarray(0, 8), false, ...seed));
  frame.writeUInt32BE(opts.corruptChecksum ? (c1 ^ 1) >>> 0 : c1, 16);
  frame.writeUInt32BE(c2, 20);
  return frame;
}

test('every vector groups into the transactions and valid end offset vectors.json records', async () => {
  assert.ok(walVectors.length >= 3);
  for (const [name, f] of walVectors) {
    const scan = await readAllTransactions(path.join(VECTOR_DIR, name), PAGE);
    assert.deepEqual(shape(scan.transactions), f.transactions, name);
    assert.equal(scan.endOffset, f.valid_end_offset, name);
    assert.equal(scan.header?.salt1, parseInt(f.salt1, 16), name);
    assert.equal(scan.transactions.at(-1)?.endOffset, f.valid_end_offset, name);
    assert.equal(scan.transactions.flatMap((t) => t.frames).length, f.valid_frames, name);
  }
  assert.equal((await readAllTransactions(path.join(VECTOR_DIR, 'a-3txn-ps512.wal'))).endOffset, 2176);
  assert.equal((await readAllTransactions(path.join(VECTOR_DIR, 'b-after-restart-ps512.wal'))).endOffset, 568);
});

test('frames are private copies of the page bytes', async () => {
  const bytes = vector('a-3txn-ps512.wal');
  const { transactions } = await readAllTransactions(path.join(VECTOR_DIR, 'a-3txn-ps512.wal'));
  const frames = transactions.flatMap((t) => t.frames);
  const buffers = new Set(frames.map((f) => f.data.buffer));
  assert.equal(buffers.size, frames.length, 'no two frames share memory');
  frames.forEach((f, i) => {
    const offset = 32 + i * FRAME + 24;
    assert.ok(f.data.equals(bytes.subarray(offset, offset + PAGE)), `frame ${i + 1} bytes`);
    assert.equal(f.data.byteOffset, 0);
    assert.equal(f.data.buffer.byteLength, PAGE, 'not carved out of a shared pool');
  });
  (frames[0] as { data: Buffer }).data.fill(0);
  const again = await readAllTransactions(path.join(VECTOR_DIR, 'a-3txn-ps512.wal'));
  assert.ok(again.transactions[0]?.frames[0]?.data.equals(bytes.subarray(56, 56 + PAGE)));
});

test('applying a-3txn to a-base.db reproduces a-final.db byte for byte', async () => {
  const { transactions } = await readAllTransactions(path.join(VECTOR_DIR, 'a-3txn-ps512.wal'), PAGE);
  assert.ok(applyAll(vector('a-base.db'), transactions).equals(vector('a-final.db')));
});

test('applying b-after-restart to b-base-after-restart.db reproduces b-final.db byte for byte', async () => {
  const { transactions } = await readAllTransactions(path.join(VECTOR_DIR, 'b-after-restart-ps512.wal'), PAGE);
  const result = applyAll(vector('b-base-after-restart.db'), transactions);
  assert.ok(result.equals(vector('b-final.db')));
  assert.ok(!vector('b-base-after-restart.db').equals(vector('b-final.db')), 'the transaction changes something');
});

test(
  'next() returns one transaction per call and advances offset, framesRead and nothing else',
  withTempDir(async (dir) => {
    const wal = path.join(dir, 'x.db-wal');
    fs.writeFileSync(wal, vector('a-3txn-ps512.wal'));
    const r = new WalReader(wal, PAGE);
    assert.deepEqual([r.bound, r.offset, r.framesRead, r.salts, r.pageSize], [false, 0, 0, undefined, undefined]);
    const ends: number[] = [];
    for (let t = await r.next(); t; t = await r.next()) {
      ends.push(t.endOffset);
      assert.equal(r.offset, t.endOffset);
      assert.equal(r.framesRead, (t.endOffset - 32) / FRAME);
    }
    assert.deepEqual(ends, [1104, 1640, 2176]);
    assert.deepEqual(r.salts, { salt1: 0x25026ed8, salt2: 0x7e3da8bd });
    assert.equal(r.pageSize, PAGE);
    assert.equal(await r.next(), undefined);
    assert.equal(r.offset, 2176);
  }),
);

test(
  'a missing, empty or header-only WAL is "nothing yet"; binding happens at offset 32 with the header seed',
  withTempDir(async (dir) => {
    const wal = path.join(dir, 'x.db-wal');
    const bytes = vector('a-3txn-ps512.wal');
    const r = new WalReader(wal, PAGE);
    assert.equal(await r.next(), undefined);
    fs.writeFileSync(wal, Buffer.alloc(0));
    assert.equal(await r.next(), undefined);
    assert.equal(r.bound, false);
    fs.writeFileSync(wal, Buffer.alloc(32));
    assert.equal(await r.next(), undefined);
    assert.equal(r.bound, false);
    fs.writeFileSync(wal, bytes.subarray(0, 32));
    assert.equal(await r.next(), undefined);
    assert.deepEqual([r.bound, r.offset, r.framesRead], [true, 32, 0]);
    assert.deepEqual([r.header?.checksum1, r.header?.checksum2], [0xad390538, 0x22bb1a5b]);
    fs.writeFileSync(wal, bytes);
    assert.equal((await r.next())?.endOffset, 1104);
  }),
);

test(
  'a transaction that is still being written is not returned until its commit frame is complete',
  withTempDir(async (dir) => {
    const wal = path.join(dir, 'x.db-wal');
    const bytes = vector('a-3txn-ps512.wal');
    const r = new WalReader(wal);
    for (const cut of [32, 100, 568, 600, 1103]) {
      fs.writeFileSync(wal, bytes.subarray(0, cut));
      assert.equal(await r.next(), undefined, `cut at ${cut}`);
      assert.deepEqual([r.offset, r.framesRead], [32, 0], `state untouched at ${cut}`);
    }
    fs.writeFileSync(wal, bytes.subarray(0, 1104));
    const t = await r.next();
    assert.deepEqual(t && shape([t]), [
      [
        [1, 0],
        [2, 2],
      ],
    ]);
  }),
);

test(
  'a torn tail of 100 garbage bytes yields nothing new and no error',
  withTempDir(async (dir) => {
    const wal = path.join(dir, 'x.db-wal');
    const bytes = vector('a-3txn-ps512.wal');
    fs.writeFileSync(wal, bytes);
    const r = new WalReader(wal, PAGE);
    while (await r.next());
    fs.appendFileSync(wal, Buffer.alloc(100, 0xa7));
    assert.equal(await r.next(), undefined);
    assert.equal(r.offset, 2176);
    const scan = await readAllTransactions(wal, PAGE);
    assert.deepEqual([scan.transactions.length, scan.endOffset], [3, 2176]);
  }),
);

test(
  'appended frames: a valid one is read, a wrong checksum, wrong salts, a bad seed or page 0 is not',
  withTempDir(async (dir) => {
    const base = vector('a-3txn-ps512.wal');
    const cases: Array<[string, Buffer, boolean]> = [
      ['valid', nextFrame(base), true],
      ['wrong checksum', nextFrame(base, { corruptChecksum: true }), false],
      ['wrong salts', nextFrame(base, { salt1: (base.readUInt32BE(16) + 1) >>> 0 }), false],
      ['page number 0', nextFrame(base, { pgno: 0 }), false],
      // Chained from the header instead of the previous frame.
      ['wrong seed', nextFrame(base.subarray(0, 32), { commit: 2 }), false],
    ];
    for (const [label, frame, readable] of cases) {
      const wal = path.join(dir, `${label}.db-wal`);
      fs.writeFileSync(wal, base);
      const r = new WalReader(wal, PAGE);
      while (await r.next());
      fs.appendFileSync(wal, frame);
      const t = await r.next();
      if (readable) {
        assert.deepEqual([t?.endOffset, t?.commitSize, t?.frames[0]?.data[0]], [2176 + FRAME, 2, 0x5a], label);
      } else {
        assert.equal(t, undefined, label);
        assert.equal(r.offset, 2176, label);
      }
    }
  }),
);

test(
  'an uncommitted frame followed by a bad commit frame leaves the reader where it was',
  withTempDir(async (dir) => {
    const wal = path.join(dir, 'x.db-wal');
    const base = vector('a-3txn-ps512.wal');
    const pending = nextFrame(base, { pgno: 3, commit: 0 });
    const withPending = Buffer.concat([base, pending]);
    fs.writeFileSync(wal, Buffer.concat([withPending, nextFrame(withPending, { commit: 3, corruptChecksum: true })]));
    const r = new WalReader(wal, PAGE);
    while (await r.next());
    assert.deepEqual([r.offset, r.framesRead], [2176, 4]);
    fs.writeFileSync(wal, Buffer.concat([withPending, nextFrame(withPending, { commit: 3 })]));
    const t = await r.next();
    assert.deepEqual(t && shape([t]), [
      [
        [3, 0],
        [2, 3],
      ],
    ]);
    assert.equal(r.framesRead, 6);
  }),
);

test(
  'a restart under a bound reader is reported as WAL restarted, repeatedly, without moving the reader',
  withTempDir(async (dir) => {
    const wal = path.join(dir, 'x.db-wal');
    fs.writeFileSync(wal, vector('b-before-restart-ps512.wal'));
    const r = new WalReader(wal, PAGE);
    let n = 0;
    while (await r.next()) n++;
    assert.deepEqual([n, r.offset], [4, 2712]);
    fs.writeFileSync(wal, vector('b-after-restart-ps512.wal'));
    for (let attempt = 0; attempt < 2; attempt++) {
      await assert.rejects(r.next(), (err) => {
        assert.equal(isWalRestarted(err), true);
        assert.ok(hasCode(err, 'UNAVAILABLE') && err.hint);
        assert.deepEqual((err as unknown as { previous: unknown; current: unknown }).previous, {
          salt1: 0x78d9bd57,
          salt2: 0xb4910a46,
        });
        assert.deepEqual((err as unknown as { current: unknown }).current, { salt1: 0x78d9bd58, salt2: 0x2fc88a5c });
        return true;
      });
      assert.deepEqual([r.offset, r.salts?.salt1, r.framesRead], [2712, 0x78d9bd57, 5]);
    }
    const fresh = new WalReader(wal, PAGE);
    assert.equal((await fresh.next())?.endOffset, 568);
    assert.equal(await fresh.next(), undefined);
  }),
);

test(
  'a restart that truncated the WAL reads as nothing until the new header lands',
  withTempDir(async (dir) => {
    const wal = path.join(dir, 'x.db-wal');
    fs.writeFileSync(wal, vector('b-before-restart-ps512.wal'));
    const r = new WalReader(wal);
    while (await r.next());
    fs.truncateSync(wal, 0);
    assert.equal(await r.next(), undefined);
    fs.writeFileSync(wal, vector('b-after-restart-ps512.wal'));
    await assert.rejects(r.next(), (err) => isWalRestarted(err));
  }),
);

test(
  'a page size other than the expected one is a fatal typed error, not a restart',
  withTempDir(async (dir) => {
    const wal = path.join(dir, 'x.db-wal');
    fs.writeFileSync(wal, vector('a-3txn-ps512.wal'));
    const r = new WalReader(wal, 4096);
    await assert.rejects(r.next(), (err) => hasCode(err, 'CORRUPT') && !isWalRestarted(err) && /512/.test(err.message));
    assert.equal(r.bound, false);
    assert.throws(
      () => new WalReader(wal, 1000),
      (err) => hasCode(err, 'INVALID_ARGUMENT'),
    );
  }),
);

test(
  'a -wal path that cannot be read is a typed IO error',
  withTempDir(async (dir) => {
    const r = new WalReader(dir);
    await assert.rejects(r.next(), (err) => hasCode(err, 'IO') && err.hint !== undefined && !isWalRestarted(err));
    assert.equal(r.bound, false);
  }),
);

test('isWalRestarted is false for anything else', () => {
  for (const v of [undefined, null, new Error('x'), { code: 'UNAVAILABLE' }, { walRestarted: true }]) {
    assert.equal(isWalRestarted(v), false);
  }
});
