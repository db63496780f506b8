import type { Connection } from './connection.js';
import { requireTxid } from './result-fields.js';

/** Options of a named flush. */
export interface FlushOptions {
  /** Checkpoint metadata; needs a checkpoint name. */
  meta?: Record<string, string>;
}

/** A live session on one branch: writes to `path` are captured by the daemon until `close()`. */
export class Session {
  /** The writable checkout to open with any SQLite driver (WAL mode). */
  readonly path: string;
  readonly db: string;
  readonly branch: string;
  /** What the daemon reported on open, e.g. unflushed writes of a crashed session kept as an undo branch. */
  readonly warnings: readonly string[];
  readonly #conn: Connection;

  /** Made by `Client.open`. */
  constructor(conn: Connection, db: string, branch: string, path: string, warnings: readonly string[] = []) {
    this.#conn = conn;
    this.db = db;
    this.branch = branch;
    this.path = path;
    this.warnings = warnings;
  }

  /** Makes everything committed so far durable in the store, optionally as a named checkpoint; returns the txid. */
  async flush(name?: string, opts: FlushOptions = {}): Promise<number> {
    const res = await this.#conn.request({ op: 'flush', db: this.db, branch: this.branch, name, meta: opts.meta });
    return requireTxid(res, 'flush');
  }

  /** Ends the session and releases its lease. */
  async close(): Promise<void> {
    await this.#conn.request({ op: 'close', db: this.db, branch: this.branch });
  }
}
