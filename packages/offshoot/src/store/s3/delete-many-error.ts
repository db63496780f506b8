import { OffshootError } from '../../core/errors.js';

/** One key a batched delete could not remove, as the server reported it. */
export interface DeleteFailure {
  key: string;
  /** The S3 error code, e.g. 'AccessDenied' or 'InternalError'. */
  code: string;
  message: string;
}

// Per-key codes that mean "try again", as opposed to a refusal that a retry would meet again.
const TRANSIENT = new Set(['InternalError', 'ServiceUnavailable', 'SlowDown', 'RequestTimeout', 'OperationAborted']);

/** A deleteMany that removed some keys but not these; retryable when every failure was transient. */
export class DeleteManyError extends OffshootError {
  readonly failures: readonly DeleteFailure[];

  constructor(failures: readonly DeleteFailure[], total: number) {
    const transient = failures.every((f) => TRANSIENT.has(f.code));
    const shown = failures
      .slice(0, 5)
      .map((f) => `${f.key} (${f.code}: ${f.message})`)
      .join(', ');
    const more = failures.length > 5 ? ` and ${failures.length - 5} more` : '';
    super(
      transient ? 'UNAVAILABLE' : 'IO',
      `S3 DeleteObjects: ${failures.length} of ${total} keys were not deleted: ${shown}${more}`,
      {
        retryable: transient,
        hint: transient
          ? 'retry the delete; the keys that were removed stay removed'
          : 'check the credentials and bucket policy allow s3:DeleteObject, then retry',
      },
    );
    this.failures = failures;
  }
}
