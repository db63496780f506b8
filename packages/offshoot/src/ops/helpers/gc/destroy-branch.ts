import { existsSync } from 'node:fs';
import { fail, hasCode } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';
import { type HeldAlone, holdAlone, quiesce, refuseWriter } from '../../../sqlite/quiesce.js';
import type { VersionedRef } from '../../../store/store.js';
import { leaseLive, leaseUntil } from '../branch/branch-ref.js';
import { readLiveness } from '../branch/lease-liveness.js';
import type { ReapHold } from '../branch/reap-hold.js';
import { type CheckoutWork, checkoutWork, discardedText } from '../checkout/checkout-work.js';
import { withBranchLease } from '../lease/branch-lease.js';
import type { OpsContext } from '../context/context.js';
import { removeUnsyncedNote } from '../checkout/unsynced-checkout.js';
import { checkoutFiles, checkoutPath } from '../context/paths.js';
import { removeInBackground } from '../context/temp-dir.js';
import { spillFinal } from '../history/final-spill.js';
import {
  type Actor,
  HUMAN,
  refuseAgentDiscardingWork,
  refuseProtected,
  refuseUndoPointChange,
} from '../safety/policy.js';

/** What destroy removed. */
export interface DestroyResult {
  db: string;
  branch: string;
  removedCheckout: boolean;
  /** What the removed checkout held that no checkpoint had: gone with it. */
  discarded?: CheckoutWork;
  /** A reap only: nothing was destroyed, because the checkout still holds work (the reap waits for it). */
  postponed?: ReapHold;
}

/**
 * `offshoot destroy db[@b]`: takes the branch lease and the `deleting` claim in one compare-and-swap, makes sure no connection holds the
 * checkout, deletes the ref conditionally, then the local checkout files. Protected branches
 * need force (an agent's only under -allow-force), the undo points of protected ones are left to the human; a live
 * lease held elsewhere (LEASE_HELD) and a checkout a foreign connection is writing (BUSY) are refused whatever the
 * flags; a human's force also removes a ref too malformed to read. A parent's destroy never touches a child: only the ref goes; shared objects live on until GC finds them
 * unreachable. A checkout holding writes no checkpoint has goes with its branch, and the result (and a warning) says
 * what was discarded; an agent needs force for that (under -allow-force). A reap instead leaves such a checkout,
 * and one another connection holds open, alone (`postponed`).
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
  // The lease's own write carries the claim, one durable write fewer: a crash after it leaves the claimed and leased
  // ref the two writes left, before it the ref as it was (where the lease alone was left to expire).
  return withBranchLease(
    ctx,
    t,
    (taken) => destroyLeased(ctx, t, opts, taken),
    (ref) => claim(ctx, t, ref, opts),
  );
}

/**
 * Runs every refusal destroyBranch would on the branch as it stands (a claim already there, a live lease held
 * elsewhere, protection, an undo point), and changes nothing: whether this actor's destroy would go ahead.
 */
export async function checkDestroyBranch(
  ctx: OpsContext,
  t: Target,
  opts: { force?: boolean; actor?: Actor } = {},
): Promise<void> {
  const { ref } = await ctx.store.getRef(t.db, t.branch);
  await refuseLiveLease(ctx, t, ref);
  await claim(ctx, t, ref, opts);
}

/**
 * The ref with the `deleting` claim on it, or the refusal: a claim already there (BUSY), a protected branch or an
 * undo point the actor may not remove.
 */
async function claim(
  ctx: OpsContext,
  t: Target,
  ref: Ref,
  opts: { force?: boolean; reaping?: boolean; actor?: Actor },
): Promise<Ref> {
  const actor = opts.actor ?? HUMAN;
  const human = `offshoot destroy ${t.db}@${t.branch} --force`;
  if (ref.deleting)
    throw fail('BUSY', `${t.db}@${t.branch} is already being destroyed`, {
      retryable: true,
      hint: `retry later, or run 'offshoot gc' to clear a stale claim`,
    });
  if (!opts.reaping) {
    await refuseUndoPointChange(ctx, t.db, t.branch, ref, actor, 'destroying', human);
    refuseProtected(ref, t.db, t.branch, 'destroy', opts.force ?? false, actor, human);
    if (actor.kind === 'agent') {
      const work = await checkoutWork(checkoutPath(ctx.checkoutRoot, t.db, t.branch));
      refuseAgentDiscardingWork(t.db, t.branch, work, opts.force ?? false, actor, human);
    }
  }
  return { ...ref, deleting: true, deleting_at: ctx.now().toISOString() };
}

