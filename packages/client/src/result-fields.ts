import type { WireResponse } from './types.js';
import { badResponse } from './wire-codec.js';

/** The txid of an ok response, or BAD_RESPONSE when the daemon left it out. */
export function requireTxid(res: WireResponse, op: string): number {
  if (typeof res.txid !== 'number') throw badResponse(`${op} returned no txid`, JSON.stringify(res));
  return res.txid;
}

/** The checkout path of an ok response, or BAD_RESPONSE when the daemon left it out. */
export function requireCheckout(res: WireResponse, op: string): string {
  if (typeof res.checkout !== 'string' || res.checkout === '')
    throw badResponse(`${op} returned no checkout path`, JSON.stringify(res));
  return res.checkout;
}

/** The named list of an ok response; a missing list reads as empty, which is how the daemon encodes "none". */
export function listField<K extends 'sessions' | 'branches' | 'databases'>(
  res: WireResponse,
  field: K,
  op: string,
): NonNullable<WireResponse[K]> {
  const v = res[field];
  if (v === undefined || v === null) return [] as unknown as NonNullable<WireResponse[K]>;
  if (!Array.isArray(v)) throw badResponse(`${op} returned a non-list ${field}`, JSON.stringify(res));
  return v as NonNullable<WireResponse[K]>;
}

/** The object `result` of an ok response, or BAD_RESPONSE when it is missing. */
export function requireResult<T>(res: WireResponse, op: string): T {
  if (typeof res.result !== 'object' || res.result === null)
    throw badResponse(`${op} returned no result`, JSON.stringify(res));
  return res.result as T;
}
