import type { SqliteDatabase } from './sqlite-database.js';
import { openDatabase } from './sqlite-driver.js';

/** A SQLite connection. */
export type Connection = SqliteDatabase;

/** Busy timeout for at-rest operations: wait this long for a foreign writer, then fail cleanly. */
export const AT_REST_BUSY_TIMEOUT_MS = 3000;

/** Opens an existing database file with a busy timeout; readonly opens never create -wal/-shm beyond SQLite's own. */
export function openConnection(path: string, opts: { readonly?: boolean; busyTimeoutMs?: number } = {}): Connection {
  const db = openDatabase(path, {
    readonly: opts.readonly ?? false,
    fileMustExist: true,
    timeout: opts.busyTimeoutMs ?? AT_REST_BUSY_TIMEOUT_MS,
  });
  return db;
}
