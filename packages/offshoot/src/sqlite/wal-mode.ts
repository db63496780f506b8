import { fail } from '../core/errors.js';
import { AT_REST_BUSY_TIMEOUT_MS, openConnection } from './connection.js';
import { sqliteCode } from './sqlite-result-codes.js';

/**
 * Puts a database another connection took out of WAL mode back into it, through a connection of its own: opening it
 * rolls a hot rollback journal back first, and the switch deletes the journal. BUSY while another connection keeps
 * the switch from taking the file to itself.
 */
export function restoreWalMode(path: string, busyTimeoutMs: number = AT_REST_BUSY_TIMEOUT_MS): void {
  const db = openConnection(path, { busyTimeoutMs });
  let mode: unknown;
  try {
    mode = db.pragma('journal_mode = WAL', { simple: true });
  } catch (err) {
    if (sqliteCode(err) !== 'SQLITE_BUSY') throw err;
  } finally {
    db.close();
  }
  if (mode !== 'wal')
    throw fail('BUSY', `${path} is in rollback-journal mode and another connection keeps it from WAL mode`, {
      retryable: true,
      hint: 'close the other connections to the checkout (they set journal_mode on it), then open the session again',
    });
}
