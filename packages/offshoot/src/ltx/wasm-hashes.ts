// CRC-64/GO-ISO and xxHash32 in WebAssembly functions of our own, assembled here from their opcodes (a few hundred
// bytes, no toolchain). The CRC is slicing-by-16 on 64-bit registers: 16 table lookups per 16 bytes, half the
// dependency chain of the JavaScript slicing-by-8 loop; `crc2` runs two lanes (the halves of a page) interleaved, so
// one lane's lookups fill the other's latency. Both CRC functions compute raw registers (no init, no final
// inversion), which the page-checksum algebra in crc64.ts joins and completes. A page is copied into the module once
// for both hashes, and nothing is allocated per call.

import { crc64SlicingTables } from './crc64-tables.js';

/** Layout of the module's memory: the 16 tables (2 KiB each), the 8-byte register, the input window. */
const TABLES = 0;
const STATE = 32768;
const INPUT = 65536;
const INPUT_MAX = 65536;

/** The longest block wasmCrcRawHalves takes (its input window). */
export const WASM_HALVES_MAX = INPUT_MAX;
const MEMORY_PAGES = 3;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

// Opcodes used below.
const BLOCK = 0x02;
const LOOP = 0x03;
const VOID = 0x40;
const END = 0x0b;
const BR_IF = 0x0d;
const GET = 0x20;
const SET = 0x21;
const TEE = 0x22;
const IF = 0x04;
const ELSE = 0x05;
const I32_LOAD = 0x28;
const I32_LOAD8_U = 0x2d;
const I32_STORE = 0x36;
const I64_LOAD = 0x29;
const I64_STORE = 0x37;
const I32_CONST = 0x41;
const I64_CONST = 0x42;
const I32_LT_U = 0x49;
const I32_GE_U = 0x4f;
const I32_GT_U = 0x4b;
const I32_LE_U = 0x4d;
const I32_ADD = 0x6a;
const I32_MUL = 0x6c;
const I32_AND = 0x71;
const I32_XOR = 0x73;
const I32_SUB = 0x6b;
const I32_SHL = 0x74;
const I32_SHR_U = 0x76;
const I32_ROTL = 0x77;
const I64_XOR = 0x85;
const I64_SHR_U = 0x88;
const I32_WRAP_I64 = 0xa7;

// Locals: the two parameters, then the register, two bounds, the four 32-bit words of a 16-byte block, a temporary.
const P = 0;
const N = 1;
const C = 2;
const END16 = 3;
const LIMIT = 4;
const WORDS = [5, 6, 7, 8];
const TMP = 9;

const load64 = (offset: number): number[] => [I64_LOAD, 3, ...uleb(offset)];

/** Table (15 - m) looked up by byte m of the block (byte j of word m >> 2), as an i64 on the stack. */
function lookup(m: number, words: readonly number[]): number[] {
  const word = words[m >> 2] as number;
  const j = m & 3;
  const index = j === 0 ? [I32_CONST, 3, I32_SHL] : [I32_CONST, 8 * j - 3, I32_SHR_U];
  return [GET, word, ...index, I32_CONST, ...sleb(0x7f8), I32_AND, ...load64(TABLES + (15 - m) * 2048)];
}

/** Splits the i64 on the stack (kept in `tmp`) into its low and high 32-bit words. */
function split(tmp: number, word: number, hiWord: number): number[] {
  return [TEE, tmp, I32_WRAP_I64, SET, word, GET, tmp, I64_CONST, 32, I64_SHR_U, I32_WRAP_I64, SET, hiWord];
}

/** The next register: the XOR of the 16 table lookups of a block held in four words. */
function fold(words: readonly number[]): number[] {
  const out: number[] = [];
  for (let m = 0; m < 16; m++) out.push(...lookup(m, words), ...(m > 0 ? [I64_XOR] : []));
  return out;
}

