import { existsSync } from 'node:fs';
import { fail, hasCode } from '../../../core/errors.js';
import type { Target } from '../../../core/target.js';
import { quiesce, refuseWriter } from '../../../sqlite/quiesce.js';
import { leaseLive, leaseUntil } from '../branch/branch-ref.js';
import { readLiveness } from '../branch/lease-liveness.js';
import { withBranchLease } from '../lease/branch-lease.js';
import type { OpsContext } from '../context/context.js';
import { checkoutFiles, checkoutPath } from '../context/paths.js';
import { removeInBackground } from '../context/temp-dir.js';
import { type Actor, HUMAN, refuseProtected, refuseUndoPointChange } from '../safety/policy.js';

/** What destroy removed. */
export interface DestroyResult {
  db: string;
  branch: string;
  removedCheckout: boolean;
}

/**
 * `offshoot destroy db[@b]`: claims the ref with a `deleting` compare-and-swap, makes sure no connection holds the
 * checkout, deletes the ref conditionally, then the local checkout files, under the branch lease. Protected branches
 * need force (an agent's only under -allow-force), the undo points of protected ones are left to the human; a live
 * lease held elsewhere (LEASE_HELD) and a checkout a foreign connection is writing (BUSY) are refused whatever the
 * flags; a human's force also removes a ref too malformed to read. A parent's destroy never touches a child: only the ref goes; shared objects live on until GC finds them
 * unreachable.
 */
export async function destroyBranch(
  ctx: OpsContext,
  t: Target,
  opts: { force?: boolean; reaping?: boolean; actor?: Actor } = {},
): Promise<DestroyResult> {
  // A ref too malformed to parse carries no lease to take: a human's force removes it by its etag. An agent cannot
  // read its protected flag, so it is refused with the read's own error.
  if (opts.force && (opts.actor ?? HUMAN).kind === 'human' && (await removeMalformedRef(ctx, t)))
    return removeCheckout(ctx, t);
  return withBranchLease(ctx, t, () => destroyLeased(ctx, t, opts));
}

async function destroyLeased(
  ctx: OpsContext,
  t: Target,
  opts: { force?: boolean; reaping?: boolean; actor?: Actor },
): Promise<DestroyResult> {
  const force = opts.force ?? false;
  const actor = opts.actor ?? HUMAN;
  const human = `offshoot destroy ${t.db}@${t.branch} --force`;
  if (!opts.reaping) {
    const seen = await ctx.store.getRef(t.db, t.branch);
    await refuseUndoPointChange(ctx, t.db, t.branch, seen.ref, actor, 'destroying', human);
  }
  const claimed = await ctx.store.updateRef(t.db, t.branch, async (ref) => {
    if (ref.deleting)
      throw fail('BUSY', `${t.db}@${t.branch} is already being destroyed`, {
        retryable: true,
        hint: `retry later, or run 'offshoot gc' to clear a stale claim`,
      });
    if (!opts.reaping) refuseProtected(ref, t.db, t.branch, 'destroy', force, actor, human);
    // The branch lease taken around this refuses a live lease held elsewhere; this holds for a claim found on the ref.
    const liveness = ref.lease_holder === ctx.holder ? undefined : await readLiveness(ctx, [ref]);
    if (liveness !== undefined && leaseLive(ref, ctx.now(), liveness)) {
      throw fail(
        'LEASE_HELD',
        `${t.db}@${t.branch} has a live lease held by ${ref.lease_holder} ${leaseUntil(ref, ctx.now(), liveness)}`,
        {
          hint: `close that session first (offshoot session close ${t.db}@${t.branch}); force never takes a live lease`,
          hints: { sdk: 'close that session first (closeSession / close_session); force never takes a live lease' },
        },
      );
    }
    return { ...ref, deleting: true, deleting_at: ctx.now().toISOString() };
  });
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  if (existsSync(path)) {
    try {
      // --force overrides protection, never a live writer: its COMMIT would land in an unlinked file.
      if (force) refuseWriter(path);
      else quiesce(path);
    } catch (err) {
      if (hasCode(err, 'BUSY')) {
        await ctx.store.updateRef(t.db, t.branch, (ref) => {
          const r = { ...ref };
          delete r.deleting;
          delete r.deleting_at;
          return r;
        });
      }
      throw err;
    }
  }
  await ctx.store.deleteRef(t.db, t.branch, claimed.etag);
  return removeCheckout(ctx, t);
}

// `destroy --force` of a ref that cannot be parsed: it cannot carry a claim, so it is deleted by its etag (a
// concurrent rewrite of it wins). True when there was such a ref and it is gone.
async function removeMalformedRef(ctx: OpsContext, t: Target): Promise<boolean> {
  try {
    await ctx.store.tryGetRef(t.db, t.branch);
    return false;
  } catch (err) {
    if (!hasCode(err, 'CORRUPT')) throw err;
  }
  const raw = await ctx.store.rawRef(t.db, t.branch);
  if (raw === undefined) return false;
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  if (existsSync(path)) refuseWriter(path);
  await ctx.store.deleteRef(t.db, t.branch, raw.etag);
  ctx.warn(`removed the malformed ref of ${t.db}@${t.branch}; gc collects what only it reached`);
  return true;
}

async function removeCheckout(ctx: OpsContext, t: Target): Promise<DestroyResult> {
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  // Gone from its path before destroy returns; its blocks are freed in the background.
  const removed = await removeInBackground(ctx, checkoutFiles(path));
  return { db: t.db, branch: t.branch, removedCheckout: removed };
}