/** LEASE_HELD for a live lease held elsewhere, which a claim written without taking the lease must check itself. */
async function refuseLiveLease(ctx: OpsContext, t: Target, ref: Ref): Promise<void> {
  const liveness = ref.lease_holder === ctx.holder ? undefined : await readLiveness(ctx, [ref]);
  if (liveness === undefined || !leaseLive(ref, ctx.now(), liveness)) return;
  throw fail(
    'LEASE_HELD',
    `${t.db}@${t.branch} has a live lease held by ${ref.lease_holder} ${leaseUntil(ref, ctx.now(), liveness)}`,
    {
      hint: `close that session first (offshoot session close ${t.db}@${t.branch}); force never takes a live lease`,
      hints: { sdk: 'close that session first (closeSession / close_session); force never takes a live lease' },
    },
  );
}

async function destroyLeased(
  ctx: OpsContext,
  t: Target,
  opts: { force?: boolean; reaping?: boolean; actor?: Actor },
  taken: VersionedRef | undefined,
): Promise<DestroyResult> {
  const force = opts.force ?? false;
  // No lease was taken (a reaping or destroy claim on the ref, or our own lease already there): the claim is a write
  // of its own, and the lease it finds on the ref is checked here.
  const claimed =
    taken ??
    (await ctx.store.updateRef(t.db, t.branch, async (ref) => {
      await refuseLiveLease(ctx, t, ref);
      return claim(ctx, t, ref, opts);
    }));
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  let discarded: CheckoutWork | undefined;
  let alone: HeldAlone | undefined;
  if (existsSync(path)) {
    try {
      if (opts.reaping) {
        const r = await reapableCheckout(path);
        if (r.hold !== undefined) {
          await unclaim(ctx, t);
          return { db: t.db, branch: t.branch, removedCheckout: false, postponed: r.hold };
        }
        alone = r.alone;
      } else {
        discarded = await checkoutWork(path);
        // --force overrides protection, never a live writer: its COMMIT would land in an unlinked file.
        if (force) refuseWriter(path);
        else quiesce(path);
      }
    } catch (err) {
      if (hasCode(err, 'BUSY')) await unclaim(ctx, t);
      throw err;
    }
  }
  try {
    const last = await spillFinal(ctx, t, claimed, opts.reaping ? 'reap' : 'destroy', discarded?.reason);
    await ctx.store.deleteRef(t.db, t.branch, last.etag);
  } finally {
    alone?.release();
  }
  const removed = await removeCheckout(ctx, t);
  if (discarded === undefined) return removed;
  ctx.warn(discardedText(`${t.db}@${t.branch}`, discarded));
  return { ...removed, discarded };
}

/** Takes the destroy claim back off the ref: the branch stays as it was. */
async function unclaim(ctx: OpsContext, t: Target): Promise<void> {
  await ctx.store.updateRef(t.db, t.branch, (ref) => {
    const r = { ...ref };
    delete r.deleting;
    delete r.deleting_at;
    return r;
  });
}

/**
 * Whether a reap may remove the checkout at path: only while no other connection has it open, which the returned
 * hold keeps so until the ref is gone (no application can open it and write into a file about to be unlinked), and
 * while it holds no work a checkpoint lacks (checked under that hold: a write just before it shows).
 */
async function reapableCheckout(path: string): Promise<{ alone?: HeldAlone; hold?: ReapHold }> {
  let alone: HeldAlone;
  try {
    alone = holdAlone(path);
  } catch (err) {
    if (hasCode(err, 'BUSY')) return { hold: 'open_connection' };
    throw err;
  }
  const work = await checkoutWork(path).catch((err: unknown) => {
    alone.release();
    throw err;
  });
  if (work === undefined) return { alone };
  alone.release();
  return { hold: work.reason };
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
  // Gone from its path before destroy returns; its blocks are freed in the background. A note of its copy placed
  // unsynced goes too: a recovery would rebuild the checkout of a branch that is gone.
  const removed = await removeInBackground(ctx, checkoutFiles(path));
  await removeUnsyncedNote(ctx.checkoutRoot, t);
  return { db: t.db, branch: t.branch, removedCheckout: removed };
}
