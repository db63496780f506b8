import { endianness } from 'node:os';
import { readSync } from 'node:fs';
import { fail } from '../core/errors.js';
import { walChecksum } from '../sqlite/wal-checksum.js';
import type { WalSalts } from '../sqlite/wal-reader.js';
import { dbFileFd } from './db-file-cache.js';

/** The fields of the wal-index header (the start of -shm) that say what SQLite has committed. */
export interface WalIndexHeader extends WalSalts {
  /** The last frame of the last committed transaction. */
  mxFrame: number;
}

const HEADER_BYTES = 48;
const WAL_INDEX_VERSION = 3007000;
const CHECKSUMMED_BYTES = 40;
const ATTEMPTS = 100;
const nativeBigEndian = endianness() === 'BE';

function parseCopy(buf: Buffer): WalIndexHeader | undefined {
  const u32 = (off: number): number => (nativeBigEndian ? buf.readUInt32BE(off) : buf.readUInt32LE(off));
  if (u32(0) !== WAL_INDEX_VERSION || buf[12] !== 1) return undefined;
  const [c1, c2] = walChecksum(buf.subarray(0, CHECKSUMMED_BYTES), nativeBigEndian, 0, 0);
  if (c1 !== u32(40) || c2 !== u32(44)) return undefined;
  // Native byte order everywhere except the salts, which are a raw copy of the -wal header bytes.
  return { mxFrame: u32(16), salt1: buf.readUInt32BE(32), salt2: buf.readUInt32BE(36) };
}

/**
 * Reads the wal-index header from -shm: a writer publishes frames in -wal first and only then commits them here,
 * so a transaction that is complete in -wal but beyond mxFrame is not committed (yet, or ever: its writer may have
 * been killed in between, and the next writer will overwrite it). Read through the shared never-closed descriptor,
 * since SQLite holds its locks on -shm. Returns undefined while the two header copies disagree (a writer is
 * mid-update, or died there; the next connection to read recovers it).
 */
export function readWalIndexHeader(shmPath: string): WalIndexHeader | undefined {
  const fd = dbFileFd(shmPath);
  const buf = Buffer.alloc(2 * HEADER_BYTES);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let bytesRead: number;
    try {
      bytesRead = readSync(fd, buf, 0, buf.length, 0);
    } catch (err) {
      throw fail('IO', `cannot read the wal-index ${shmPath}: ${(err as Error).message}`, {
        hint: 'check the disk holding the checkout and its permissions',
        cause: err,
      });
    }
    if (bytesRead < buf.length) return undefined;
    const first = buf.subarray(0, HEADER_BYTES);
    if (!first.equals(buf.subarray(HEADER_BYTES))) continue;
    return parseCopy(first);
  }
  return undefined;
}

/** True when two salt pairs name the same WAL generation; false when either is missing. */
export function sameGeneration(a: WalSalts | undefined, b: WalSalts | undefined): boolean {
  return a !== undefined && b !== undefined && a.salt1 === b.salt1 && a.salt2 === b.salt2;
}
