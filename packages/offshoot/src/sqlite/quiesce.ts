import { closeSync, openSync, statSync, type BigIntStats } from 'node:fs';
import { fail } from '../core/errors.js';
import { readFully } from '../platform/read-fully.js';
import { AT_REST_BUSY_TIMEOUT_MS, openConnection, type Connection } from './connection.js';
import { corruptDatabase } from './sqlite-errors.js';
import { sqliteCode } from './sqlite-result-codes.js';

function busy(path: string): Error {
  return fail('BUSY', `database is busy (live writer or reader): ${path}`, {
    retryable: true,
    hint: 'close the connections that hold the checkout (or their open transactions) and retry',
  });
}

function walSize(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

function truncateCheckpoint(db: Connection, path: string): void {
  let row: Array<{ busy: number }>;
  try {
    row = db.pragma('wal_checkpoint(TRUNCATE)', { simple: false }) as Array<{ busy: number }>;
  } catch (err) {
    throw corruptDatabase(err, path, 'move the file aside (a checkout is re-materialized by checkout --force)') ?? err;
  }
  if ((row[0]?.busy ?? 0) !== 0) throw busy(path);
}

/** Folds the -wal into the main file with a TRUNCATE checkpoint, waiting up to the busy timeout; BUSY otherwise. */
export function quiesce(path: string, busyTimeoutMs: number = AT_REST_BUSY_TIMEOUT_MS): void {
  const db = openConnection(path, { busyTimeoutMs });
  try {
    truncateCheckpoint(db, path);
  } finally {
    db.close();
  }
}

/**
 * Fails BUSY while another connection holds (or keeps taking, past the busy timeout) the write lock of path: a file
 * deleted under such a writer would take its next COMMIT with it. A file SQLite cannot read as a database has no
 * writer to protect and passes.
 */
export function refuseWriter(path: string, busyTimeoutMs: number = AT_REST_BUSY_TIMEOUT_MS): void {
  let db: Connection;
  try {
    db = openConnection(path, { busyTimeoutMs });
  } catch {
    return;
  }
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
  } catch (err) {
    if (sqliteCode(err) === 'SQLITE_BUSY') throw busy(path);
  } finally {
    db.close();
  }
}

/** A checkout this process holds to itself (holdAlone); release lets other connections in again. */
export interface HeldAlone {
  release(): void;
}

/**
 * Takes a checkout to this process alone, or fails BUSY: the database file's exclusive lock (locking_mode=EXCLUSIVE,
 * then a write transaction), which SQLite grants only while no other connection has the file open (in WAL mode a
 * connection holds a shared lock on it from its first statement until it closes, idle or not) and which keeps any new
 * one out until release. A connection that opened the file but ran nothing yet holds no lock and is not seen. A file
 * SQLite cannot read as a database has no connection to protect and is held trivially.
 */
export function holdAlone(path: string, busyTimeoutMs = 0): HeldAlone {
  let db: Connection;
  try {
    db = openConnection(path, { busyTimeoutMs });
  } catch {
    return { release: () => undefined };
  }
  try {
    db.pragma('locking_mode=EXCLUSIVE');
    db.exec('BEGIN IMMEDIATE');
  } catch (err) {
    db.close();
    const code = sqliteCode(err) ?? '';
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) throw busy(path);
    return { release: () => undefined };
  }
  return {
    release: () => {
      try {
        if (db.inTransaction) db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    },
  };
}

/**
 * A checkout held still for reading: the -wal is folded and empty, and a read transaction on our own connection
 * keeps every other connection from backfilling into the main file, so raw page reads see one consistent state.
 * Writers may still append to the -wal meanwhile; that is theirs to checkpoint after release.
 */
export class FrozenCheckout {
  private constructor(
    readonly path: string,
    private readonly db: Connection,
    private readonly fd: number,
    /** Stat of the main file taken under the read lock. */
    readonly stat: BigIntStats,
  ) {}

  /** Quiesces path and takes the read lock; BUSY when a writer keeps the -wal busy past the timeout. */
  static open(path: string, busyTimeoutMs: number = AT_REST_BUSY_TIMEOUT_MS): FrozenCheckout {
    const deadline = Date.now() + busyTimeoutMs;
    const db = openConnection(path, { busyTimeoutMs });
    try {
      for (;;) {
        truncateCheckpoint(db, path);
        db.exec('BEGIN');
        db.prepare('SELECT count(*) FROM sqlite_master').get();
        // A commit that slipped in between the checkpoint and the read lock lives only in the -wal: fold it too.
        if (walSize(path) === 0) break;
        db.exec('COMMIT');
        if (Date.now() > deadline) throw busy(path);
      }
      // The raw descriptor is closed only after the connection (POSIX locks belong to the process and inode).
      const fd = openSync(path, 'r');
      return new FrozenCheckout(path, db, fd, statSync(path, { bigint: true }));
    } catch (err) {
      if (db.inTransaction) db.exec('COMMIT');
      db.close();
      throw err;
    }
  }

  /** The connection holding the read transaction: SQL through it reads the frozen state (never write: release ends it). */
  get connection(): Connection {
    return this.db;
  }

  /** Reads length bytes at offset from the frozen main file into buf. */
  read(buf: Buffer, offset: number, length: number = buf.length): number {
    return readFully(this.fd, buf, offset, length);
  }

  /** Re-stats the main file while still frozen (after the caller re-stamped its mtime). */
  restat(): BigIntStats {
    return statSync(this.path, { bigint: true });
  }

  /** Ends the read transaction, closes the connection, then the raw descriptor. */
  release(): void {
    try {
      if (this.db.inTransaction) this.db.exec('COMMIT');
      this.db.close();
    } finally {
      closeSync(this.fd);
    }
  }
}
