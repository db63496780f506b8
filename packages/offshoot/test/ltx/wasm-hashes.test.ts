// The WebAssembly hashes give exactly the values of independent implementations: the CRC-64 (one lane and two
// interleaved lanes) the registers of the JavaScript slicing-by-8 reference and hash-wasm's CRC-64/GO-ISO, the
// xxHash32 hash-wasm's, at every length, alignment and split, so page, file and LZ4 checksums keep their values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createCRC64, createXXHash32 } from 'hash-wasm';
import { crcAppendRaw, crcRaw, crcUpdate, type Register } from '../../src/ltx/crc64.js';
import { wasmCrcRaw, wasmCrcRawHalves } from '../../src/ltx/wasm-hashes.js';
import { pageChecksum, pageRawAndXxh32 } from '../../src/ltx/checksum.js';
import { xxh32 } from '../../src/ltx/xxh32.js';
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

test('xxHash32 (alone, and beside the CRC in one pass) equals hash-wasm at every length and offset', async () => {
  const hasher = await createXXHash32(0);
  const rng = new Prng(13);
  const data = bytes(rng, 70_000);
  for (const len of [0, 1, 3, 4, 5, 15, 16, 17, 19, 20, 31, 32, 63, 64, 65, 100, 4095, 4096, 65536, 65537]) {
    for (const off of [0, 1, 2, 3]) {
      const part = data.subarray(off, off + len);
      hasher.init();
      hasher.update(part);
      const want = Buffer.from(hasher.digest('binary')).readUInt32BE(0);
      assert.equal(xxh32(part), want, `length ${len} at offset ${off}`);
      if (len >= 64 && len % 32 === 0) {
        const raw = { lo: 0, hi: 0 };
        assert.equal(pageRawAndXxh32(part, raw), want, `page of ${len} at offset ${off}`);
        assert.deepEqual(raw, reference(part), `its CRC, ${len} at offset ${off}`);
      }
    }
  }
});
