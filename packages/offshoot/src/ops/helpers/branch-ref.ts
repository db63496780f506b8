import { fail } from '../../core/errors.js';
import type { Ref } from '../../core/ref.js';
import type { CheckoutIdentity } from '../../sqlite/checkout-sidecar.js';
import type { VersionedRef } from '../../store/store.js';
import type { OpsContext } from './context.js';
import { leaseHolderDeadHere } from './lease-holder.js';

/** Reads a branch that is not being destroyed; NOT_FOUND otherwise. */
export async function readBranch(ctx: OpsContext, db: string, branch: string): Promise<VersionedRef> {
  const got = await ctx.store.getRef(db, branch);
  if (got.ref.deleting) {
    throw fail('NOT_FOUND', `branch ${db}@${branch} is being destroyed`, {
      hint: `wait for the destroy to finish, or run 'offshoot gc' to clear a stale claim`,
    });
  }
  return got;
}

/** The durable state a ref's head names, as recorded in checkout sidecars. */
export function headIdentity(ref: Ref): CheckoutIdentity {
  return { lineage: ref.lineage, epoch: ref.head_epoch, txid: ref.head_txid };
}

/** True when the ref carries a lease that has not expired and whose holder is not provably gone from this machine. */
export function leaseLive(ref: Ref, now: Date): boolean {
  if (!ref.lease_holder || !ref.lease_expiry || leaseHolderDeadHere(ref.lease_holder)) return false;
  const t = Date.parse(ref.lease_expiry);
  return Number.isFinite(t) && t > now.getTime();
}

/** Refuses an at-rest write to a branch whose live lease belongs to someone else (a daemon session). */
export function refuseForeignLease(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  what: string,
  force = false,
): void {
  if (force || !leaseLive(ref, ctx.now()) || ref.lease_holder === ctx.holder) return;
  throw fail(
    'LEASE_HELD',
    `${what} ${db}@${branch}: branch is leased by ${ref.lease_holder} until ${ref.lease_expiry}`,
    {
      hint: `close that session first (offshoot session close ${db}@${branch}), or wait for the lease to expire`,
    },
  );
}
