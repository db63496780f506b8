import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import type { SqliteDatabase } from '../../src/sqlite/sqlite-database.js';

/** Creates a rollback-journal SQLite database at `file` with the given page size and runs `sql` on it. */
export function makeDb(file: string, pageSize: number, build: (db: SqliteDatabase) => void): void {
  const db = openDatabase(file);
  try {
    db.pragma(`page_size = ${pageSize}`);
    db.pragma('journal_mode = DELETE');
    build(db);
  } finally {
    db.close();
  }
}

/** Runs more statements on an existing database, leaving no -wal or journal behind. */
export function changeDb(file: string, build: (db: SqliteDatabase) => void): void {
  const db = openDatabase(file);
  try {
    build(db);
  } finally {
    db.close();
  }
}

/** The pages of `after` that differ from `before` (or lie beyond its end), as sorted [pgno, bytes] pairs. */
export function pageDiff(before: Buffer, after: Buffer, pageSize: number): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  for (let off = 0; off < after.length; off += pageSize) {
    const page = after.subarray(off, off + pageSize);
    if (off + pageSize > before.length || !page.equals(before.subarray(off, off + pageSize)))
      out.push([off / pageSize + 1, page]);
  }
  return out;
}
