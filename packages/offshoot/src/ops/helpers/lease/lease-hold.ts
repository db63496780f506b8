import { fail } from '../../../core/errors.js';
import { durationMs, parseDuration } from '../../../core/duration.js';
import { type Ref, withoutLease } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';
import { holderGone, leaseLive, leaseUntil } from '../branch/branch-ref.js';
import { readLiveness } from '../branch/lease-liveness.js';
import type { OpsContext } from '../context/context.js';

/** The default length of a lease a holder keeps (`lease acquire`'s). */
export const DEFAULT_LEASE_TTL = '30s';

/**
 * Acquires or renews a branch lease a holder keeps (a session, `lease acquire`) and returns the ref as it wrote it:
 * durable, and under a lease of ours, so its head cannot move until we write it (a session starts from it without
 * reading it again). A fresh acquire (no live lease of ours) bumps the epoch, which fences any earlier writer;
 * renewing our own live lease only extends it. A daemon session names its daemon's liveness object (`liveness`),
 * which its long lease then stands on.
 */
export async function takeLease(
  ctx: OpsContext,
  t: Target,
  ttl: string = DEFAULT_LEASE_TTL,
  opts: { space?: string; liveness?: string } = {},
): Promise<{ ref: Ref; renewed: boolean }> {
  const ms = durationMs(parseDuration(ttl));
  if (ms <= 0)
    throw fail('INVALID_ARGUMENT', `invalid lease ttl ${ttl}: must be positive`, {
      hint: 'use a duration such as 30s',
    });
  let renewed = false;
  const { ref } = await ctx.store.updateRef(t.db, t.branch, async (r) => {
    if (r.reaping || r.deleting)
      throw fail('BUSY', `${t.db}@${t.branch} is being reaped or destroyed`, {
        hint: 'the branch is going away; fork another',
      });
    const now = ctx.now();
    const liveness = await readLiveness(ctx, [r]);
    const live = leaseLive(r, now, liveness);
    if (live && r.lease_holder !== ctx.holder) {
      throw fail('LEASE_HELD', `${t.db}@${t.branch} is leased by ${r.lease_holder} ${leaseUntil(r, now, liveness)}`, {
        hint: `close that session first (offshoot session close ${t.db}@${t.branch}), or wait for the lease to expire`,
      });
    }
    if (holderGone(r))
      ctx.warn(
        `took over the lease of ${t.db}@${t.branch} from ${r.lease_holder}: no such process on this host and pid namespace`,
      );
    renewed = live;
    const next = { ...r, lease_holder: ctx.holder, lease_expiry: new Date(now.getTime() + ms).toISOString() };
    delete next.lease_space;
    delete next.lease_liveness;
    if (opts.space !== undefined) next.lease_space = opts.space;
    if (opts.liveness !== undefined) next.lease_liveness = opts.liveness;
    if (!live) next.epoch = r.epoch + 1;
    return next;
  });
  return { ref, renewed };
}

/** Releases a branch's lease (whoever holds it) and restarts its TTL clock. */
export async function releaseLease(ctx: OpsContext, t: Target, opts: { force?: boolean } = {}): Promise<void> {
  await ctx.store.updateRef(t.db, t.branch, async (r) => {
    if (!r.lease_holder)
      throw fail('NOT_FOUND', `no lease on ${t.db}@${t.branch}`, { hint: `see 'offshoot lease list'` });
    const session =
      r.lease_space !== undefined &&
      r.lease_holder !== ctx.holder &&
      leaseLive(r, ctx.now(), await readLiveness(ctx, [r]));
    if (session && !opts.force)
      throw fail('LEASE_HELD', `${t.db}@${t.branch} is held by the live session of ${r.lease_holder}`, {
        hint: `close it (offshoot session close ${t.db}@${t.branch}); --force releases it anyway and fences that session`,
      });
    return { ...withoutLease(r), touched_at: ctx.now().toISOString() };
  });
}
