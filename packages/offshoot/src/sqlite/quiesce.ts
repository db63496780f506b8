import { statSync, type BigIntStats } from 'node:fs';
import { fail } from '../core/errors.js';
import { readFully } from '../platform/read-fully.js';
import { AT_REST_BUSY_TIMEOUT_MS, openConnection, type Connection } from './connection.js';
import { closeKept, dropKept, ownFd, putKept, takeKept, type KeptConnection } from './kept-connection.js';
import { openRawFile } from './raw-file.js';
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
  // A connection this process kept on the file does it, and closes with it: the caller means to replace or remove it.
  const given = takeKept(path);
  if (given !== undefined) {
    try {
      given.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      given.db.pragma('synchronous = FULL');
      truncateCheckpoint(given.db, path);
    } finally {
      closeKept(given);
    }
    return;
  }
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
  dropKept(path);
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
  dropKept(path);
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
 * Writers may still append to the -wal meanwhile; that is theirs to checkpoint after release. In a process that
 * keeps checkouts' connections (keepConnections), the freeze reads through the checkout's kept connection and gives
 * it back at release instead of opening and closing one.
 */
export class FrozenCheckout {
  private constructor(
    readonly path: string,
    private readonly conn: KeptConnection,
    /** Stat of the main file taken under the read lock. */
    readonly stat: BigIntStats,
  ) {}

  /** Quiesces path and takes the read lock; BUSY when a writer keeps the -wal busy past the timeout. */
  static open(path: string, busyTimeoutMs: number = AT_REST_BUSY_TIMEOUT_MS): FrozenCheckout {
    const given = takeKept(path);
    if (given !== undefined) {
      // Whoever kept it set its own busy timeout and syncs (an ephemeral fork's capture syncs nothing): a freeze's
      // checkpoint may fold a foreign commit, which must reach the disk before the -wal holding it is truncated.
      given.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      given.db.pragma('synchronous = FULL');
      return FrozenCheckout.freeze(path, given, busyTimeoutMs);
    }
    const db = openConnection(path, { busyTimeoutMs });
    let fd: number;
    try {
      // The raw descriptor goes with the connection, wherever that is kept (its close waits for the process's last
      // connection on the file: see raw-file).
      fd = openRawFile(path);
    } catch (err) {
      db.close();
      throw err;
    }
    return FrozenCheckout.freeze(path, { db, fd, closeFd: ownFd(fd) }, busyTimeoutMs);
  }

  private static freeze(path: string, conn: KeptConnection, busyTimeoutMs: number): FrozenCheckout {
    const deadline = Date.now() + busyTimeoutMs;
    const { db } = conn;
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
      return new FrozenCheckout(path, conn, statSync(path, { bigint: true }));
    } catch (err) {
      try {
        if (db.inTransaction) db.exec('COMMIT');
        db.close();
      } finally {
        conn.closeFd();
      }
      throw err;
    }
  }

  /** The connection holding the read transaction: SQL through it reads the frozen state (never write: release ends it). */
  get connection(): Connection {
    return this.conn.db;
  }

  /**
   * The raw descriptor on the frozen main file, owned by the freeze (never close it: it goes after the connection).
   */
  get fd(): number {
    return this.conn.fd;
  }

  /** Reads length bytes at offset from the frozen main file into buf. */
  read(buf: Buffer, offset: number, length: number = buf.length): number {
    return readFully(this.conn.fd, buf, offset, length);
  }

  /** Re-stats the main file while still frozen (after the caller re-stamped its mtime). */
  restat(): BigIntStats {
    return statSync(this.path, { bigint: true });
  }

  /** Ends the read transaction and keeps the connection for the next reader, or closes it, then the descriptor. */
  release(): void {
    const { db } = this.conn;
    try {
      if (db.inTransaction) db.exec('COMMIT');
      // As it was opened, for its next user: a diff reading through it made it read-only with bigint integers.
      db.pragma('query_only = OFF');
      db.defaultSafeIntegers(false);
    } catch (err) {
      db.close();
      this.conn.closeFd();
      throw err;
    }
    putKept(this.path, this.conn);
  }
}
