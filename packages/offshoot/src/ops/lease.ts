import { hasCode } from '../core/errors.js';
import type { Target } from '../core/target.js';
import { leaseLive } from './helpers/branch/branch-ref.js';
import { leaseEndText, readLiveness } from './helpers/branch/lease-liveness.js';
import type { OpsContext } from './helpers/context/context.js';
import { DEFAULT_LEASE_TTL, takeLease } from './helpers/lease/lease-hold.js';

// `offshoot lease release`, which a session also gives its lease back by.
export { releaseLease } from './helpers/lease/lease-hold.js';
// The daemon's liveness object, which its sessions' long leases stand on, and how long those leases are.
export { daemonSessionLeaseMs, LivenessBeacon } from './helpers/lease/liveness-beacon.js';

/** One leased branch as `lease list` reports it. */
export interface LeaseInfo {
  db: string;
  branch: string;
  holder: string;
  epoch: number;
  expiry: string;
  live: boolean;
}

/** Every branch that carries a lease, live or expired. */
export async function listLeases(ctx: OpsContext): Promise<LeaseInfo[]> {
  const out: LeaseInfo[] = [];
  const seen = new Map<string, number>();
  for (const { db, branch } of await ctx.store.listAllBranches()) {
    let got;
    try {
      got = await ctx.store.tryGetRef(db, branch);
    } catch (err) {
      if (!hasCode(err, 'CORRUPT')) throw err;
      ctx.warn(err.message);
      continue;
    }
    if (!got?.ref.lease_holder) continue;
    const r = got.ref;
    const liveness = await readLiveness(ctx, [r], seen);
    out.push({
      db,
      branch,
      holder: r.lease_holder ?? '',
      epoch: r.epoch,
      expiry: leaseEndText(r, liveness) ?? '',
      live: leaseLive(r, ctx.now(), liveness),
    });
  }
  return out;
}

/**
 * Acquires or renews a branch lease for ctx.holder. A fresh acquire (no live lease of ours) bumps the epoch, which
 * fences any earlier writer; renewing our own live lease only extends it. A daemon session names its daemon's
 * liveness object (`liveness`), which its long lease then stands on.
 */
export async function acquireLease(
  ctx: OpsContext,
  t: Target,
  ttl: string = DEFAULT_LEASE_TTL,
  opts: { space?: string; liveness?: string } = {},
): Promise<{ epoch: number; expiry: string; renewed: boolean }> {
  const { ref, renewed } = await takeLease(ctx, t, ttl, opts);
  return { epoch: ref.epoch, expiry: ref.lease_expiry ?? '', renewed };
}
