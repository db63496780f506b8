import { fail, type OffshootError } from '../core/errors.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { leaseLiveNow, readBranch, refuseForeignLease } from './helpers/branch/branch-ref.js';
import { checkoutDirty, checkpointIfDirty } from './helpers/checkout/checkpoint-if-dirty.js';
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
  refuseSelfPromote(src, onto);
  return withBranchLease(ctx, { db: src.db, branch: onto }, () => promoteLeased(ctx, src, onto, opts));
}

/**
 * Runs every refusal `promote` would on the branches as they stand, and changes nothing (no lease, no write):
 * whether this actor's promote would go ahead. A caller asks it before it asks its human (`check` on the wire).
 */
export async function checkPromote(
  ctx: OpsContext,
  src: Target,
  onto: string,
  opts: { force?: boolean; actor?: Actor } = {},
): Promise<void> {
  refuseSelfPromote(src, onto);
  const source = await readBranch(ctx, src.db, src.branch);
  const tgt = await readBranch(ctx, src.db, onto);
  const vet = await vetPromote(ctx, src, onto, tgt.ref, opts);
  const target = { db: src.db, branch: onto };
  if (await checkoutDirty(ctx, src, source.ref)) await vet.write(src)(source.ref);
  if (await checkoutDirty(ctx, target, tgt.ref)) await vet.write(target)(tgt.ref);
}

function refuseSelfPromote(src: Target, onto: string): void {
  validateName('branch', onto);
  if (onto === src.branch)
    throw fail('INVALID_ARGUMENT', `cannot promote ${src.db}@${src.branch} onto itself`, {
      hint: 'name a different --onto branch',
      hints: { agent: 'name a different target branch', sdk: 'name a different target branch' },
    });
}

/** The refusals of a promote onto the target `ref`, in order; `write` is the rule of its implicit checkpoints. */
async function vetPromote(
  ctx: OpsContext,
  src: Target,
  onto: string,
  ref: Ref,
  opts: { force?: boolean; actor?: Actor },
): Promise<{ write: (t: Target) => (ref: Ref) => Promise<void> }> {
  const actor = opts.actor ?? HUMAN;
  const human = `offshoot promote ${src.db}@${src.branch} --onto ${onto} --force`;
  refuseProtected(ref, src.db, onto, 'promote onto', opts.force ?? false, actor, human);
  await refuseUndoPointChange(ctx, src.db, onto, ref, actor, 'promoting onto', human);
  await refuseForeignLease(ctx, src.db, onto, ref, 'promote onto');
  await checkUndoSlot(ctx, src.db, onto, 'pre-promote');
  return { write: (t) => vetWrite(ctx, t, actor, 'implicit', human) };
}

async function promoteLeased(
  ctx: OpsContext,
  src: Target,
  onto: string,
  opts: { force?: boolean; materialize?: boolean; actor?: Actor },
): Promise<PromoteResult> {
  let source = await readBranch(ctx, src.db, src.branch);
  let tgt = await readBranch(ctx, src.db, onto);
  const vet = await vetPromote(ctx, src, onto, tgt.ref, opts);
  if (await checkpointIfDirty(ctx, src, source.ref, vet.write(src))) source = await readBranch(ctx, src.db, src.branch);
  // The refresh below replaces the target's checkout, so its uncheckpointed edits go into the undo point first.
  const target = { db: src.db, branch: onto };
  if (await checkpointIfDirty(ctx, target, tgt.ref, vet.write(target))) tgt = await readBranch(ctx, src.db, onto);
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
