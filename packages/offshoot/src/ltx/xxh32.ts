import { WASM_HALVES_MAX, wasmXxh32 } from './wasm-hashes.js';

// xxHash32 (seed 0), the LZ4 frame's content and descriptor checksum: short inputs in plain JavaScript, pages in the
// WebAssembly function of wasm-hashes.ts (compiled on first use, so start-up never pays for it).

const P1 = 0x9e3779b1 | 0;
const P2 = 0x85ebca77 | 0;
const P3 = 0xc2b2ae3d | 0;
const P4 = 0x27d4eb2f | 0;
const P5 = 0x165667b1 | 0;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function u32le(b: Uint8Array, i: number): number {
  return (b[i] as number) | ((b[i + 1] as number) << 8) | ((b[i + 2] as number) << 16) | ((b[i + 3] as number) << 24);
}

function xxh32Js(b: Uint8Array): number {
  const len = b.length;
  let i = 0;
  let h: number;
  if (len >= 16) {
    let v1 = (P1 + P2) | 0;
    let v2 = P2;
    let v3 = 0;
    let v4 = -P1 | 0;
    for (; i + 16 <= len; i += 16) {
      v1 = Math.imul(rotl((v1 + Math.imul(u32le(b, i), P2)) | 0, 13), P1);
      v2 = Math.imul(rotl((v2 + Math.imul(u32le(b, i + 4), P2)) | 0, 13), P1);
      v3 = Math.imul(rotl((v3 + Math.imul(u32le(b, i + 8), P2)) | 0, 13), P1);
      v4 = Math.imul(rotl((v4 + Math.imul(u32le(b, i + 12), P2)) | 0, 13), P1);
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = P5;
  }
  h = (h + len) | 0;
  for (; i + 4 <= len; i += 4) h = Math.imul(rotl((h + Math.imul(u32le(b, i), P3)) | 0, 17), P4);
  for (; i < len; i++) h = Math.imul(rotl((h + Math.imul(b[i] as number, P5)) | 0, 11), P1);
  h = Math.imul(h ^ (h >>> 15), P2);
  h = Math.imul(h ^ (h >>> 13), P3);
  return (h ^ (h >>> 16)) >>> 0;
}

/** xxHash32 (seed 0) of the concatenated chunks, as an unsigned number. */
export function xxh32(...chunks: Uint8Array[]): number {
  const data = chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
  return data.length >= 64 && data.length <= WASM_HALVES_MAX ? wasmXxh32(data) : xxh32Js(data);
}
