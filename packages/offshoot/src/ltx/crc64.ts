// CRC-64/GO-ISO (Go `crc64.ISO`: reflected polynomial 0xD800000000000000, init and xorout all ones). Short inputs
// (headers, page numbers, the index) go through slicing-by-8 tables in plain JavaScript, the 64-bit register in two
// u32 halves; whole pages through the WebAssembly slicing-by-16 of wasm-hashes.ts (about three times faster). Because
// a CRC register is linear, R(s, data) = shift(s, len) ^ R(0, data): one pass over a page yields its raw register,
// and any prefix (the page number of a page checksum, the running file checksum) is folded in afterwards with eight
// table lookups. That is what lets a decoder hash each page once.

import { crc64SlicingTables } from './crc64-tables.js';
import { WASM_HALVES_MAX, wasmCrcRaw, wasmCrcRawHalves } from './wasm-hashes.js';

const T = crc64SlicingTables(8);
const [L0, L1, L2, L3, L4, L5, L6, L7] = T.lo as [
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
];
const [H0, H1, H2, H3, H4, H5, H6, H7] = T.hi as [
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
];

/** A raw CRC-64 register (no init or final inversion applied), as two unsigned 32-bit halves. */
export interface Register {
  lo: number;
  hi: number;
}

/** Advances register `r` in place over data[start, end). */
export function crcUpdate(r: Register, data: Uint8Array, start = 0, end = data.length): void {
  let lo = r.lo;
  let hi = r.hi;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    const a =
      lo ^
      ((data[i] as number) |
        ((data[i + 1] as number) << 8) |
        ((data[i + 2] as number) << 16) |
        ((data[i + 3] as number) << 24));
    const b =
      hi ^
      ((data[i + 4] as number) |
        ((data[i + 5] as number) << 8) |
        ((data[i + 6] as number) << 16) |
        ((data[i + 7] as number) << 24));
    lo =
      (L7[a & 255] as number) ^
      (L6[(a >>> 8) & 255] as number) ^
      (L5[(a >>> 16) & 255] as number) ^
      (L4[a >>> 24] as number) ^
      (L3[b & 255] as number) ^
      (L2[(b >>> 8) & 255] as number) ^
      (L1[(b >>> 16) & 255] as number) ^
      (L0[b >>> 24] as number);
    hi =
      (H7[a & 255] as number) ^
      (H6[(a >>> 8) & 255] as number) ^
      (H5[(a >>> 16) & 255] as number) ^
      (H4[a >>> 24] as number) ^
      (H3[b & 255] as number) ^
      (H2[(b >>> 8) & 255] as number) ^
      (H1[(b >>> 16) & 255] as number) ^
      (H0[b >>> 24] as number);
  }
  for (; i < end; i++) {
    const idx = (lo ^ (data[i] as number)) & 0xff;
    lo = (L0[idx] as number) ^ ((lo >>> 8) | (hi << 24));
    hi = (H0[idx] as number) ^ (hi >>> 8);
  }
  r.lo = lo >>> 0;
  r.hi = hi >>> 0;
}

/** The linear map "feed `len` zero bytes" on a register, as eight byte-indexed tables per half. */
class ZeroShift {
  readonly lo: Uint32Array[];
  readonly hi: Uint32Array[];

  constructor(readonly len: number) {
    // Image of each of the 64 basis vectors, then each table entry is the XOR of the images of its set bits.
    const basisLo = new Uint32Array(64);
    const basisHi = new Uint32Array(64);
    const zeros = Buffer.alloc(len);
    const r: Register = { lo: 0, hi: 0 };
    for (let bit = 0; bit < 64; bit++) {
      r.lo = bit < 32 ? 2 ** bit : 0;
      r.hi = bit < 32 ? 0 : 2 ** (bit - 32);
      crcUpdate(r, zeros);
      basisLo[bit] = r.lo;
      basisHi[bit] = r.hi;
    }
    this.lo = [];
    this.hi = [];
    for (let k = 0; k < 8; k++) {
      const tl = new Uint32Array(256);
      const th = new Uint32Array(256);
      for (let v = 1; v < 256; v++) {
        const low = v & -v;
        const bit = 8 * k + 31 - Math.clz32(low);
        const rest = v ^ low;
        tl[v] = ((tl[rest] as number) ^ (basisLo[bit] as number)) >>> 0;
        th[v] = ((th[rest] as number) ^ (basisHi[bit] as number)) >>> 0;
      }
      this.lo.push(tl);
      this.hi.push(th);
    }
  }

  /** r := shift(r) ^ (addLo, addHi). */
  apply(r: Register, addLo: number, addHi: number): void {
    const { lo: tl, hi: th } = this;
    const a = r.lo;
    const b = r.hi;
    let lo = addLo;
    let hi = addHi;
    for (let k = 0; k < 4; k++) {
      const x = (a >>> (8 * k)) & 0xff;
      const y = (b >>> (8 * k)) & 0xff;
      lo ^= ((tl[k] as Uint32Array)[x] as number) ^ ((tl[k + 4] as Uint32Array)[y] as number);
      hi ^= ((th[k] as Uint32Array)[x] as number) ^ ((th[k + 4] as Uint32Array)[y] as number);
    }
    r.lo = lo >>> 0;
    r.hi = hi >>> 0;
  }
}

const shifts = new Map<number, ZeroShift>();

/** The zero-feed map for `len` bytes, built once per length (pages come in few sizes). */
function zeroShift(len: number): ZeroShift {
  let s = shifts.get(len);
  if (s === undefined) {
    s = new ZeroShift(len);
    shifts.set(len, s);
  }
  return s;
}

/**
 * Appends a block to a register given only the block's raw register (R(0, block)) and length: afterwards `r` is
 * what feeding the block's bytes would have made it.
 */
export function crcAppendRaw(r: Register, raw: Register, len: number): void {
  zeroShift(len).apply(r, raw.lo, raw.hi);
}

const half: Register = { lo: 0, hi: 0 };

/**
 * The raw register R(0, data) of a block, into `out`: short blocks in JavaScript, pages in the WebAssembly
 * slicing-by-16 function as two interleaved lanes (its halves) joined by one zero-feed map.
 */
export function crcRaw(data: Uint8Array, out: Register): Register {
  if (data.length < 64) {
    out.lo = 0;
    out.hi = 0;
    crcUpdate(out, data);
  } else if (data.length % 32 === 0 && data.length <= WASM_HALVES_MAX) {
    wasmCrcRawHalves(data, out, half);
    crcAppendRaw(out, half, data.length / 2);
  } else {
    wasmCrcRaw(data, out);
  }
  return out;
}

/** The register as a 64-bit value. */
export function registerValue(r: Register): bigint {
  return (BigInt(r.hi) << 32n) | BigInt(r.lo);
}

/** A register after the standard all-ones init. */
export function initRegister(): Register {
  return { lo: 0xffffffff, hi: 0xffffffff };
}

/** The CRC value (final inversion applied) of a register that started from initRegister(). */
export function crcValue(r: Register): bigint {
  return (BigInt(~r.hi >>> 0) << 32n) | BigInt(~r.lo >>> 0);
}
