import type { PromoteResult, WireResponse } from './types.js';
import { OffshootError } from './errors.js';
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

/**
 * A promote sent with `if_head` must say it checked it (`result.if_head`): a daemon that does not know the field
 * promotes without the check, which this names (the target's previous head is still kept as its undo point).
 */
export function requireIfHeadChecked(res: WireResponse, ifHead: number): void {
  const result = res.result as Partial<PromoteResult> | undefined;
  if (result?.if_head === ifHead) return;
  const backup = typeof result?.backup === 'string' ? ` (its previous head is kept as ${result.backup})` : '';
  throw new OffshootError(
    'UNSUPPORTED',
    `the daemon promoted without checking if_head: it is too old to know it${backup}`,
    {
      hint: "restart 'offshoot serve' with this version of offshoot, which checks if_head, before the next such promote",
    },
  );
}

/**
 * A fork sent with `ephemeral` must say it made ephemeral forks (`ephemeral: true`): a daemon that does not know the
 * field made durable ones, which this names (they are in the store: destroy them, or keep them).
 */
export function requireEphemeral(res: WireResponse, db: string, made: string | readonly string[]): void {
  if (res.ephemeral === true) return;
  const names = typeof made === 'string' ? [made] : [...made];
  throw new OffshootError(
    'UNSUPPORTED',
    `the daemon made durable forks, not ephemeral ones: it is too old to know ephemeral (${names.map((n) => `${db}@${n}`).join(', ')} are in the store)`,
    { hint: "restart 'offshoot serve' with this version of offshoot, and destroy the forks it made" },
  );
}
