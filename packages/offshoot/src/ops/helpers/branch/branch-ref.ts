import { fail } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';
import { hostName } from '../../../platform/host-name.js';
import { processAlive } from '../../../platform/process-alive.js';
import { processSpace } from '../../../platform/process-space.js';
import type { CheckoutIdentity } from '../../../sqlite/checkout-sidecar.js';
import type { VersionedRef } from '../../../store/store.js';
import type { OpsContext } from '../context/context.js';
import { leaseHolderDeadHere } from '../context/lease-holder.js';
import { leaseEnd, readLiveness, type Liveness } from './lease-liveness.js';

/** Reads a branch that is not being destroyed; NOT_FOUND otherwise. */
export async function readBranch(ctx: OpsContext, db: string, branch: string): Promise<VersionedRef> {
  return notDeleting(db, branch, await ctx.store.getRef(db, branch));
}

/** A ref already read, unless a destroy has claimed it: then NOT_FOUND, as readBranch says. */
export function notDeleting(db: string, branch: string, got: VersionedRef): VersionedRef {
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

/**
 * The one rule of whether a lease is live: the ref carries a lease that has not ended (its expiry, and the liveness
 * object it stands on, if any, read into liveness — see leaseEnd) and whose holder is not provably gone.
 */
export function leaseLive(ref: Ref, now: Date, liveness: Liveness): boolean {
  const end = leaseEnd(ref, liveness);
  return end !== undefined && end > now.getTime() && !holderGone(ref);
}

/** leaseLive for one ref read just now: reads the liveness object its lease stands on, if any. */
export async function leaseLiveNow(ctx: OpsContext, ref: Ref): Promise<boolean> {
  return leaseLive(ref, ctx.now(), await readLiveness(ctx, [ref]));
}

/**
 * True when the lease's holder provably no longer exists: a process of this host and pid namespace that is gone,
 * named by the holder itself (`host:pidns/pid/id`) or, for a `host/pid` holder, by the process space its daemon
 * session recorded (`lease_space`). Anything less proves nothing (a holder on another host, or one that recorded no
 * space) and the lease stands until it expires.
 */
export function holderGone(ref: Ref): boolean {
  if (leaseHolderDeadHere(ref.lease_holder)) return true;
  if (!ref.lease_holder || ref.lease_space === undefined || ref.lease_space !== processSpace()) return false;
  const m = /^(.+)\/(\d+)(?::[a-z-]+)?$/.exec(ref.lease_holder);
  if (m === null || m[1] !== hostName()) return false;
  const pid = Number(m[2]);
  return pid !== process.pid && !processAlive(pid);
}

/**
 * `until <expiry> (in 25s)`: when a lease someone else holds runs out. A lease standing on a daemon's liveness
 * object says so: it runs out once that daemon stops saying it is alive.
 */
export function leaseUntil(ref: Ref, now: Date, liveness: Liveness): string {
  const end = leaseEnd(ref, liveness);
  const left = (end ?? Number.NaN) - now.getTime();
  const when = Number.isFinite(left) && left > 0 ? ` (in ${Math.ceil(left / 1000)}s)` : '';
  const text = end === undefined ? ref.lease_expiry : new Date(end).toISOString();
  const daemon = ref.lease_liveness !== undefined ? ', renewed while its daemon runs' : '';
  return `until ${text}${when}${daemon}`;
}

/** Refuses an at-rest write to a branch whose live lease belongs to someone else (a daemon session). */
export async function refuseForeignLease(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  what: string,
  force = false,
): Promise<void> {
  if (force || ref.lease_holder === undefined || ref.lease_holder === ctx.holder) return;
  const liveness = await readLiveness(ctx, [ref]);
  if (!leaseLive(ref, ctx.now(), liveness)) return;
  throw fail(
    'LEASE_HELD',
    `${what} ${db}@${branch}: branch is leased by ${ref.lease_holder} ${leaseUntil(ref, ctx.now(), liveness)}`,
    {
      hint: `close that session first (offshoot session close ${db}@${branch}), or wait for the lease to expire`,
    },
  );
}
