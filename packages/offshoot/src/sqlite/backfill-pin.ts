import { openConnection } from './connection.js';

/**
 * Holds a read transaction on a WAL-mode database whose -wal holds no frames (the caller's to know), so it reads at
 * mark 0: until the returned function lets go, no connection of any process can copy -wal frames into the main file
 * (every checkpoint's backfill needs mark 0 to itself), hence none can restart, truncate or delete the -wal either,
 * and the -wal holds everything written since the pin was taken.
 */
export function pinBackfill(path: string): () => void {
  const db = openConnection(path);
  try {
    db.exec('BEGIN');
    db.prepare('SELECT 1 FROM sqlite_schema LIMIT 1').get();
    return () => {
      try {
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    };
  } catch (err) {
    db.close();
    throw err;
  }
}
