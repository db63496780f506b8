import { stat, type FileHandle } from 'node:fs/promises';
import { fail } from '../core/errors.js';

/** Page size and page count of a SQLite database file. */
export interface DbGeometry {
  pageSize: number;
  pageCount: number;
}

/** SQLite's default page size, reported for a zero-length (never written) database. */
const DEFAULT_PAGE_SIZE = 4096;
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/** True for the page sizes SQLite and LTX allow: a power of two from 512 to 65536. */
export function isValidPageSize(n: number): boolean {
  return Number.isInteger(n) && n >= 512 && n <= 65536 && (n & (n - 1)) === 0;
}

/**
 * Reads the page size from the database header (offset 16, 1 meaning 65536) and the page count from the
 * file size, cross-checked with the header's page count (offset 28) whenever SQLite marks that one valid.
 */
export async function readDbGeometry(fh: FileHandle, path: string): Promise<DbGeometry> {
  const { size } = await fh.stat();
  if (size === 0) return { pageSize: DEFAULT_PAGE_SIZE, pageCount: 0 };
  const hint = 'the file is not an intact SQLite database; restore it from a good copy';
  const hdr = Buffer.alloc(100);
  const { bytesRead } = await fh.read(hdr, 0, 100, 0);
  if (bytesRead < 100 || !hdr.subarray(0, 16).equals(SQLITE_MAGIC)) {
    throw fail('CORRUPT', `${path} is not a SQLite database (bad header)`, { hint });
  }
  const raw = hdr.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (!isValidPageSize(pageSize)) throw fail('CORRUPT', `${path} has an invalid page size ${raw}`, { hint });
  if (size % pageSize !== 0) {
    throw fail('CORRUPT', `${path} is ${size} bytes, not a whole number of ${pageSize}-byte pages`, { hint });
  }
  const pageCount = size / pageSize;
  const headerCount = hdr.readUInt32BE(28);
  const headerCountValid = headerCount !== 0 && hdr.readUInt32BE(92) === hdr.readUInt32BE(24);
  if (headerCountValid && headerCount !== pageCount) {
    throw fail('CORRUPT', `${path} header says ${headerCount} pages but the file holds ${pageCount}`, {
      hint: 'checkpoint the database (wal_checkpoint(TRUNCATE)) with no writers open, or restore it from a good copy',
    });
  }
  return { pageSize, pageCount };
}

/** Refuses (BUSY) a database whose -wal holds frames: its main file alone is not the current state. */
export async function assertWalEmpty(dbPath: string): Promise<void> {
  const wal = await stat(`${dbPath}-wal`).catch(() => undefined);
  if (wal !== undefined && wal.size > 0) {
    throw fail('BUSY', `${dbPath}-wal is not empty; the database file alone is not its current state`, {
      hint: 'checkpoint it (PRAGMA wal_checkpoint(TRUNCATE)) with writers closed, then retry',
      retryable: true,
    });
  }
}
