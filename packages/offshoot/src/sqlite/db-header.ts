import { fail } from '../core/errors.js';
import { isValidPageSize } from './wal-header.js';

/** Size of the database header at the start of page 1. */
export const DB_HEADER_SIZE = 100;

const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/** The 100-byte SQLite database header; multi-byte fields are big-endian. */
export interface DbHeader {
  /** Page size in bytes (the on-disk value 1 already mapped to 65536). */
  pageSize: number;
  /** File format write version (offset 18): 1 = rollback journal, 2 = WAL. */
  writeVersion: number;
  /** File format read version (offset 19): 1 = rollback journal, 2 = WAL. */
  readVersion: number;
  /** Bytes reserved at the end of every page (offset 20). */
  reservedBytes: number;
  /** File change counter (offset 24). */
  changeCounter: number;
  /** In-header database size in pages (offset 28); trustworthy only when versionValidFor equals changeCounter. */
  pageCount: number;
  /** First freelist trunk page (offset 32), 0 when the freelist is empty. */
  freelistTrunk: number;
  /** Total freelist pages (offset 36). */
  freelistCount: number;
  /** Schema cookie (offset 40), bumped on every schema change. */
  schemaCookie: number;
  /** Schema format number (offset 44), 1 to 4. */
  schemaFormat: number;
  /** Suggested page cache size (offset 48). */
  defaultCacheSize: number;
  /** Largest root b-tree page in auto/incremental vacuum mode (offset 52), otherwise 0. */
  largestRootPage: number;
  /** Text encoding (offset 56): 1 = UTF-8, 2 = UTF-16le, 3 = UTF-16be, 0 before the schema exists. */
  textEncoding: number;
  /** PRAGMA user_version (offset 60). */
  userVersion: number;
  /** Non-zero for incremental vacuum mode (offset 64). */
  incrementalVacuum: number;
  /** PRAGMA application_id (offset 68). */
  applicationId: number;
  /** The change counter value at which pageCount was last written (offset 92). */
  versionValidFor: number;
  /** SQLITE_VERSION_NUMBER of the library that last wrote the file (offset 96). */
  sqliteVersion: number;
}

function notSqlite(message: string): never {
  throw fail('CORRUPT', message, {
    hint: 'point offshoot at an SQLite 3 database file (or restore it from a checkpoint)',
  });
}

/** Parses the first 100 bytes of an SQLite database; throws CORRUPT for anything that is not an SQLite 3 file. */
export function parseDbHeader(buf: Uint8Array): DbHeader {
  if (buf.byteLength < DB_HEADER_SIZE)
    notSqlite(`database header is ${buf.byteLength} bytes, expected at least ${DB_HEADER_SIZE}`);
  if (!MAGIC.equals(buf.subarray(0, MAGIC.length))) notSqlite('not an SQLite 3 database: the header magic is missing');
  const view = new DataView(buf.buffer, buf.byteOffset, DB_HEADER_SIZE);
  const rawPageSize = view.getUint16(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  if (!isValidPageSize(pageSize)) notSqlite(`invalid database page size ${rawPageSize}`);
  return {
    pageSize,
    writeVersion: view.getUint8(18),
    readVersion: view.getUint8(19),
    reservedBytes: view.getUint8(20),
    changeCounter: view.getUint32(24),
    pageCount: view.getUint32(28),
    freelistTrunk: view.getUint32(32),
    freelistCount: view.getUint32(36),
    schemaCookie: view.getUint32(40),
    schemaFormat: view.getUint32(44),
    defaultCacheSize: view.getInt32(48),
    largestRootPage: view.getUint32(52),
    textEncoding: view.getUint32(56),
    userVersion: view.getInt32(60),
    incrementalVacuum: view.getUint32(64),
    applicationId: view.getInt32(68),
    versionValidFor: view.getUint32(92),
    sqliteVersion: view.getUint32(96),
  };
}

/** True when the header marks the database as being in WAL mode (read and write versions both 2). */
export function isWalMode(h: DbHeader): boolean {
  return h.writeVersion === 2 && h.readVersion === 2;
}
