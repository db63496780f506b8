import { walChecksum } from './wal-checksum.js';

/** Size of the WAL file header. */
export const WAL_HEADER_SIZE = 32;
/** Size of the header that precedes every page in the WAL. */
export const WAL_FRAME_HEADER_SIZE = 24;
/** WAL magic whose checksum words are read little-endian. */
export const WAL_MAGIC_LE = 0x377f0682;
/** WAL magic whose checksum words are read big-endian. */
export const WAL_MAGIC_BE = 0x377f0683;
/** The only WAL format version SQLite has ever written. */
export const WAL_FORMAT_VERSION = 3007000;

/** The 32-byte -wal file header; every field is stored big-endian. */
export interface WalHeader {
  magic: number;
  /** Low bit of the magic: checksum words are big-endian when set. */
  bigEndianChecksum: boolean;
  version: number;
  pageSize: number;
  /** Incremented by SQLite on every WAL reset. */
  checkpointSeq: number;
  salt1: number;
  salt2: number;
  checksum1: number;
  checksum2: number;
}

/** True for a page size SQLite can use: a power of two from 512 to 65536. */
export function isValidPageSize(n: number): boolean {
  return Number.isInteger(n) && n >= 512 && n <= 65536 && (n & (n - 1)) === 0;
}

/**
 * Parses and validates a WAL header. Returns undefined for a short, unknown or checksum-failing header:
 * SQLite treats such a WAL as empty (or still being written), so it means "nothing yet", not an error.
 */
export function parseWalHeader(buf: Uint8Array): WalHeader | undefined {
  if (buf.byteLength < WAL_HEADER_SIZE) return undefined;
  const view = new DataView(buf.buffer, buf.byteOffset, WAL_HEADER_SIZE);
  const magic = view.getUint32(0);
  if (magic !== WAL_MAGIC_LE && magic !== WAL_MAGIC_BE) return undefined;
  const version = view.getUint32(4);
  if (version !== WAL_FORMAT_VERSION) return undefined;
  const bigEndianChecksum = (magic & 1) === 1;
  const checksum1 = view.getUint32(24);
  const checksum2 = view.getUint32(28);
  const [c1, c2] = walChecksum(buf.subarray(0, 24), bigEndianChecksum, 0, 0);
  if (c1 !== checksum1 || c2 !== checksum2) return undefined;
  const pageSize = view.getUint32(8);
  // SQLite's own WAL recovery rejects any other page size, so the WAL would be ignored by it too.
  if (!isValidPageSize(pageSize)) return undefined;
  return {
    magic,
    bigEndianChecksum,
    version,
    pageSize,
    checkpointSeq: view.getUint32(12),
    salt1: view.getUint32(16),
    salt2: view.getUint32(20),
    checksum1,
    checksum2,
  };
}
