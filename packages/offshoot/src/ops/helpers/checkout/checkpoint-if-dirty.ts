import { existsSync } from 'node:fs';
import { hasCode } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';
import { checkClean, readSidecar, sameIdentity } from '../../../sqlite/checkout-sidecar.js';
import { headIdentity } from '../branch/branch-ref.js';
import { withBranchLease } from '../lease/branch-lease.js';
import { checkpointCheckout } from './checkpoint-checkout.js';
import type { OpsContext } from '../context/context.js';
import { checkoutPath } from '../context/paths.js';

/**
 * Makes a branch's head include everything committed to its checkout: a checkout proven clean (O(1)) costs nothing;
 * a dirty one gets an unnamed checkpoint of its changed pages, once `vet` (the safety policy's rule for a write into
 * the branch by whoever asked the caller, `vetWrite`) allows it on the ref read under the lease. A busy or leased
 * checkout is reported and skipped, so the caller proceeds from the last durable head. Returns true when a
 * checkpoint ran, so the ref changed (even one that wrote no object moves `touched_at`): the caller reads it again
 * before it compares and swaps.
 */
export async function checkpointIfDirty(
  ctx: OpsContext,
  t: Target,
  ref: Ref,
  vet: (ref: Ref) => Promise<void>,
): Promise<boolean> {
  if (!(await checkoutDirty(ctx, t, ref))) return false;
  try {
    await withBranchLease(ctx, t, () => checkpointCheckout(ctx, t, undefined, undefined, vet));
    return true;
  } catch (err) {
    if (!hasCode(err, 'BUSY') && !hasCode(err, 'LEASE_HELD')) throw err;
    ctx.warn(`${t.db}@${t.branch}: ${err.message}; proceeding from the last durable head (txid ${ref.head_txid})`);
    return false;
  }
}

/**
 * True when the branch's checkout holds writes on the head `ref` names that no checkpoint has recorded: what
 * checkpointIfDirty would checkpoint. A checkout proven clean costs O(1); one of another head is not this head's.
 */
export async function checkoutDirty(ctx: OpsContext, t: Target, ref: Ref): Promise<boolean> {
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  if (!existsSync(path)) return false;
  const sc = readSidecar(path);
  if (!sameIdentity(sc, headIdentity(ref))) return false;
  return (await checkClean(path, sc)) !== 'clean';
}
