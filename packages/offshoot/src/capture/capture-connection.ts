import type { SqliteDatabase } from '../sqlite/sqlite-database.js';
import { closeSync, openSync, statSync } from 'node:fs';
import { devNull } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fail, type OffshootError } from '../core/errors.js';
import { openDatabase } from '../sqlite/sqlite-driver.js';
import { sqliteCode } from '../sqlite/sqlite-result-codes.js';
import { openFailure } from './open-failure.js';

/**
 * SQLite busy waits are synchronous and would freeze the event loop, so no single call on the engine's connection
 * may wait on a lock longer than this; longer budgets are made of asynchronous retries.
 */
export const STEP_BUSY_TIMEOUT_MS = 25;
/** Total budget for one checkpoint, and for taking the read lock: the spec's 5 s busy timeout. */
export const LOCK_BUDGET_MS = 5000;
/** Pause between checkpoint attempts while the result says busy. */
const CHECKPOINT_RETRY_MS = 50;
const LOCK_FIRST_BACKOFF_MS = 10;
const LOCK_MAX_BACKOFF_MS = 320;

/** The row `PRAGMA wal_checkpoint(MODE)` returns. */
export interface CheckpointResult {
  /** 1 when the checkpoint could not complete within the budget. */
  busy: number;
  /** Frames in the WAL (mxFrame) when the checkpoint ran. */
  log: number;
  /** Frames backfilled into the main file. */
  checkpointed: number;
}

/** The checkpoint modes the engine runs itself. */
export type CheckpointMode = 'RESTART' | 'TRUNCATE';

function isBusy(err: unknown): boolean {
  const code = sqliteCode(err);
  return (
    typeof code === 'string' &&
    (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === 'SQLITE_PROTOCOL')
  );
}

function sqliteFailure(err: unknown, what: string, dbPath: string): OffshootError {
  const code = sqliteCode(err);
  // SQLite says only CANTOPEN. A spare descriptor tells a lack of them, a stat a missing file.
  if (code?.startsWith('SQLITE_CANTOPEN')) return openFailure(probeOpen(dbPath) ?? err, what);
  return fail('IO', `${what}: ${(err as Error).message}`, {
    hint: 'check that the checkout exists, is a SQLite database and is readable and writable by the daemon',
    cause: err,
  });
}

// Why a database cannot be opened now, as an errno error, if a probe can tell.
function probeOpen(path: string): unknown {
  try {
    closeSync(openSync(devNull, 'r'));
    statSync(path);
    return undefined;
  } catch (err) {
    return err;
  }
}

// Retries fn while SQLite reports a lock conflict, sleeping asynchronously between attempts.
async function whileBusy<T>(dbPath: string, what: string, budgetMs: number, fn: () => T): Promise<T> {
  const deadline = Date.now() + budgetMs;
  let backoff = LOCK_FIRST_BACKOFF_MS;
  for (;;) {
    try {
      return fn();
    } catch (err) {
      if (!isBusy(err)) throw sqliteFailure(err, what, dbPath);
      if (Date.now() >= deadline) {
        throw fail('BUSY', `${what}: the database stayed locked for ${budgetMs} ms`, {
          retryable: true,
          hint: 'another connection holds the checkout locked; end its long transaction or checkpoint, then retry',
        });
      }
    }
    await sleep(Math.min(backoff, Math.max(1, deadline - Date.now())));
    backoff = Math.min(backoff * 2, LOCK_MAX_BACKOFF_MS);
  }
}

/**
 * The capture engine's own connection to a checkout: WAL mode, never auto-checkpointing, and a read lock
 * (`BEGIN` + a first read, since a deferred BEGIN takes no snapshot) that keeps any other connection from
 * resetting the WAL while it is held.
 */
export class CaptureConnection {
  /** The database file this connection is open on. */
  readonly dbPath: string;
  /** `PRAGMA page_size`, read once at open: SQLite cannot change it in WAL mode. */
  readonly pageSize: number;
  readonly #db: SqliteDatabase;
  #syncPending = false;

  private constructor(db: SqliteDatabase, dbPath: string, pageSize: number) {
    this.#db = db;
    this.dbPath = dbPath;
    this.pageSize = pageSize;
  }

