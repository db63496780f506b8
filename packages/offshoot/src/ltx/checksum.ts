import { open } from 'node:fs/promises';
import { createCRC64 } from 'hash-wasm';
import { fail } from '../core/errors.js';
import { readDbGeometry } from './db-file.js';
import { readPageChunks } from './page-chunks.js';

/** Bit 63: set on every page, rolling and file checksum; a zero value means "absent". */
export const CHECKSUM_FLAG: bigint = 1n << 63n;

/** Rolling checksum of a database with no pages. */
export const EMPTY_DB_CHECKSUM: bigint = CHECKSUM_FLAG;

// One WASM instance serves every checksum: streams park their state between updates with save()/load().
const hasher = await createCRC64('d800000000000000');
hasher.init();
const initialState = hasher.save();
const pgnoBytes = Buffer.alloc(4);

function digestValue(): bigint {
  const d = hasher.digest('binary');
  return new DataView(d.buffer, d.byteOffset, d.byteLength).getBigUint64(0, false);
}

/** CRC-64/GO-ISO (Go `crc64.ISO`) of the concatenation of the given chunks, without the flag bit. */
export function crc64(...chunks: Uint8Array[]): bigint {
  hasher.init();
  for (const c of chunks) hasher.update(c);
  return digestValue();
}

/** A streaming CRC-64/GO-ISO: feed chunks in order with update(), read the value with digest(). */
export class Crc64 {
  private state: Uint8Array = initialState;

  /** Adds the chunks, in order, to the hashed stream. */
  update(...chunks: Uint8Array[]): this {
    hasher.load(this.state);
    for (const c of chunks) hasher.update(c);
    this.state = hasher.save();
    return this;
  }

  /** The CRC of everything fed so far (the stream may continue afterwards). */
  digest(): bigint {
    hasher.load(this.state);
    return digestValue();
  }
}

/** LTX page checksum: FLAG | crc64(BE32(pgno) ‖ data). */
export function pageChecksum(pgno: number, data: Uint8Array): bigint {
  pgnoBytes.writeUInt32BE(pgno, 0);
  hasher.init();
  hasher.update(pgnoBytes);
  hasher.update(data);
  return CHECKSUM_FLAG | digestValue();
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
