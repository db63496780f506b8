import type { ServerResponse } from 'node:http';
import { asOffshootError, type ErrorCode } from '../core/errors.js';
import { sendJson } from '../protocol/http-kit.js';
import type { ApiError } from './api-types.js';

// Every response the dashboard sends carries these: the page loads only its own scripts and styles, no frame may
// embed it, and no URL (which may carry ?token=) leaks in a Referer.
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};

/** Sets the security headers on a response before anything is written. */
export function secure(res: ServerResponse): void {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
}

const STATUS: Partial<Record<ErrorCode, number>> = {
  USAGE: 400,
  INVALID_NAME: 400,
  INVALID_ARGUMENT: 400,
  NOT_FOUND: 404,
  NOT_INITIALIZED: 404,
  UNSUPPORTED: 404,
  // An answer too large to send (a diff past its cap): nothing wrong with the request's form, narrow it.
  TOO_LARGE: 422,
  BUSY: 503,
  UNAVAILABLE: 503,
};

/** Sends an error as `{ok:false,error,code,hint}` with the given status, else the one its code maps to (500 for the rest). */
export function sendError(res: ServerResponse, err: unknown, status?: number): void {
  const e = asOffshootError(err);
  const body: ApiError = { ok: false, error: e.message, code: e.code };
  if (e.hint !== undefined) body.hint = e.hint;
  sendJson(res, status ?? STATUS[e.code] ?? 500, body);
}