/** The function crc(p, n): advances the register at STATE over the n bytes at p. */
function body(): number[] {
  const code = [
    ...[I32_CONST, ...sleb(STATE), ...load64(0), SET, C],
    ...[GET, P, GET, N, I32_ADD, SET, LIMIT],
    ...[GET, P, GET, N, I32_CONST, ...sleb(-16), I32_AND, I32_ADD, SET, END16],
    ...[BLOCK, VOID, GET, P, GET, END16, I32_GE_U, BR_IF, 0, LOOP, VOID],
    ...[GET, P, ...load64(0), GET, C, I64_XOR, ...split(TMP, WORDS[0] as number, WORDS[1] as number)],
    ...[GET, P, ...load64(8), ...split(TMP, WORDS[2] as number, WORDS[3] as number)],
    ...fold(WORDS),
    SET,
    C,
    ...[GET, P, I32_CONST, 16, I32_ADD, TEE, P, GET, END16, I32_LT_U, BR_IF, 0, END, END],
    // The tail, a byte at a time through table 0.
    ...[BLOCK, VOID, GET, P, GET, LIMIT, I32_GE_U, BR_IF, 0, LOOP, VOID],
    ...[GET, C, I32_WRAP_I64, GET, P, I32_LOAD8_U, 0, 0, I32_XOR, I32_CONST, ...sleb(255), I32_AND],
    ...[I32_CONST, 3, I32_SHL, ...load64(TABLES), GET, C, I64_CONST, 8, I64_SHR_U, I64_XOR, SET, C],
    ...[GET, P, I32_CONST, 1, I32_ADD, TEE, P, GET, LIMIT, I32_LT_U, BR_IF, 0, END, END],
    ...[I32_CONST, ...sleb(STATE), GET, C, I64_STORE, 3, 0, END],
  ];
  // Locals after the parameters: the register (i64), six i32 (two bounds, four words), the temporary (i64).
  const locals = [3, 1, 0x7e, 6, 0x7f, 1, 0x7e];
  const fn = [...locals, ...code];
  return [...uleb(fn.length), ...fn];
}

// Locals of crc2(p, n): the parameters, the two registers, the lane-B pointer, the end of lane A, eight words, TMP.
const C_B = 2;
const C_A = 3;
const Q = 4;
const HALF_END = 5;
const WORDS_A = [6, 7, 8, 9];
const WORDS_B = [10, 11, 12, 13];
const TMP2 = 14;

/**
 * The function crc2(p, n), n a multiple of 32: lane A over the first half from the register at STATE, lane B over
 * the second half from zero, interleaved so that the two dependency chains overlap; the registers land at STATE and
 * STATE + 8, to be joined by the caller.
 */
function body2(): number[] {
  const code = [
    ...[I32_CONST, ...sleb(STATE), ...load64(0), SET, C_A, I64_CONST, 0, SET, C_B],
    ...[GET, P, GET, N, I32_CONST, 1, I32_SHR_U, I32_ADD, TEE, HALF_END, SET, Q],
    ...[BLOCK, VOID, GET, P, GET, HALF_END, I32_GE_U, BR_IF, 0, LOOP, VOID],
    ...[GET, P, ...load64(0), GET, C_A, I64_XOR, ...split(TMP2, WORDS_A[0] as number, WORDS_A[1] as number)],
    ...[GET, P, ...load64(8), ...split(TMP2, WORDS_A[2] as number, WORDS_A[3] as number)],
    ...[GET, Q, ...load64(0), GET, C_B, I64_XOR, ...split(TMP2, WORDS_B[0] as number, WORDS_B[1] as number)],
    ...[GET, Q, ...load64(8), ...split(TMP2, WORDS_B[2] as number, WORDS_B[3] as number)],
    ...fold(WORDS_A),
    SET,
    C_A,
    ...fold(WORDS_B),
    SET,
    C_B,
    ...[GET, Q, I32_CONST, 16, I32_ADD, SET, Q],
    ...[GET, P, I32_CONST, 16, I32_ADD, TEE, P, GET, HALF_END, I32_LT_U, BR_IF, 0, END, END],
    ...[I32_CONST, ...sleb(STATE), GET, C_A, I64_STORE, 3, 0],
    ...[I32_CONST, ...sleb(STATE), GET, C_B, I64_STORE, 3, 8, END],
  ];
  const locals = [4, 2, 0x7e, 2, 0x7f, 8, 0x7f, 1, 0x7e];
  const fn = [...locals, ...code];
  return [...uleb(fn.length), ...fn];
}

// xxHash32 primes, as the signed 32-bit constants WebAssembly encodes.
const X1 = 0x9e3779b1 | 0;
const X2 = 0x85ebca77 | 0;
const X3 = 0xc2b2ae3d | 0;
const X4 = 0x27d4eb2f | 0;
const X5 = 0x165667b1 | 0;

// Locals of xxh(p, n) after its parameters: the end, the last 16-byte start, the four accumulators, the hash.
const X_END = 2;
const X_LIMIT = 3;
const X_V = [4, 5, 6, 7];
const X_H = 8;

