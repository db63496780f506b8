import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { walChecksum } from '../../src/sqlite/wal-checksum.js';
import {
  WAL_FRAME_HEADER_SIZE,
  WAL_HEADER_SIZE,
  WAL_MAGIC_BE,
  WAL_MAGIC_LE,
  isValidPageSize,
  parseWalHeader,
} from '../../src/sqlite/wal-header.js';

const VECTOR_DIR = fileURLToPath(new URL('../vectors/wal/', import.meta.url));

interface WalFacts {
  magic: string;
  checksum_byte_order: string;
  version: number;
  page_size: number;
  checkpoint_seq: number;
  salt1: string;
  salt2: string;
  header_cksum1: string;
  header_cksum2: string;
}
const facts = JSON.parse(fs.readFileSync(path.join(VECTOR_DIR, 'vectors.json'), 'utf8')) as {
  files: Record<string, WalFacts>;
};
const walVectors = Object.entries(facts.files).filter(([name]) => name.endsWith('.wal'));
const aBytes = fs.readFileSync(path.join(VECTOR_DIR, 'a-3txn-ps512.wal'));

/** A 32-byte header with the given fields and a correct checksum in the order the magic selects. */
function buildHeader(fields: {
  magic: number;
  version?: number;
  pageSize?: number;
  seq?: number;
  salt1?: number;
  salt2?: number;
}): Buffer {
  const h = Buffer.alloc(WAL_HEADER_SIZE);
  h.writeUInt32BE(fields.magic, 0);
  h.writeUInt32BE(fields.version ?? 3007000, 4);
  h.writeUInt32BE(fields.pageSize ?? 4096, 8);
  h.writeUInt32BE(fields.seq ?? 0, 12);
  h.writeUInt32BE(fields.salt1 ?? 0x01020304, 16);
  h.writeUInt32BE(fields.salt2 ?? 0xa0b0c0d0, 20);
  const [c1, c2] = walChecksum(h.subarray(0, 24), (fields.magic & 1) === 1, 0, 0);
  h.writeUInt32BE(c1, 24);
  h.writeUInt32BE(c2, 28);
  return h;
}

test('sizes are the ones SQLite uses', () => {
  assert.equal(WAL_HEADER_SIZE, 32);
  assert.equal(WAL_FRAME_HEADER_SIZE, 24);
});

test('every vector header parses to the fields vectors.json records', () => {
  assert.ok(walVectors.length >= 3);
  for (const [name, f] of walVectors) {
    const h = parseWalHeader(fs.readFileSync(path.join(VECTOR_DIR, name)));
    assert.ok(h, name);
    assert.equal(h.magic.toString(16), f.magic, name);
    assert.equal(h.bigEndianChecksum, f.checksum_byte_order === 'big', name);
    assert.equal(h.version, f.version, name);
    assert.equal(h.pageSize, f.page_size, name);
    assert.equal(h.checkpointSeq, f.checkpoint_seq, name);
    assert.equal(h.salt1, parseInt(f.salt1, 16), name);
    assert.equal(h.salt2, parseInt(f.salt2, 16), name);
    assert.equal(h.checksum1, parseInt(f.header_cksum1, 16), name);
    assert.equal(h.checksum2, parseInt(f.header_cksum2, 16), name);
  }
});

test('parses from a view that does not start at the beginning of its buffer', () => {
  const backing = Buffer.concat([Buffer.alloc(13, 0xee), aBytes.subarray(0, 32)]);
  const h = parseWalHeader(backing.subarray(13));
  assert.equal(h?.salt1, 0x25026ed8);
});

test('short, all-zero or unknown headers mean "nothing yet"', () => {
  assert.equal(parseWalHeader(new Uint8Array(0)), undefined);
  assert.equal(parseWalHeader(aBytes.subarray(0, 31)), undefined);
  assert.equal(parseWalHeader(new Uint8Array(32)), undefined);
  assert.equal(parseWalHeader(buildHeader({ magic: 0x377f0681 })), undefined);
  assert.equal(parseWalHeader(buildHeader({ magic: WAL_MAGIC_LE, version: 3007001 })), undefined);
});

test('every single-bit flip in a vector header is rejected', () => {
  for (let bit = 0; bit < 32 * 8; bit++) {
    const copy = Buffer.from(aBytes.subarray(0, 32));
    copy[bit >> 3] = (copy[bit >> 3] as number) ^ (1 << (bit & 7));
    assert.equal(parseWalHeader(copy), undefined, `bit ${bit}`);
  }
});

test('a checksum-correct header with a page size SQLite would refuse is rejected', () => {
  for (const pageSize of [0, 1, 256, 1000, 131072]) {
    assert.equal(parseWalHeader(buildHeader({ magic: WAL_MAGIC_LE, pageSize })), undefined, `page size ${pageSize}`);
  }
  assert.equal(parseWalHeader(buildHeader({ magic: WAL_MAGIC_LE, pageSize: 65536 }))?.pageSize, 65536);
});

test('the big-endian magic selects big-endian checksum words', () => {
  const be = buildHeader({ magic: WAL_MAGIC_BE, seq: 9, salt1: 0xdeadbeef, salt2: 7 });
  const h = parseWalHeader(be);
  assert.ok(h);
  assert.equal(h.bigEndianChecksum, true);
  assert.deepEqual([h.checkpointSeq, h.salt1, h.salt2, h.pageSize], [9, 0xdeadbeef, 7, 4096]);
  // The same bytes under the little-endian magic carry a checksum computed the other way round.
  const relabelled = Buffer.from(be);
  relabelled.writeUInt32BE(WAL_MAGIC_LE, 0);
  const [c1, c2] = walChecksum(relabelled.subarray(0, 24), true, 0, 0);
  relabelled.writeUInt32BE(c1, 24);
  relabelled.writeUInt32BE(c2, 28);
  assert.equal(parseWalHeader(relabelled), undefined);
});

test('isValidPageSize accepts exactly the powers of two from 512 to 65536', () => {
  for (const n of [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]) assert.equal(isValidPageSize(n), true, String(n));
  for (const n of [0, 1, 256, 511, 513, 3000, 131072, -512, 4096.5]) assert.equal(isValidPageSize(n), false, String(n));
});
