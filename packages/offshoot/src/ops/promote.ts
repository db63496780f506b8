import { fail, type OffshootError } from '../core/errors.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { leaseLiveNow, readBranch, refuseForeignLease } from './helpers/branch/branch-ref.js';
import { checkpointIfDirty } from './helpers/checkout/checkpoint-if-dirty.js';
import { withBranchLease } from './helpers/lease/branch-lease.js';
import type { OpsContext } from './helpers/context/context.js';
import { casRepoint } from './helpers/branch/repoint.js';
import { newLineageAt } from './helpers/chain/new-lineage.js';
import { refreshCheckout } from './helpers/checkout/refresh-checkout.js';
import { type Actor, HUMAN, refuseProtected, refuseUndoPointChange, vetWrite } from './helpers/safety/policy.js';
import { keepModifiedCheckout } from './helpers/safety/keep-diverged.js';
import { checkUndoSlot, keepSafetyFork } from './helpers/safety/safety-fork.js';

/** What promote did. */
export interface PromoteResult {
  db: string;
  source: string;
  target: string;
  txid: number;
  backup: string;
  path: string;
  refreshed: boolean;
  /** Set when the target moved but its existing checkout could not be refreshed (say, BUSY): the command failed. */
  refreshError?: OffshootError;
  mode: 'shared' | 'materialized';
  /**
   * The source was under a live lease someone else holds (a daemon session): its last flushed head was promoted,
   * not writes that session had not flushed yet. A surface that reaches that daemon flushes it first.
   */
  sourceLive: boolean;
}

/**
 * `offshoot promote db@src --onto tgt`: repoints the (existing) target at a fresh lineage reading through a base
 * pointer at the source's head (or a copy with --materialize). The source is unchanged; the target keeps its TTL
 * and protection, its checkpoints reset to `promote`, and its old head — with any uncheckpointed checkout edits —
 * is kept as `<target>-pre-promote`.
 */
export async function promote(
  ctx: OpsContext,
  src: Target,
  onto: string,
  opts: { force?: boolean; materialize?: boolean; actor?: Actor } = {},
): Promise<PromoteResult> {
  validateName('branch', onto);
  if (onto === src.branch)
    throw fail('INVALID_ARGUMENT', `cannot promote ${src.db}@${src.branch} onto itself`, {
      hint: 'name a different --onto branch',
      hints: { agent: 'name a different target branch', sdk: 'name a different target branch' },
    });
  return withBranchLease(ctx, { db: src.db, branch: onto }, () => promoteLeased(ctx, src, onto, opts));
}

async function promoteLeased(
  ctx: OpsContext,
  src: Target,
  onto: string,
  opts: { force?: boolean; materialize?: boolean; actor?: Actor },
): Promise<PromoteResult> {
  const actor = opts.actor ?? HUMAN;
  let source = await readBranch(ctx, src.db, src.branch);
  let tgt = await readBranch(ctx, src.db, onto);
  const human = `offshoot promote ${src.db}@${src.branch} --onto ${onto} --force`;
  refuseProtected(tgt.ref, src.db, onto, 'promote onto', opts.force ?? false, actor, human);
  await refuseUndoPointChange(ctx, src.db, onto, tgt.ref, actor, 'promoting onto', human);
  await refuseForeignLease(ctx, src.db, onto, tgt.ref, 'promote onto');
  await checkUndoSlot(ctx, src.db, onto, 'pre-promote');
  if (await checkpointIfDirty(ctx, src, source.ref, vetWrite(ctx, src, actor, 'implicit', human)))
    source = await readBranch(ctx, src.db, src.branch);
  // The refresh below replaces the target's checkout, so its uncheckpointed edits go into the undo point first.
  const target = { db: src.db, branch: onto };
  if (await checkpointIfDirty(ctx, target, tgt.ref, vetWrite(ctx, target, actor, 'implicit', human)))
    tgt = await readBranch(ctx, src.db, onto);
  const resolver = new ChainResolver(ctx.store);
  const txid = source.ref.head_txid;
  const fresh = await newLineageAt(ctx, src.db, resolver, source.ref.lineage, txid, {
    materialize: opts.materialize ?? false,
  });
  const now = ctx.now().toISOString();
  const next: Ref = {
    ...tgt.ref,
    lineage: fresh.lineage,
    epoch: 1,
    head_txid: txid,
    head_epoch: 1,
    checkpoints: { promote: { txid, epoch: 1, created_at: now } },
    parent: `${src.db}@${src.branch}@${txid}`,
    touched_at: now,
  };
  delete next.base;
  if (fresh.base) next.base = fresh.base;
  delete next.lease_holder;
  delete next.lease_expiry;
  // The undo point is written last, and put back if the repoint fails: a failed promote keeps the previous one.
  const undo = await keepSafetyFork(ctx, src.db, onto, tgt.ref, 'pre-promote', resolver);
  try {
    await casRepoint(ctx, src.db, onto, tgt.etag, next, 'promote');
  } catch (err) {
    await undo.restore();
    throw err;
  }
  await undo.settle();
  const refreshed = await refreshCheckout(
    ctx,
    src.db,
    onto,
    next,
    `promoted from ${src.db}@${src.branch}`,
    `promote ${src.db}@${src.branch} -> ${onto}`,
    () => keepModifiedCheckout(ctx, { db: src.db, branch: onto }, next),
  );
  return {
    db: src.db,
    source: src.branch,
    target: onto,
    txid,
    backup: undo.name,
    path: refreshed.path,
    refreshed: refreshed.refreshed,
    ...(refreshed.error ? { refreshError: refreshed.error } : {}),
    mode: fresh.mode,
    sourceLive: source.ref.lease_holder !== ctx.holder && (await leaseLiveNow(ctx, source.ref)),
  };
}
