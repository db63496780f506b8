import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../../src/core/errors.js';
import { CHECKSUM_FLAG } from '../../src/ltx/checksum.js';
import { HEADER_SIZE, decodeHeader, encodeHeader, isSnapshot, type LtxHeader } from '../../src/ltx/header.js';

const base: LtxHeader = {
  flags: 0,
  pageSize: 4096,
  commit: 7,
  minTxid: 3,
  maxTxid: 5,
  timestamp: 1700000000000,
  preApplyChecksum: CHECKSUM_FLAG | 0x1234n,
  walOffset: 0,
  walSize: 0,
  walSalt1: 0,
  walSalt2: 0,
  nodeId: 0,
};

test('header fields round-trip through their fixed big-endian offsets', () => {
  const h: LtxHeader = {
    ...base,
    flags: 2,
    preApplyChecksum: 0n,
    walOffset: 32,
    walSize: 4152,
    walSalt1: 0xdeadbeef,
    walSalt2: 1,
    nodeId: 99,
    timestamp: -5,
  };
  const b = encodeHeader(h);
  assert.equal(b.length, HEADER_SIZE);
  assert.equal(b.toString('latin1', 0, 4), 'LTX1');
  assert.deepEqual([b.readUInt32BE(4), b.readUInt32BE(8), b.readUInt32BE(12)], [2, 4096, 7]);
  assert.deepEqual([b.readBigUInt64BE(16), b.readBigUInt64BE(24), b.readBigInt64BE(32)], [3n, 5n, -5n]);
  assert.deepEqual(
    [b.readBigInt64BE(48), b.readBigInt64BE(56), b.readUInt32BE(64), b.readUInt32BE(68), b.readBigUInt64BE(72)],
    [32n, 4152n, 0xdeadbeef, 1, 99n],
  );
  assert.ok(b.subarray(80).every((x) => x === 0));
  assert.deepEqual(decodeHeader(b), h);
  assert.equal(isSnapshot(h), false);
  assert.equal(isSnapshot({ ...h, minTxid: 1 }), true);
  for (const pageSize of [512, 1024, 2048, 8192, 16384, 32768, 65536])
    assert.equal(decodeHeader(encodeHeader({ ...base, pageSize })).pageSize, pageSize);
});

test('every header rule is enforced on encode (INVALID_ARGUMENT) and decode (CORRUPT)', () => {
  const bad: Array<[string, Partial<LtxHeader>]> = [
    ['flag bit 0', { flags: 1 }],
    ['unknown flag', { flags: 0x100 }],
    ['page size 0', { pageSize: 0 }],
    ['page size 256', { pageSize: 256 }],
    ['page size not a power of two', { pageSize: 3000 }],
    ['page size 131072', { pageSize: 131072 }],
    ['minTxid 0', { minTxid: 0 }],
    ['maxTxid 0', { maxTxid: 0 }],
    ['min > max', { minTxid: 6, maxTxid: 5 }],
    ['negative wal offset', { walOffset: -1 }],
    ['negative wal size', { walSize: -1, walOffset: 8 }],
    ['salt without wal offset', { walSalt1: 1 }],
    ['salt2 without wal offset', { walSalt2: 1 }],
    ['wal size without wal offset', { walSize: 10 }],
    ['snapshot with pre-apply', { minTxid: 1, preApplyChecksum: CHECKSUM_FLAG }],
    ['segment with zero pre-apply', { preApplyChecksum: 0n }],
    ['segment pre-apply without bit 63', { preApplyChecksum: 0x1234n }],
    ['no-checksum file with pre-apply', { flags: 2 }],
  ];
  for (const [what, over] of bad) {
    const h = { ...base, ...over };
    assert.throws(
      () => encodeHeader(h),
      (e) => hasCode(e, 'INVALID_ARGUMENT'),
      what,
    );
    const bytes = Buffer.alloc(HEADER_SIZE);
    bytes.write('LTX1', 0, 'latin1');
    bytes.writeUInt32BE(h.flags >>> 0, 4);
    bytes.writeUInt32BE(h.pageSize >>> 0, 8);
    bytes.writeUInt32BE(h.commit, 12);
    bytes.writeBigUInt64BE(BigInt(h.minTxid), 16);
    bytes.writeBigUInt64BE(BigInt(h.maxTxid), 24);
    bytes.writeBigUInt64BE(h.preApplyChecksum, 40);
    bytes.writeBigInt64BE(BigInt(h.walOffset), 48);
    bytes.writeBigInt64BE(BigInt(h.walSize), 56);
    bytes.writeUInt32BE(h.walSalt1, 64);
    bytes.writeUInt32BE(h.walSalt2, 68);
    assert.throws(
      () => decodeHeader(bytes),
      (e) => hasCode(e, 'CORRUPT'),
      what,
    );
  }
  const good = encodeHeader(base);
  assert.throws(
    () => decodeHeader(good.subarray(0, 99)),
    (e) => hasCode(e, 'CORRUPT'),
  );
  const magic = Buffer.from(good);
  magic[3] = 0x32;
  assert.throws(
    () => decodeHeader(magic),
    (e) => hasCode(e, 'CORRUPT'),
  );
  const huge = Buffer.from(good);
  huge.writeBigUInt64BE(1n << 60n, 24);
  assert.throws(
    () => decodeHeader(huge),
    (e) => hasCode(e, 'CORRUPT'),
    'txid beyond the safe integer range',
  );
  const reserved = Buffer.from(good);
  reserved[90] = 1;
  assert.deepEqual(decodeHeader(reserved), base, 'reserved bytes are ignored on read');
  assert.throws(
    () => encodeHeader({ ...base, commit: 1.5 }),
    (e) => hasCode(e, 'INVALID_ARGUMENT'),
  );
});
