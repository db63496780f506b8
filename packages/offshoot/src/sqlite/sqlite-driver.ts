import type * as NodeSqlite from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { fail } from '../core/errors.js';
import { SqliteDatabase } from './sqlite-database.js';
import { withFileRoom } from '../platform/file-room.js';
import { connectionOpened } from './raw-file.js';

/** How openDatabase opens a file. */
export interface OpenOptions {
  /** Open read-only (never creates the file). */
  readonly?: boolean;
  /** Fail with SQLITE_CANTOPEN instead of creating a missing file. */
  fileMustExist?: boolean;
  /** Busy timeout in milliseconds: how long one statement waits on a lock before SQLITE_BUSY (default 5000). */
  timeout?: number;
}

/** The busy timeout of a connection opened without one. */
const DEFAULT_BUSY_TIMEOUT_MS = 5000;

let sqlite: typeof NodeSqlite | undefined;

// Node 22 marks node:sqlite experimental and says so on stderr at its first load; the engine's output is its own.
function loadSqlite(): typeof NodeSqlite {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/SQLite is an experimental feature/.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    const mod = process.getBuiltinModule?.('node:sqlite') as typeof NodeSqlite | undefined;
    if (
      mod === undefined ||
      typeof mod.backup !== 'function' ||
      typeof mod.StatementSync.prototype.columns !== 'function'
    ) {
      throw fail(
        'UNSUPPORTED',
        `offshoot needs Node.js 22.16 or later (its built-in node:sqlite); this is ${process.version}`,
        {
          hint: 'install a current Node.js LTS (22, 24 or 26) and run offshoot with it',
        },
      );
    }
    return mod;
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * Opens a SQLite connection on Node's built-in node:sqlite. It is loaded on the first open, not at import, so a
 * command that never opens SQLite (status, a fork of a clean branch) never pays for it.
 */
export function openDatabase(path: string, opts: OpenOptions = {}): SqliteDatabase {
  sqlite ??= loadSqlite();
  const readOnly = opts.readonly ?? false;
  // A read-write open creates a missing file unless the URI says mode=rw.
  const location = opts.fileMustExist === true && !readOnly && path !== ':memory:' ? mustExist(path) : path;
  const driver = sqlite;
  const db = withFileRoom(
    () => new driver.DatabaseSync(location, { readOnly, timeout: opts.timeout ?? DEFAULT_BUSY_TIMEOUT_MS }),
  );
  // Counted on its file until closed, so no raw descriptor closed meanwhile drops its locks (see raw-file).
  const closed = path === ':memory:' || path === '' ? undefined : connectionOpened(path);
  return new SqliteDatabase(db, sqlite.backup, closed);
}

function mustExist(path: string): URL {
  const url = pathToFileURL(path);
  url.searchParams.set('mode', 'rw');
  return url;
}
