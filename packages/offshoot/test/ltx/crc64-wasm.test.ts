// The WebAssembly CRC-64 (one lane and two interleaved lanes) gives exactly the registers of the JavaScript
// slicing-by-8 reference, at every length, alignment and split, so page and file checksums keep their values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createCRC64 } from 'hash-wasm';
import { crcAppendRaw, crcRaw, crcUpdate, type Register } from '../../src/ltx/crc64.js';
import { wasmCrcRaw, wasmCrcRawHalves } from '../../src/ltx/crc64-wasm.js';
import { pageChecksum } from '../../src/ltx/checksum.js';
import { Prng } from '../ops/prng.js';

function reference(data: Uint8Array): Register {
  const r = { lo: 0, hi: 0 };
  crcUpdate(r, data);
  return r;
}

function bytes(rng: Prng, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = rng.int(0, 255);
  return b;
}

test('one lane matches the reference at every length and offset, past the 64 KiB window too', () => {
  const rng = new Prng(3);
  const data = bytes(rng, 200_000);
  const lengths = [0, 1, 7, 15, 16, 17, 31, 33, 64, 100, 4095, 4096, 4097, 65535, 65536, 65537, 131072, 199_990];
  for (const len of lengths) {
    for (const off of [0, 1, 3, 8]) {
      const part = data.subarray(off, off + len);
      const got = { lo: 0, hi: 0 };
      wasmCrcRaw(part, got);
      assert.deepEqual(got, reference(part), `length ${len} at offset ${off}`);
    }
  }
});

test('two lanes joined by the zero-feed map match the reference for every page size', () => {
  const rng = new Prng(5);
  for (const len of [32, 64, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]) {
    const page = bytes(rng, len + 5).subarray(5);
    const a = { lo: 0, hi: 0 };
    const b = { lo: 0, hi: 0 };
    wasmCrcRawHalves(page, a, b);
    crcAppendRaw(a, b, len / 2);
    assert.deepEqual(a, reference(page), `page of ${len} bytes`);
    assert.deepEqual(crcRaw(page, { lo: 0, hi: 0 }), reference(page), `crcRaw of ${len} bytes`);
  }
});

test('page checksums equal FLAG | CRC-64/GO-ISO(BE32(pgno) ‖ page) as hash-wasm computes it independently', async () => {
  const hasher = await createCRC64('d800000000000000');
  const rng = new Prng(9);
  for (const size of [512, 4096, 65536]) {
    for (const pgno of [1, 2, 3, 0x12345, 0xfffffffe]) {
      const page = bytes(rng, size);
      const head = Buffer.alloc(4);
      head.writeUInt32BE(pgno >>> 0, 0);
      hasher.init();
      hasher.update(head);
      hasher.update(page);
      const want = (1n << 63n) | Buffer.from(hasher.digest('binary')).readBigUInt64BE(0);
      assert.equal(pageChecksum(pgno, page), want, `page ${pgno} of ${size} bytes`);
    }
  }
});
