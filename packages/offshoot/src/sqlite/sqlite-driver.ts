import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const requireHere = createRequire(import.meta.url);
let driver: typeof BetterSqlite3 | undefined;

/**
 * Opens a better-sqlite3 connection. The native addon is loaded on the first open, not at import, so a command that
 * never opens SQLite (status, a fork of a clean branch) never pays for it.
 */
export function openDatabase(path: string, opts?: BetterSqlite3.Options): BetterSqlite3.Database {
  driver ??= requireHere('better-sqlite3') as typeof BetterSqlite3;
  return new driver(path, opts);
}
