import { asOffshootError, fail, type OffshootError } from '../../core/errors.js';
import { sqliteCode } from '../sqlite-result-codes.js';

/** Maps a SQLite error met while reading `what` to an offshoot error: corruption, I/O, busy, or as-is. */
export function sqliteFailure(err: unknown, what: string): OffshootError {
  const code = sqliteCode(err) ?? '';
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return fail('CORRUPT', `diff: ${what} is not a valid SQLite database (${message})`, {
      hint: 'materialize it again from its branch or checkpoint',
      cause: err,
    });
  }
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY')) {
    return fail('IO', `diff: cannot read ${what}: ${message}`, {
      hint: 'check that the file and its directory are readable',
      cause: err,
    });
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return fail('BUSY', `diff: ${what} is locked by a writer: ${message}`, {
      hint: 'retry once the writer has finished',
      retryable: true,
      cause: err,
    });
  }
  return asOffshootError(err);
}
