import { existsSync } from 'node:fs';
import type { Target } from '../core/target.js';
import { processSpace } from '../platform/process-space.js';
import { readBranch } from './helpers/branch/branch-ref.js';
import { LiveChain } from './helpers/chain/live-chain.js';
import { discardStaged, type StagedCheckout, stageCheckout } from './helpers/checkout/install-checkout.js';
import { writableCheckout } from './helpers/checkout/writable-checkout.js';
import type { OpsContext } from './helpers/context/context.js';
import { keepDivergedCheckout } from './helpers/safety/keep-diverged.js';
import { checkoutPath } from './helpers/context/paths.js';
import { releaseLease, takeLease } from './helpers/lease/lease-hold.js';
import { type Actor, HUMAN, refuseAgentCheckout } from './helpers/safety/policy.js';
import { type JournalCheck, keepUnflushed, resetJournalMode } from './helpers/safety/reopen.js';
import type { OpenedBranch } from './live-branch.js';

export { recoverUnsyncedCheckouts } from './helpers/checkout/recover-unsynced.js';

/** Who opens a branch for a live session, the lease the session will hold, and what the session judges for itself. */
export interface OpenOptions {
  actor?: Actor;
  /** The session's lease length (ms). */
  leaseMs: number;
  /** The daemon's liveness object the lease stands on (then lasting leaseMs, renewed by the session). */
  liveness?: string;
  /** Whether a checkout found at rest broke the connection contract of capture (left WAL mode). */
  journalCheck: JournalCheck;
  /** Where the session logs what it carries on past (a merge that failed costs a longer chain, not a flush). */
  log: (message: string) => void;
}

/**
 * The branch head staged privately beside a checkout path that holds no file (a fresh fork's), or undefined: staged
 * while the session's lease is written, it touches nothing anyone else may use, and it is placed only once the lease
 * is durable and only if it is still of the head. A branch someone leases is not staged for (the lease would be
 * refused), and a failure here is met again, and reported, by the install that then runs in its stead. A copy is
 * not waited onto the disk: the session holds the checkout until it is (see UnsyncedCheckout).
 */
async function stageIfAbsent(ctx: OpsContext, t: Target): Promise<StagedCheckout | undefined> {
  try {
    if (existsSync(checkoutPath(ctx.checkoutRoot, t.db, t.branch))) return undefined;
    const { ref } = await ctx.store.getRef(t.db, t.branch);
    if (ref.lease_holder !== undefined || ref.deleting || ref.reaping) return undefined;
    return await stageCheckout(ctx, t.db, t.branch, ref, undefined, { deferSync: true });
  } catch {
    return undefined;
  }
}

/**
 * `open` (a live session's): leases the branch for the session (a fresh lease bumps the epoch, which fences every
 * earlier writer) and hands over its checkout as exactly the durable head, as the policy lets `actor`: a session is a
 * writable checkout, so an agent may not open the way back of a protected branch (decided before the lease is
 * written, so a refusal writes nothing). A fresh fork's head is staged while the lease is written; a checkout left out
 * of WAL mode is put back, and whatever a checkout holds beyond the head is kept as an undo branch, never discarded.
 * A failure gives the lease back.
 */
export async function open(ctx: OpsContext, t: Target, opts: OpenOptions): Promise<OpenedBranch> {
  const actor = opts.actor ?? HUMAN;
  if (actor.kind === 'agent')
    await refuseAgentCheckout(ctx, t.db, t.branch, (await readBranch(ctx, t.db, t.branch)).ref, actor, false);
  const [leased, staging] = await Promise.allSettled([
    takeLease(ctx, t, `${opts.leaseMs}ms`, {
      space: processSpace(),
      ...(opts.liveness !== undefined ? { liveness: opts.liveness } : {}),
    }),
    stageIfAbsent(ctx, t),
  ]);
  const staged = staging.status === 'fulfilled' ? staging.value : undefined;
  if (leased.status === 'rejected') {
    await discardStaged(staged);
    throw leased.reason;
  }
  const { ref } = leased.value;
  try {
    const warnings = [
      ...(await resetJournalMode(ctx, t, ref, opts.journalCheck)),
      ...(await keepUnflushed(ctx, t, ref)),
    ];
    const co = await writableCheckout(ctx, t, ref, {
      keepDiverged: () => keepDivergedCheckout(ctx, t, ref),
      ...(staged ? { staged } : {}),
    });
    await discardStaged(staged);
    return {
      live: {
        ctx,
        db: t.db,
        branch: t.branch,
        path: co.path,
        chain: new LiveChain(ctx, t.db, opts.log),
        ephemeral: () => ctx.ephemeral?.holds(t.db, t.branch) === true,
      },
      ref,
      warnings,
      ...(staged?.placed ? { written: { sidecar: staged.sidecar, sums: staged.sums } } : {}),
      ...(staged?.placed && staged.unsynced !== undefined ? { unsynced: staged.unsynced } : {}),
    };
  } catch (err) {
    await staged?.unsynced?.settle().catch(() => undefined);
    await discardStaged(staged);
    await releaseLease(ctx, t).catch(() => undefined);
    throw err;
  }
}
