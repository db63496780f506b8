import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { hasCode } from '../../src/core/errors.js';
import { walChecksum } from '../../src/sqlite/wal-checksum.js';

const VECTOR_DIR = fileURLToPath(new URL('../vectors/wal/', import.meta.url));

interface FrameFacts {
  offset: number;
  cksum1: string;
  cksum2: string;
  valid: boolean;
}
interface WalFacts {
  page_size: number;
  header_cksum1: string;
  header_cksum2: string;
  frames: FrameFacts[];
}
const facts = JSON.parse(fs.readFileSync(path.join(VECTOR_DIR, 'vectors.json'), 'utf8')) as {
  files: Record<string, WalFacts>;
};
const walVectors = Object.entries(facts.files).filter(([name]) => name.endsWith('.wal'));
const hex = (n: number): string => n.toString(16).padStart(8, '0');

// Independent reference: assembles each word byte by byte and sums with BigInt, so it shares no trick with the
// implementation under test.
function referenceChecksum(data: Uint8Array, bigEndian: boolean, s1: number, s2: number): [number, number] {
  const mask = (1n << 32n) - 1n;
  const word = (i: number): bigint => {
    const b = [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0, data[i + 3] ?? 0];
    const ordered = bigEndian ? b : b.reverse();
    return ordered.reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
  };
  let a = BigInt(s1);
  let c = BigInt(s2);
  for (let i = 0; i < data.length; i += 8) {
    a = (a + word(i) + c) & mask;
    c = (c + word(i + 4) + a) & mask;
  }
  return [Number(a), Number(c)];
}

test('header checksum of every vector matches the stored words (seed 0,0, little-endian words)', () => {
  assert.ok(walVectors.length >= 3);
  for (const [name, f] of walVectors) {
    const bytes = fs.readFileSync(path.join(VECTOR_DIR, name));
    const [c1, c2] = walChecksum(bytes.subarray(0, 24), false, 0, 0);
    assert.equal(hex(c1), f.header_cksum1, name);
    assert.equal(hex(c2), f.header_cksum2, name);
  }
});

test('frame checksums chain from the header checksum through frame bytes 0..7 and the page', () => {
  for (const [name, f] of walVectors) {
    const bytes = fs.readFileSync(path.join(VECTOR_DIR, name));
    let seed: [number, number] = [parseInt(f.header_cksum1, 16), parseInt(f.header_cksum2, 16)];
    for (const frame of f.frames.filter((fr) => fr.valid)) {
      const head = bytes.subarray(frame.offset, frame.offset + 8);
      const page = bytes.subarray(frame.offset + 24, frame.offset + 24 + f.page_size);
      seed = walChecksum(page, false, ...walChecksum(head, false, ...seed));
      assert.deepEqual(seed.map(hex), [frame.cksum1, frame.cksum2], `${name} frame at ${frame.offset}`);
    }
  }
});

test('stale frames left behind by a restart do not chain from the new generation', () => {
  const name = 'b-after-restart-ps512.wal';
  const f = facts.files[name] as WalFacts;
  const bytes = fs.readFileSync(path.join(VECTOR_DIR, name));
  const [first, stale] = f.frames;
  assert.ok(first?.valid && stale && !stale.valid);
  const seed: [number, number] = [parseInt(first.cksum1, 16), parseInt(first.cksum2, 16)];
  const head = bytes.subarray(stale.offset, stale.offset + 8);
  const page = bytes.subarray(stale.offset + 24, stale.offset + 24 + f.page_size);
  const got = walChecksum(page, false, ...walChecksum(head, false, ...seed));
  assert.notDeepEqual(got.map(hex), [stale.cksum1, stale.cksum2]);
});

test('the result depends on the seed: frame 1 does not verify with seed (0,0) or an off-by-one seed', () => {
  const f = facts.files['a-3txn-ps512.wal'] as WalFacts;
  const bytes = fs.readFileSync(path.join(VECTOR_DIR, 'a-3txn-ps512.wal'));
  const frame = f.frames[0] as FrameFacts;
  const run = (s1: number, s2: number): string[] =>
    walChecksum(bytes.subarray(56, 56 + f.page_size), false, ...walChecksum(bytes.subarray(32, 40), false, s1, s2)).map(
      hex,
    );
  const h1 = parseInt(f.header_cksum1, 16);
  const h2 = parseInt(f.header_cksum2, 16);
  assert.deepEqual(run(h1, h2), [frame.cksum1, frame.cksum2]);
  for (const [s1, s2] of [
    [0, 0],
    [h1 + 1, h2],
    [h1, h2 + 1],
    [h2, h1],
  ] as const) {
    assert.notDeepEqual(run(s1 >>> 0, s2 >>> 0), [frame.cksum1, frame.cksum2], `seed ${s1},${s2}`);
  }
});

test('agrees with an independent reference on random data, seeds, byte orders and unaligned views', () => {
  for (let round = 0; round < 60; round++) {
    const len = 8 * (round % 20) + (round > 40 ? 4096 : 0);
    const shift = round % 8;
    const backing = randomBytes(len + shift);
    const data = backing.subarray(shift, shift + len);
    const [s1, s2] = [randomBytes(4).readUInt32LE(0), randomBytes(4).readUInt32LE(0)];
    for (const bigEndian of [false, true]) {
      assert.deepEqual(
        walChecksum(data, bigEndian, s1, s2),
        referenceChecksum(data, bigEndian, s1, s2),
        `len ${len} shift ${shift}`,
      );
    }
  }
});

test('wraps modulo 2^32 and always returns unsigned words', () => {
  const ones = new Uint8Array(64).fill(0xff);
  const got = walChecksum(ones, false, 0xffffffff, 0xffffffff);
  assert.deepEqual(got, referenceChecksum(ones, false, 0xffffffff, 0xffffffff));
  for (const word of got) assert.ok(Number.isInteger(word) && word >= 0 && word <= 0xffffffff);
});

test('big-endian words over byte-swapped data equal little-endian words over the original', () => {
  const data = randomBytes(512);
  const swapped = Buffer.from(data).swap32();
  assert.deepEqual(walChecksum(swapped, true, 7, 11), walChecksum(data, false, 7, 11));
  assert.notDeepEqual(walChecksum(data, true, 7, 11), walChecksum(data, false, 7, 11));
});

test('empty input returns the seed; a length that is not a multiple of 8 is a typed error', () => {
  assert.deepEqual(walChecksum(new Uint8Array(0), false, 5, 6), [5, 6]);
  for (const len of [1, 4, 12, 511]) {
    assert.throws(
      () => walChecksum(new Uint8Array(len), false, 0, 0),
      (err) => hasCode(err, 'INVALID_ARGUMENT') && err.hint !== undefined,
    );
  }
});
