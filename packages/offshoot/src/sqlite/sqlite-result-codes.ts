// SQLite's result codes by number (sqlite3.h): node:sqlite reports a failure's extended code as a number (errcode),
// and the engine tells failures apart by name.
const PRIMARY = [
  'OK',
  'ERROR',
  'INTERNAL',
  'PERM',
  'ABORT',
  'BUSY',
  'LOCKED',
  'NOMEM',
  'READONLY',
  'INTERRUPT',
  'IOERR',
  'CORRUPT',
  'NOTFOUND',
  'FULL',
  'CANTOPEN',
  'PROTOCOL',
  'EMPTY',
  'SCHEMA',
  'TOOBIG',
  'CONSTRAINT',
  'MISMATCH',
  'MISUSE',
  'NOLFS',
  'AUTH',
  'FORMAT',
  'RANGE',
  'NOTADB',
  'NOTICE',
  'WARNING',
];

// The extended codes of each primary code the engine distinguishes, by their number above the low byte.
const EXTENDED: Record<string, string[]> = {
  BUSY: ['RECOVERY', 'SNAPSHOT', 'TIMEOUT'],
  LOCKED: ['SHAREDCACHE', 'VTAB'],
  CANTOPEN: ['NOTEMPDIR', 'ISDIR', 'FULLPATH', 'CONVPATH', 'DIRTYWAL', 'SYMLINK'],
  CORRUPT: ['VTAB', 'SEQUENCE', 'INDEX'],
  READONLY: ['RECOVERY', 'CANTLOCK', 'ROLLBACK', 'DBMOVED', 'CANTINIT', 'DIRECTORY'],
};

/** The name of a SQLite result code, as sqlite3.h spells it (`SQLITE_BUSY_RECOVERY` for 261). */
export function resultCodeName(code: number): string {
  const primary = PRIMARY[code & 0xff] ?? 'ERROR';
  const extended = EXTENDED[primary]?.[(code >> 8) - 1];
  return extended === undefined ? `SQLITE_${primary}` : `SQLITE_${primary}_${extended}`;
}

/** The SQLite result code a failure carries, by name (`SQLITE_BUSY`), or undefined when it is not SQLite's. */
export function sqliteCode(err: unknown): string | undefined {
  const { code, errcode } = (err ?? {}) as { code?: unknown; errcode?: unknown };
  if (typeof errcode === 'number') return resultCodeName(errcode);
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}
