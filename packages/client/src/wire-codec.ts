import { OffshootError, type ErrorCode } from './errors.js';
import type { WireRequest, WireResponse } from './types.js';

/** The largest response line the client accepts (a `branches` listing of a very large database still fits). */
export const MAX_RESPONSE_BYTES = 64 << 20;

/** One request line; fields that are undefined, null, "", false or an empty meta are left out, as the daemon expects. */
export function encodeRequest(req: WireRequest): string {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req)) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    if (k === 'meta' && Object.keys(v as object).length === 0) continue;
    out[k] = v;
  }
  return `${JSON.stringify(out)}\n`;
}

/** A BAD_RESPONSE error: the daemon's answer is not the protocol. */
export function badResponse(what: string, line: string): OffshootError {
  const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
  return new OffshootError('BAD_RESPONSE', `malformed response from daemon: ${what}: ${shown}`, {
    hint: 'check that the socket belongs to an offshoot daemon of a matching version',
  });
}

/** Parses one line as a JSON object. */
export function parseObject(line: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw badResponse('not JSON', line);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badResponse('not a JSON object', line);
  return value as Record<string, unknown>;
}

/** Parses a response line: returns it when ok, throws the daemon's error rebuilt as an OffshootError otherwise. */
export function decodeResponse(line: string): WireResponse {
  const res = parseObject(line);
  if (typeof res['ok'] !== 'boolean') throw badResponse('no "ok" field', line);
  if (res['ok']) return res as unknown as WireResponse;
  const message = typeof res['error'] === 'string' ? res['error'].replace(/^daemon: /, '') : 'request failed';
  // A code this client does not know (from a newer daemon) is kept verbatim.
  throw new OffshootError(typeof res['code'] === 'string' ? (res['code'] as ErrorCode) : 'INTERNAL', message, {
    ...(typeof res['hint'] === 'string' ? { hint: res['hint'] } : {}),
    ...(typeof res['agent_hint'] === 'string' ? { hints: { agent: res['agent_hint'] } } : {}),
    retryable: res['retryable'] === true,
    humanCanAllow: res['human_can_allow'] === true,
  });
}
