// The JavaScript LZ4 block decoder of the decode fast path agrees with lz4-napi on real blocks and stays inside
// its window on damaged ones (it reports -1 and the frame reader then judges the frame in full).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compressSync } from 'lz4-napi';
import { decodeBlockInto } from '../../src/ltx/lz4-decode.js';
import { Prng } from '../ops/prng.js';

function page(rng: Prng, size: number): Buffer {
  const p = Buffer.alloc(size);
  let i = 0;
  while (i < size) {
    const run = rng.int(1, 300);
    const kind = rng.int(0, 3);
    for (let k = 0; k < run && i < size; k++, i++) {
      p[i] = kind === 0 ? 0 : kind === 1 ? rng.int(0, 255) : kind === 2 ? 97 + (k % 7) : (p[i - 3] ?? 1);
    }
  }
  return p;
}

test('decodes what lz4 compresses, at any offset of the output buffer', () => {
  const rng = new Prng(42);
  for (let n = 0; n < 300; n++) {
    const size = [512, 1024, 4096, 65536][n % 4] as number;
    const data = page(rng, size);
    const block = compressSync(data).subarray(4);
    const at = rng.int(0, 64);
    const out = Buffer.alloc(at + size + 16, 0xee);
    assert.equal(decodeBlockInto(block, out, at, size), size, `case ${n}`);
    assert.ok(out.subarray(at, at + size).equals(data), `case ${n} bytes`);
    assert.ok(out.subarray(0, at).every((b) => b === 0xee) && out.subarray(at + size).every((b) => b === 0xee));
  }
});

test('periodic runs of every short period decode exactly (matches that overlap their own source)', () => {
  const rng = new Prng(11);
  for (let period = 1; period <= 70; period++) {
    const data = Buffer.alloc(4096);
    for (let i = 0; i < period; i++) data[i] = rng.int(0, 255);
    const runEnd = rng.int(period + 5, 4096);
    for (let i = period; i < runEnd; i++) data[i] = data[i - period] as number;
    for (let i = runEnd; i < 4096; i++) data[i] = rng.int(0, 255);
    const block = compressSync(data).subarray(4);
    const out = Buffer.alloc(4096);
    assert.equal(decodeBlockInto(block, out, 0, 4096), 4096, `period ${period}`);
    assert.ok(out.equals(data), `period ${period} bytes`);
  }
});

test('damaged blocks give -1 or a short length, never a write outside the window', () => {
  const rng = new Prng(7);
  const data = page(rng, 4096);
  const good = compressSync(data).subarray(4);
  for (let n = 0; n < 2000; n++) {
    const bad = Buffer.from(good.subarray(0, rng.int(0, good.length)));
    for (let k = rng.int(0, 3); k > 0 && bad.length > 0; k--) bad[rng.int(0, bad.length - 1)] = rng.int(0, 255);
    const out = Buffer.alloc(4096 + 64, 0xee);
    const got = decodeBlockInto(bad, out, 32, 4096);
    assert.ok(got === -1 || (got >= 0 && got <= 4096), `case ${n}: ${got}`);
    assert.ok(out.subarray(0, 32).every((b) => b === 0xee) && out.subarray(32 + 4096).every((b) => b === 0xee));
  }
});