  /**
   * Opens dbPath (which must exist), switches it to WAL mode and turns this connection's autocheckpoint off.
   * busyTimeoutMs bounds each synchronous lock wait (0: a lock conflict fails at once); `synced: false` leaves out
   * the syncs of its checkpoints.
   */
  static async open(
    dbPath: string,
    busyTimeoutMs: number = STEP_BUSY_TIMEOUT_MS,
    opts: { synced?: boolean } = {},
  ): Promise<CaptureConnection> {
    let db: SqliteDatabase;
    try {
      db = openDatabase(dbPath, { fileMustExist: true, timeout: busyTimeoutMs });
    } catch (err) {
      throw sqliteFailure(err, `cannot open ${dbPath}`, dbPath);
    }
    try {
      db.pragma('wal_autocheckpoint = 0');
      // A checkout that need not reach the disk (an ephemeral fork's): this connection's checkpoints never sync it.
      if (opts.synced === false) db.pragma('synchronous = OFF');
      const mode = await whileBusy(dbPath, `cannot switch ${dbPath} to WAL mode`, LOCK_BUDGET_MS, () =>
        db.pragma('journal_mode = WAL', { simple: true }),
      );
      if (mode !== 'wal') {
        throw fail('UNSUPPORTED', `${dbPath} cannot be put in WAL mode (journal_mode is ${String(mode)})`, {
          hint: 'live capture needs a file-backed database on a filesystem that supports shared memory',
        });
      }
      const pageSize = await whileBusy(dbPath, `cannot read the page size of ${dbPath}`, LOCK_BUDGET_MS, () =>
        db.pragma('page_size', { simple: true }),
      );
      return new CaptureConnection(db, dbPath, Number(pageSize));
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /**
   * From now on this connection's checkpoints sync the database as SQLite's default does (the fork was kept): at once
   * when no transaction is open, else before its next checkpoint (SQLite changes it only outside a transaction).
   */
  synced(): void {
    this.#syncPending = true;
    this.#applySync();
  }

  #applySync(): void {
    if (!this.#syncPending || this.#db.inTransaction) return;
    this.#db.pragma('synchronous = FULL');
    this.#syncPending = false;
  }

  /** True while the read transaction is open. */
  get locked(): boolean {
    return this.#db.inTransaction;
  }

  /** Takes the read lock, retrying with backoff (10 ms doubling) for up to budgetMs; BUSY when it cannot. */
  async lock(budgetMs: number = LOCK_BUDGET_MS): Promise<void> {
    if (this.locked) return;
    await whileBusy(this.dbPath, `cannot take the read lock on ${this.dbPath}`, budgetMs, () => this.#beginRead());
  }

  /** One synchronous attempt at the read lock: false on a lock conflict. */
  tryLock(): boolean {
    if (this.locked) return true;
    try {
      this.#beginRead();
      return true;
    } catch (err) {
      if (isBusy(err)) return false;
      throw sqliteFailure(err, `cannot take the read lock on ${this.dbPath}`, this.dbPath);
    }
  }

  #beginRead(): void {
    this.#db.exec('BEGIN');
    try {
      this.#db.prepare('SELECT count(*) FROM sqlite_master').get();
    } catch (err) {
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
      throw err;
    }
  }

  /** Ends the read transaction (or the empty write transaction of tryWriteLock), if one is open. */
  unlock(): void {
    if (!this.locked) return;
    try {
      this.#db.exec('COMMIT');
    } catch (err) {
      throw sqliteFailure(err, `cannot release the read lock on ${this.dbPath}`, this.dbPath);
    }
  }

  /**
   * One attempt at the WAL write lock (`BEGIN IMMEDIATE`, which writes nothing): true when it is held, false when
   * another connection holds it. While held no connection can commit or reset the WAL; unlock() releases it.
   */
  tryWriteLock(): boolean {
    if (this.locked) throw fail('INTERNAL', `write lock requested on ${this.dbPath} inside a transaction`);
    try {
      this.#db.exec('BEGIN IMMEDIATE');
      return true;
    } catch (err) {
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
      if (isBusy(err)) return false;
      throw sqliteFailure(err, `cannot take the write lock on ${this.dbPath}`, this.dbPath);
    }
  }

  /**
   * One `PRAGMA wal_checkpoint(PASSIVE)`: it backfills what no reader's snapshot still needs and never waits, nor
   * takes the write lock, so writers are not held up. A lock conflict reads as busy. Not inside a transaction.
   */
  passiveCheckpoint(): CheckpointResult {
    this.#applySync();
    try {
      const [row] = this.#db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[];
      if (row !== undefined)
        return { busy: Number(row.busy), log: Number(row.log), checkpointed: Number(row.checkpointed) };
    } catch (err) {
      if (!isBusy(err)) throw sqliteFailure(err, `wal_checkpoint(PASSIVE) failed on ${this.dbPath}`, this.dbPath);
    }
    return { busy: 1, log: -1, checkpointed: -1 };
  }

  /**
   * Runs `PRAGMA wal_checkpoint(mode)`, retrying every 50 ms while it reports busy, for up to budgetMs. Returns the
   * last result, which still says busy when the budget ran out. The read lock must be released first.
   */
  async checkpoint(mode: CheckpointMode, budgetMs: number = LOCK_BUDGET_MS): Promise<CheckpointResult> {
    const deadline = Date.now() + budgetMs;
    this.#applySync();
    for (;;) {
      let result: CheckpointResult = { busy: 1, log: -1, checkpointed: -1 };
      try {
        const [row] = this.#db.pragma(`wal_checkpoint(${mode})`) as CheckpointResult[];
        if (row !== undefined)
          result = { busy: Number(row.busy), log: Number(row.log), checkpointed: Number(row.checkpointed) };
      } catch (err) {
        if (!isBusy(err)) throw sqliteFailure(err, `wal_checkpoint(${mode}) failed on ${this.dbPath}`, this.dbPath);
      }
      if (result.busy === 0 || Date.now() >= deadline) return result;
      await sleep(Math.min(CHECKPOINT_RETRY_MS, Math.max(1, deadline - Date.now())));
    }
  }

  /**
   * Ends any read transaction and gives the connection up to the caller, who closes it from then on: this wrapper
   * must not be used again.
   */
  handOver(): SqliteDatabase {
    this.unlock();
    return this.#db;
  }

  /** Ends any read transaction and closes the connection (SQLite checkpoints and removes -wal if it was the last). */
  close(): void {
    try {
      if (this.locked) this.#db.exec('COMMIT');
    } finally {
      this.#db.close();
    }
  }
}
