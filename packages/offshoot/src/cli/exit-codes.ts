import type { ErrorCode } from '../core/errors.js';

/** Process exit codes by failure class; scripts branch on these, so they never change meaning. */
export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  notFound: 3,
  conflict: 4,
  protected: 5,
  busy: 6,
  corrupt: 7,
  unavailable: 8,
  mergeConflict: 9,
} as const;

// A Record over every ErrorCode, so adding a code without deciding its exit code fails to compile.
const BY_CODE: Record<ErrorCode, number> = {
  USAGE: EXIT.usage,
  INVALID_NAME: EXIT.usage,
  INVALID_ARGUMENT: EXIT.usage,
  TOO_LARGE: EXIT.usage,
  NOT_FOUND: EXIT.notFound,
  NOT_INITIALIZED: EXIT.notFound,
  ALREADY_EXISTS: EXIT.conflict,
  CAS_CONFLICT: EXIT.conflict,
  BASE_MOVED: EXIT.conflict,
  MERGE_CONFLICT: EXIT.mergeConflict,
  PROTECTED: EXIT.protected,
  BUSY: EXIT.busy,
  LEASE_HELD: EXIT.busy,
  LEASE_LOST: EXIT.busy,
  FENCED: EXIT.busy,
  SESSION_OPEN: EXIT.busy,
  CORRUPT: EXIT.corrupt,
  CHECKSUM_MISMATCH: EXIT.corrupt,
  LAYOUT_TOO_NEW: EXIT.corrupt,
  SCHEMA_TOO_NEW: EXIT.corrupt,
  UNAVAILABLE: EXIT.unavailable,
  TIMEOUT: EXIT.unavailable,
  IO: EXIT.unavailable,
  UNSUPPORTED: EXIT.unavailable,
  INTERNAL: EXIT.internal,
};

/** The exit code for an error code; anything unknown is internal. */
export function exitCodeFor(code: string): number {
  return Object.hasOwn(BY_CODE, code) ? (BY_CODE[code as ErrorCode] ?? EXIT.internal) : EXIT.internal;
}

/** One line per exit code, for help text. */
export const EXIT_CODES_HELP =
  'exit codes: 0 ok, 1 internal error, 2 usage, invalid argument or too large an answer, 3 not found, 4 conflict, 5 protected, 6 busy or leased, 7 corrupt or too new, 8 store unavailable, 9 merge conflict';
