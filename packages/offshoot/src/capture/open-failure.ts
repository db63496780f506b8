import { fail, type OffshootError } from '../core/errors.js';

/** Out of descriptors, per process (EMFILE) or system-wide (ENFILE). */
export function isDescriptorShortage(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'EMFILE' || code === 'ENFILE';
}

/** The error for a live database file that cannot be opened: NOT_FOUND only when it is really gone. */
export function openFailure(err: unknown, what: string): OffshootError {
  const code = (err as NodeJS.ErrnoException).code;
  if (isDescriptorShortage(err)) {
    return fail('UNAVAILABLE', `${what}: the daemon ran out of file descriptors (${code})`, {
      retryable: true,
      hint: 'raise the open-file limit (ulimit -n) or lower serve -max-open, then retry',
      cause: err,
    });
  }
  return fail(code === 'ENOENT' ? 'NOT_FOUND' : 'IO', `${what}: ${(err as Error).message}`, {
    hint: 'check that the checkout still exists and is readable by the daemon',
    cause: err,
  });
}
