import { asOffshootError, OffshootError, type ErrorCode } from '../core/errors.js';
import type { Response } from './wire.js';

/** Renders an error as a wire response: the message (prefixed `daemon: ` as clients expect) plus code and hint. */
export function errorResponse(err: unknown): Response {
  const e = asOffshootError(err);
  const res: Response = { ok: false, error: `daemon: ${e.message}`, code: e.code, retryable: e.retryable };
  if (e.hint !== undefined) res.hint = e.hint;
  return res;
}

/** Rebuilds an OffshootError from a wire response, so callers check the same codes locally and remotely. */
export function errorFromResponse(res: Response): OffshootError {
  const message = (res.error ?? 'daemon: request failed').replace(/^daemon: /, '');
  return new OffshootError((res.code as ErrorCode | undefined) ?? 'INTERNAL', message, {
    ...(res.hint !== undefined ? { hint: res.hint } : {}),
    retryable: res.retryable ?? false,
  });
}
