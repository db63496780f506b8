import type * as NodeSqlite from 'node:sqlite';
import type { DatabaseSync, SQLInputValue, StatementColumnMetadata, StatementSync } from 'node:sqlite';

/** A value bound to a statement's parameter: null, a number, a bigint, a string or bytes (SQLite checks). */
export type SqlParam = unknown;

function asBuffer(v: unknown): unknown {
  return v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v;
}

/** What `run` reports. */
export interface RunResult {
  /** Rows the statement changed. */
  changes: number | bigint;
  /** The rowid of the last row inserted. */
  lastInsertRowid: number | bigint;
}

/**
 * A prepared statement on node:sqlite. Rows come back as objects keyed by column name, as arrays with raw(), or as
 * their first column with pluck(); integers as numbers, or as bigint with safeIntegers() (or the connection's
 * defaultSafeIntegers). BLOBs come back as Buffer.
 */
export class SqliteStatement {
  readonly #stmt: StatementSync;
  #pluck = false;
  #raw = false;

  /** Wraps a statement prepared on a connection, reading integers as bigint when safe is set. */
  constructor(stmt: StatementSync, safe: boolean) {
    this.#stmt = stmt;
    if (safe) stmt.setReadBigInts(true);
  }

  /** Rows as arrays of column values (and not plucked). */
  raw(on = true): this {
    this.#stmt.setReturnArrays(on);
    this.#raw = on;
    this.#pluck = false;
    return this;
  }

  /** Rows as their first column's value. */
  pluck(on = true): this {
    this.#stmt.setReturnArrays(on);
    this.#pluck = on;
    this.#raw = false;
    return this;
  }

  /** Integers as bigint (so values past 2^53 and their type survive). */
  safeIntegers(on = true): this {
    this.#stmt.setReadBigInts(on);
    return this;
  }

  /** The first row, or undefined. */
  get(...params: SqlParam[]): unknown {
    const row = this.#stmt.get(...(params as SQLInputValue[]));
    return row === undefined ? undefined : this.#shape(row);
  }

  /** Every row. */
  all(...params: SqlParam[]): unknown[] {
    return this.#stmt.all(...(params as SQLInputValue[])).map((r) => this.#shape(r));
  }

  /** The rows one at a time, stepped as they are read. */
  *iterate(...params: SqlParam[]): IterableIterator<unknown> {
    for (const row of this.#stmt.iterate(...(params as SQLInputValue[]))) yield this.#shape(row);
  }

  // node:sqlite hands rows over as arrays (raw, pluck) or as objects without a prototype, and BLOBs as Uint8Array:
  // an object row becomes a plain one and a BLOB a Buffer over the same bytes, as callers of the engine expect.
  #shape(row: object): unknown {
    if (this.#pluck) return asBuffer((row as unknown[])[0]);
    if (this.#raw) {
      const cells = row as unknown[];
      for (let i = 0; i < cells.length; i++) cells[i] = asBuffer(cells[i]);
      return cells;
    }
    const out: Record<string, unknown> = {};
    for (const key in row) out[key] = asBuffer((row as Record<string, unknown>)[key]);
    return out;
  }

  /** Runs a statement that returns no rows. */
  run(...params: SqlParam[]): RunResult {
    return this.#stmt.run(...(params as SQLInputValue[]));
  }

  /** The columns the statement returns (none for a statement that returns no rows). */
  columns(): StatementColumnMetadata[] {
    return this.#stmt.columns();
  }

  /** True when the statement returns rows. */
  get reader(): boolean {
    return this.#stmt.columns().length > 0;
  }
}

/** Progress of a backup: pages in all and pages still to copy. */
export interface BackupProgress {
  /** Pages of the source. */
  totalPages: number;
  /** Pages not copied yet. */
  remainingPages: number;
}

/** A connection on node:sqlite, with the few conveniences the engine uses (pragma, safe integers, backup). */
export class SqliteDatabase {
  readonly #db: DatabaseSync;
  readonly #backup: typeof NodeSqlite.backup;
  readonly #closed: (() => void) | undefined;
  #safe = false;
  #open = true;

  /** Wraps an open connection; backup is node:sqlite's backup function, closed is called once it has closed. */
  constructor(db: DatabaseSync, backup: typeof NodeSqlite.backup, closed?: () => void) {
    this.#db = db;
    this.#backup = backup;
    this.#closed = closed;
  }

  /** Prepares one statement. */
  prepare(sql: string): SqliteStatement {
    return new SqliteStatement(this.#db.prepare(sql), this.#safe);
  }

  /** Runs SQL text of any number of statements, returning no rows. */
  exec(sql: string): this {
    this.#db.exec(sql);
    return this;
  }

  /** Runs `PRAGMA source`: every row, or with simple the first column of the first row. */
  pragma(source: string, opts: { simple?: boolean } = {}): unknown {
    const stmt = this.prepare(`PRAGMA ${source}`);
    return opts.simple === true ? stmt.pluck().get() : stmt.all();
  }

  /** Statements prepared from now on read integers as bigint. */
  defaultSafeIntegers(on = true): this {
    this.#safe = on;
    return this;
  }

  /** True while a transaction is open on this connection. */
  get inTransaction(): boolean {
    return this.#db.isTransaction;
  }

  /** Copies the database, one consistent state of it, to dest through SQLite's backup API, rate pages a step. */
  async backup(dest: string, opts: { rate?: number; progress?: (p: BackupProgress) => void } = {}): Promise<void> {
    await this.#backup(this.#db, dest, {
      rate: opts.rate ?? 1024,
      ...(opts.progress === undefined ? {} : { progress: opts.progress }),
    });
  }

  /** True until close(). */
  get open(): boolean {
    return this.#open;
  }

  /** Closes the connection (rolling back an open transaction); closing twice is harmless. */
  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#db.close();
    this.#closed?.();
  }
}
