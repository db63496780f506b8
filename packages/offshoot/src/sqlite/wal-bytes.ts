import { statSync } from 'node:fs';

/** Bytes in a database's -wal (0 when there is none, or it cannot be read). */
export function walBytes(dbPath: string): number {
  try {
    return statSync(`${dbPath}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  } catch {
    return 0;
  }
}