const i32c = (v: number): number[] => [I32_CONST, ...sleb(v | 0)];

/** The function xxh(p, n): xxHash32 (seed 0) of the n bytes at p, stored at STATE + 16. */
function bodyXxh(): number[] {
  const round = (v: number, offset: number): number[] => [
    ...[GET, v, GET, P, I32_LOAD, 2, ...uleb(offset), ...i32c(X2), I32_MUL, I32_ADD],
    ...[...i32c(13), I32_ROTL, ...i32c(X1), I32_MUL, SET, v],
  ];
  const [v1, v2, v3, v4] = X_V as [number, number, number, number];
  const code = [
    ...[GET, P, GET, N, I32_ADD, SET, X_END],
    ...[GET, N, ...i32c(16), I32_GE_U, IF, VOID],
    ...[...i32c(X1 + X2), SET, v1, ...i32c(X2), SET, v2, ...i32c(0), SET, v3, ...i32c(-X1), SET, v4],
    ...[GET, X_END, ...i32c(16), I32_SUB, SET, X_LIMIT, LOOP, VOID],
    ...round(v1, 0),
    ...round(v2, 4),
    ...round(v3, 8),
    ...round(v4, 12),
    ...[GET, P, ...i32c(16), I32_ADD, TEE, P, GET, X_LIMIT, I32_LE_U, BR_IF, 0, END],
    ...[GET, v1, ...i32c(1), I32_ROTL, GET, v2, ...i32c(7), I32_ROTL, I32_ADD],
    ...[GET, v3, ...i32c(12), I32_ROTL, I32_ADD, GET, v4, ...i32c(18), I32_ROTL, I32_ADD, SET, X_H],
    ...[ELSE, ...i32c(X5), SET, X_H, END],
    ...[GET, X_H, GET, N, I32_ADD, SET, X_H],
    // Remaining words, then bytes.
    ...[BLOCK, VOID, GET, P, ...i32c(4), I32_ADD, GET, X_END, I32_GT_U, BR_IF, 0, LOOP, VOID],
    ...[GET, X_H, GET, P, I32_LOAD, 2, 0, ...i32c(X3), I32_MUL, I32_ADD, ...i32c(17), I32_ROTL, ...i32c(X4), I32_MUL],
    ...[SET, X_H, GET, P, ...i32c(4), I32_ADD, TEE, P, ...i32c(4), I32_ADD, GET, X_END, I32_LE_U, BR_IF, 0, END, END],
    ...[BLOCK, VOID, GET, P, GET, X_END, I32_GE_U, BR_IF, 0, LOOP, VOID],
    ...[GET, X_H, GET, P, I32_LOAD8_U, 0, 0, ...i32c(X5), I32_MUL, I32_ADD, ...i32c(11), I32_ROTL, ...i32c(X1)],
    ...[I32_MUL, SET, X_H, GET, P, ...i32c(1), I32_ADD, TEE, P, GET, X_END, I32_LT_U, BR_IF, 0, END, END],
    // Avalanche.
    ...[GET, X_H, GET, X_H, ...i32c(15), I32_SHR_U, I32_XOR, ...i32c(X2), I32_MUL, SET, X_H],
    ...[GET, X_H, GET, X_H, ...i32c(13), I32_SHR_U, I32_XOR, ...i32c(X3), I32_MUL, SET, X_H],
    ...[GET, X_H, GET, X_H, ...i32c(16), I32_SHR_U, I32_XOR, SET, X_H],
    ...[...i32c(STATE), GET, X_H, I32_STORE, 2, 16, END],
  ];
  const locals = [1, 7, 0x7f];
  const fn = [...locals, ...code];
  return [...uleb(fn.length), ...fn];
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

function moduleBytes(): Uint8Array {
  const name = (s: string): number[] => [s.length, ...Buffer.from(s, 'ascii')];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 2, 0x7f, 0x7f, 0]),
    ...section(3, [3, 0, 0, 0]),
    ...section(5, [1, 0, MEMORY_PAGES]),
    ...section(7, [4, ...name('crc'), 0, 0, ...name('crc2'), 0, 1, ...name('xxh'), 0, 2, ...name('mem'), 2, 0]),
    ...section(10, [3, ...body(), ...body2(), ...bodyXxh()]),
  ]);
}

