import { open } from 'node:fs/promises';
import { fail } from '../core/errors.js';
import { crcAppendRaw, crcRaw, crcUpdate, crcValue, initRegister, type Register } from './crc64.js';
import { readDbGeometry } from './db-file.js';
import { readPageChunks } from './page-chunks.js';
import { WASM_HALVES_MAX, wasmPageHashes } from './wasm-hashes.js';
import { xxh32 } from './xxh32.js';

/** Bit 63: set on every page, rolling and file checksum; a zero value means "absent". */
export const CHECKSUM_FLAG: bigint = 1n << 63n;

/** Rolling checksum of a database with no pages. */
export const EMPTY_DB_CHECKSUM: bigint = CHECKSUM_FLAG;

/** CRC-64/GO-ISO (Go `crc64.ISO`) of the concatenation of the given chunks, without the flag bit. */
export function crc64(...chunks: Uint8Array[]): bigint {
  const r = initRegister();
  for (const c of chunks) crcUpdate(r, c);
  return crcValue(r);
}

/** A streaming CRC-64/GO-ISO: feed chunks in order with update(), read the value with digest(). */
export class Crc64 {
  private readonly reg: Register = initRegister();

  /** Adds the chunks, in order, to the hashed stream. */
  update(...chunks: Uint8Array[]): this {
    for (const c of chunks) crcUpdate(this.reg, c);
    return this;
  }

  /** Adds a block known only by its raw register (see pageRaw) and length, as if its bytes were fed. */
  appendRaw(raw: Register, len: number): this {
    crcAppendRaw(this.reg, raw, len);
    return this;
  }

  /** The CRC of everything fed so far (the stream may continue afterwards). */
  digest(): bigint {
    return crcValue(this.reg);
  }
}

const pgnoReg: Register = { lo: 0, hi: 0 };
const pgnoBytes = Buffer.alloc(4);
const scratchRaw: Register = { lo: 0, hi: 0 };

/** LTX page checksum: FLAG | crc64(BE32(pgno) ‖ data). */
export function pageChecksum(pgno: number, data: Uint8Array): bigint {
  return pageChecksumFromRaw(pgno, crcRaw(data, scratchRaw), data.length);
}

/** The raw CRC-64 register of a page's bytes alone, into `out`: the one pass a decoder makes over a page. */
export function pageRaw(data: Uint8Array, out: Register): Register {
  return crcRaw(data, out);
}

const half: Register = { lo: 0, hi: 0 };

/**
 * The raw CRC-64 register of a page into `out` and, returned, its xxHash32 (the LZ4 content checksum): both from one
 * copy of the page into WebAssembly, for the decoder's fast path.
 */
export function pageRawAndXxh32(data: Uint8Array, out: Register): number {
  if (data.length < 64 || data.length % 32 !== 0 || data.length > WASM_HALVES_MAX) {
    crcRaw(data, out);
    return xxh32(data);
  }
  const sum = wasmPageHashes(data, out, half);
  crcAppendRaw(out, half, data.length / 2);
  return sum;
}

/** The page checksum of page `pgno` from its raw register (pageRaw) and length: no second pass over the bytes. */
export function pageChecksumFromRaw(pgno: number, raw: Register, len: number): bigint {
  pgnoReg.lo = 0xffffffff;
  pgnoReg.hi = 0xffffffff;
  pgnoBytes.writeUInt32BE(pgno, 0);
  crcUpdate(pgnoReg, pgnoBytes);
  crcAppendRaw(pgnoReg, raw, len);
  return CHECKSUM_FLAG | crcValue(pgnoReg);
}

/** The page holding SQLite's PENDING_BYTE (offset 1 GiB); it is never stored and never checksummed. */
export function lockPgno(pageSize: number): number {
  return Math.floor(0x40000000 / pageSize) + 1;
}

/** Folds one page checksum into (or out of) a rolling checksum: XOR is its own inverse. */
export function foldPage(c: bigint, pageCk: bigint): bigint {
  return CHECKSUM_FLAG | (c ^ pageCk);
}

/**
 * Rolling checksum of a SQLite database file, read in large chunks (never whole in memory), skipping the
 * lock page. The page count comes from the file size and must agree with the header's.
 */
export async function databaseChecksum(path: string): Promise<{ checksum: bigint; pageSize: number; commit: number }> {
  const fh = await open(path, 'r');
  try {
    const { pageSize, pageCount } = await readDbGeometry(fh, path);
    const lock = lockPgno(pageSize);
    const shrank = () =>
      fail('BUSY', `database ${path} shrank while its checksum was computed`, {
        hint: 'quiesce writers (close connections or checkpoint) and retry',
        retryable: true,
      });
    let checksum = EMPTY_DB_CHECKSUM;
    for await (const { first, data } of readPageChunks(fh, pageSize, 1, pageCount, shrank)) {
      for (let off = 0, pgno = first; off < data.length; off += pageSize, pgno++) {
        if (pgno !== lock) checksum = foldPage(checksum, pageChecksum(pgno, data.subarray(off, off + pageSize)));
      }
    }
    return { checksum, pageSize, commit: pageCount };
  } finally {
    await fh.close();
  }
}
