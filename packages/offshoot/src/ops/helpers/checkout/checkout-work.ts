import { type Stats, statSync } from 'node:fs';
import { checkClean, readSidecar } from '../../../sqlite/checkout-sidecar.js';
import type { ReapHold } from '../branch/reap-hold.js';

/** Work in a local checkout that no checkpoint has: what a reap waits for and a destroy discards. */
export interface CheckoutWork {
  reason: Exclude<ReapHold, 'open_connection'>;
  /** The txid the checkout was materialized or last checkpointed at (its sidecar's), when it has a sidecar. */
  sinceTxid?: number;
  /** When it was last written: the later mtime of the file and its -wal (RFC 3339). */
  lastWrite: string;
  /** Bytes in its -wal, not yet folded into the file. */
  walBytes: number;
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * What the checkout at path holds that no checkpoint has, or undefined when there is no checkout or it is proven clean
 * (O(1): the sidecar's fingerprint and an empty -wal; an earlier implementation's hash-only sidecar is checked by
 * hashing once). A checkout with no readable sidecar cannot be proven clean and counts as work.
 */
export async function checkoutWork(path: string): Promise<CheckoutWork | undefined> {
  const main = statOf(path);
  if (main === undefined) return undefined;
  const sidecar = readSidecar(path);
  const verdict = await checkClean(path, sidecar);
  if (verdict === 'clean') return undefined;
  const wal = statOf(`${path}-wal`);
  return {
    reason: verdict === 'modified' ? 'uncheckpointed_writes' : 'unverified_checkout',
    ...(sidecar !== undefined ? { sinceTxid: sidecar.txid } : {}),
    lastWrite: new Date(Math.max(main.mtimeMs, wal?.mtimeMs ?? 0)).toISOString(),
    walBytes: wal?.size ?? 0,
  };
}

/** What a destroy discarded with a checkout, in words (`name` is the branch, `db@branch`). */
export function discardedText(name: string, w: CheckoutWork): string {
  const what =
    w.reason === 'uncheckpointed_writes'
      ? `the writes no checkpoint had in the checkout of ${name}`
      : `the checkout of ${name}, which could not be proven clean (no readable .sum sidecar)`;
  const since = w.sinceTxid === undefined ? '' : `; changed since txid ${w.sinceTxid}`;
  const wal = w.walBytes > 0 ? `; ${w.walBytes} bytes in its -wal` : '';
  return `discarded ${what} (last written ${w.lastWrite}${since}${wal})`;
}
