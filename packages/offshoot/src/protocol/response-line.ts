import { fail } from '../core/errors.js';
import { errorResponse } from './errors.js';
import type { Response } from './wire.js';

/**
 * The largest response line the daemon sends: the longest one the SDKs read (`MAX_RESPONSE_BYTES` of
 * `@offshoot/client` and of the Python client). A longer answer would be refused by every client anyway.
 */
export const MAX_RESPONSE_BYTES = 64 << 20;

/** The TOO_LARGE error a response past `limit` bytes is replaced with; the hint names the narrower requests. */
export function responseTooLarge(what: string, limit: number = MAX_RESPONSE_BYTES): Response {
  return errorResponse(
    fail('TOO_LARGE', `${what} exceeds the ${limit >> 20} MiB a response may hold`, {
      hint: 'ask for less: a diff with summary (--summary) or one table (--table T), a smaller page of branches',
    }),
  );
}

/**
 * One response as a JSON line, never throwing: an answer past V8's string limit (~512 MiB) or past `limit` bytes
 * becomes a TOO_LARGE error, one JSON cannot carry an INTERNAL one, so no request can take the daemon down with its
 * own answer.
 */
export function encodeResponse(res: Response, limit: number = MAX_RESPONSE_BYTES): string {
  let text: string;
  try {
    text = JSON.stringify(res);
  } catch (err) {
    // Anything but V8's string limit is a value JSON cannot carry (a BigInt): a bug, reported as one.
    const res = err instanceof RangeError ? responseTooLarge('the answer', limit) : errorResponse(err);
    return `${JSON.stringify(res)}\n`;
  }
  // length counts UTF-16 units: at most 3 bytes each in UTF-8, so only a long line needs counting.
  if (text.length * 3 > limit && Buffer.byteLength(text) > limit) {
    return `${JSON.stringify(responseTooLarge(`the answer (${Buffer.byteLength(text)} bytes)`, limit))}\n`;
  }
  return `${text}\n`;
}
