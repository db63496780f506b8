import { fail, type OffshootError } from '../core/errors.js';
import { sqliteCode } from './sqlite-result-codes.js';

/** The SQLite result codes that mean "this file is not a sound database". */
function isCorruptCode(code: unknown): boolean {
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

/**
 * A CORRUPT error for a SQLite failure that says the file at path is not a sound database (not a database,
 * malformed), with the hint given; undefined for any other failure, which the caller rethrows as it is.
 */
export function corruptDatabase(err: unknown, path: string, hint: string): OffshootError | undefined {
  if (!isCorruptCode(sqliteCode(err))) return undefined;
  return fail('CORRUPT', `${path} is not a sound SQLite database: ${(err as Error).message}`, { hint, cause: err });
}
