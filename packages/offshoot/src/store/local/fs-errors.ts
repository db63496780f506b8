import { asOffshootError, fail } from '../../core/errors.js';
import type { OffshootError } from '../../core/errors.js';

// Only system errors carry a numeric errno; offshoot's own errors also have a (non-errno) string code.
const errno = (err: unknown): string | undefined => {
  const e = err as NodeJS.ErrnoException | undefined;
  return typeof e?.errno === 'number' ? e.code : undefined;
};

/** True when an fs error means no file exists at the path (itself or a parent missing, or a parent is a file). */
export function isMissing(err: unknown): boolean {
  const code = errno(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The NOT_FOUND every read of an absent key raises. */
export function notFound(key: string, cause?: unknown): OffshootError {
  return fail('NOT_FOUND', `object ${key} does not exist`, {
    hint: 'check the key, or list the store to see what it holds',
    cause,
  });
}

/**
 * Translates a filesystem failure while reading or writing key into an OffshootError with a stable code. A
 * file where a directory should be, or a directory where a file should be, means "absent" to a reader and a
 * key/prefix collision to a writer.
 */
export function storeError(err: unknown, key: string, op: 'read' | 'write'): OffshootError {
  const code = errno(err);
  if (code === 'ENOENT' || (op === 'read' && (code === 'ENOTDIR' || code === 'EISDIR'))) return notFound(key, err);
  switch (code) {
    case 'ENOTDIR':
    case 'EISDIR':
    case 'ENOTEMPTY':
    case 'EEXIST':
      return fail('INVALID_ARGUMENT', `key ${key} collides with a directory holding other keys`, {
        hint: 'a local store cannot hold both a key and keys beneath it (k and k/…); pick a different key',
        cause: err,
      });
    case 'ENAMETOOLONG':
      return fail('INVALID_ARGUMENT', `key ${key} is too long for this filesystem`, {
        hint: 'use a shorter key',
        cause: err,
      });
    default:
      return asOffshootError(err);
  }
}
