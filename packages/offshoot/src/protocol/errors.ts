import { asOffshootError, hintFor } from '../core/errors.js';
import type { Response } from './wire.js';

/** Renders an error as a wire response: the message (prefixed `daemon: ` as clients expect) plus code and hint. */
export function errorResponse(err: unknown): Response {
  const e = asOffshootError(err);
  const res: Response = { ok: false, error: `daemon: ${e.message}`, code: e.code, retryable: e.retryable };
  const hint = hintFor(e, 'sdk');
  if (hint !== undefined) res.hint = hint;
  return res;
}
