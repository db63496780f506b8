import fs from 'node:fs';
import type { SqliteDatabase } from '../sqlite-database.js';
import { fail } from '../../core/errors.js';
import { sqliteFailure } from './sqlite-failure.js';
import { openDatabase } from '../sqlite-driver.js';

/**
 * Opens one side of a diff read-only inside a read transaction, so every query sees one snapshot even if a writer
 * is active. Integers come back as bigint so large values and their type survive comparison. The file is opened by
 * its plain name, not as a URI with `immutable=1` (a side may be live): a WAL-mode file in a writable directory gets
 * -wal/-shm siblings created by this read-only open.
 */
export function openDiffSide(file: string, label: string): SqliteDatabase {
  if (!fs.existsSync(file)) {
    throw fail('NOT_FOUND', `diff: the ${label} database ${file} does not exist`, {
      hint: 'check the path, or materialize the target first',
    });
  }
  let db: SqliteDatabase | undefined;
  try {
    db = openDatabase(file, { readonly: true, fileMustExist: true });
    db.pragma('query_only = ON');
    db.defaultSafeIntegers(true);
    db.exec('BEGIN');
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
    return db;
  } catch (err) {
    db?.close();
    throw sqliteFailure(err, `the ${label} database ${file}`);
  }
}

/**
 * A connection the caller opened on one side and holds inside a read transaction, set up as openDiffSide sets up its
 * own: integers as bigint, and no writes through it.
 */
export function adoptDiffSide(db: SqliteDatabase, label: string): SqliteDatabase {
  if (!db.inTransaction) throw fail('INTERNAL', `diff: the ${label} connection is not inside a read transaction`);
  db.pragma('query_only = ON');
  db.defaultSafeIntegers(true);
  return db;
}

/** True when a -wal file with content sits next to the database, so its pages are not all in the main file. */
export function hasPendingWal(file: string): boolean {
  try {
    return fs.statSync(`${file}-wal`).size > 0;
  } catch {
    return false;
  }
}