/** The 16 slicing tables of CRC-64/GO-ISO laid out as the WebAssembly code reads them: lo/hi u32 pairs, table by table. */
function fillTables(mem: Uint32Array): void {
  const { lo, hi } = crc64SlicingTables(16);
  for (let k = 0; k < 16; k++) {
    const tl = lo[k] as Uint32Array;
    const th = hi[k] as Uint32Array;
    for (let i = 0; i < 256; i++) {
      mem[512 * k + 2 * i] = tl[i] as number;
      mem[512 * k + 2 * i + 1] = th[i] as number;
    }
  }
}

/** The part of the WebAssembly API used here (Node has it; its types live in the DOM library, not in @types/node). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

interface Instance {
  crc: (p: number, n: number) => void;
  crc2: (p: number, n: number) => void;
  xxh: (p: number, n: number) => void;
  bytes: Uint8Array;
  words: Uint32Array;
}

let instance: Instance | undefined;

/** Compiles the module on first use (about a millisecond), so commands that never hash a page never pay for it. */
function load(): Instance {
  if (instance !== undefined) return instance;
  const api = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const wasm = new api.Instance(new api.Module(moduleBytes()));
  const mem = wasm.exports.mem as { buffer: ArrayBuffer };
  const words = new Uint32Array(mem.buffer);
  fillTables(words);
  instance = {
    crc: wasm.exports.crc as Instance['crc'],
    crc2: wasm.exports.crc2 as Instance['crc2'],
    xxh: wasm.exports.xxh as Instance['xxh'],
    bytes: new Uint8Array(mem.buffer),
    words,
  };
  return instance;
}

/** The raw CRC-64/GO-ISO register R(0, data), into out (low and high 32 bits). */
export function wasmCrcRaw(data: Uint8Array, out: { lo: number; hi: number }): void {
  const { crc, bytes, words } = load();
  words[STATE / 4] = 0;
  words[STATE / 4 + 1] = 0;
  if (data.length <= INPUT_MAX) {
    bytes.set(data, INPUT);
    crc(INPUT, data.length);
  } else {
    for (let at = 0; at < data.length; at += INPUT_MAX) {
      const part = data.subarray(at, Math.min(at + INPUT_MAX, data.length));
      bytes.set(part, INPUT);
      crc(INPUT, part.length);
    }
  }
  out.lo = words[STATE / 4] as number;
  out.hi = words[STATE / 4 + 1] as number;
}

/**
 * The raw registers of the two halves of data, into a and b, computed as two interleaved lanes; data's length is a
 * multiple of 32 and at most WASM_HALVES_MAX. R(0, data) is then shift(a, length / 2) ^ b.
 */
export function wasmCrcRawHalves(data: Uint8Array, a: { lo: number; hi: number }, b: { lo: number; hi: number }): void {
  const { crc2, bytes, words } = load();
  words[STATE / 4] = 0;
  words[STATE / 4 + 1] = 0;
  bytes.set(data, INPUT);
  crc2(INPUT, data.length);
  a.lo = words[STATE / 4] as number;
  a.hi = words[STATE / 4 + 1] as number;
  b.lo = words[STATE / 4 + 2] as number;
  b.hi = words[STATE / 4 + 3] as number;
}

/**
 * Both hashes a decoder needs of one page, from a single copy into the module: the raw CRC-64 registers of its two
 * halves into a and b (as wasmCrcRawHalves) and, returned, its xxHash32 (the LZ4 frame's content checksum).
 */
export function wasmPageHashes(data: Uint8Array, a: { lo: number; hi: number }, b: { lo: number; hi: number }): number {
  const { crc2, xxh, bytes, words } = load();
  words[STATE / 4] = 0;
  words[STATE / 4 + 1] = 0;
  bytes.set(data, INPUT);
  crc2(INPUT, data.length);
  xxh(INPUT, data.length);
  a.lo = words[STATE / 4] as number;
  a.hi = words[STATE / 4 + 1] as number;
  b.lo = words[STATE / 4 + 2] as number;
  b.hi = words[STATE / 4 + 3] as number;
  return words[STATE / 4 + 4] as number;
}

/** xxHash32 (seed 0) of data (at most WASM_HALVES_MAX bytes), as an unsigned number. */
export function wasmXxh32(data: Uint8Array): number {
  const { xxh, bytes, words } = load();
  bytes.set(data, INPUT);
  xxh(INPUT, data.length);
  return words[STATE / 4 + 4] as number;
}
