import type { OffshootError } from '../core/errors.js';
import type { Ref, Checkpoint } from '../core/ref.js';
import { nameMap } from '../core/name-map.js';
import type { Target } from '../core/target.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { readBranch, refuseForeignLease } from './helpers/branch/branch-ref.js';
import { checkoutDirty, checkpointIfDirty } from './helpers/checkout/checkpoint-if-dirty.js';
import { withBranchLease } from './helpers/lease/branch-lease.js';
import type { OpsContext } from './helpers/context/context.js';
import { casRepoint } from './helpers/branch/repoint.js';
import { type Point, resolvePoint } from './helpers/history/point.js';
import { logged } from './helpers/history/record.js';
import { copySnapshot, newLineageAt } from './helpers/chain/new-lineage.js';
import { refreshCheckout } from './helpers/checkout/refresh-checkout.js';
import { type Actor, HUMAN, refuseSecondRollback, refuseUndoPointChange, vetWrite } from './helpers/safety/policy.js';
import { keepModifiedCheckout } from './helpers/safety/keep-diverged.js';
import { checkUndoSlot, keepSafetyFork } from './helpers/safety/safety-fork.js';

/** What rollback did: where the branch now stands, what it abandoned, and the undo point it kept. */
export interface RollbackResult {
  db: string;
  branch: string;
  checkpoint: string;
  txid: number;
  /** The txid range above the checkpoint that was abandoned, if any. */
  abandoned: { from: number; to: number } | undefined;
  backup: string;
  /** Where the earlier undo point was kept, when it held the only copy of its state (see keepSafetyFork). */
  earlierBackup?: string;
  path: string;
  refreshed: boolean;
  /** Set when the branch moved but its existing checkout could not be refreshed (say, BUSY): the command failed. */
  refreshError?: OffshootError;
  mode: 'shared' | 'materialized';
}

/**
 * `offshoot rollback db[@b] --to <cp>`: repoints the branch at a fresh lineage that reads through a base pointer at
 * the checkpoint (or owns a copy with --materialize), keeping checkpoints at or below it. The old head is kept first
 * as `<branch>-pre-rollback`. Dirty checkout edits are checkpointed into the undo point, never silently lost.
 */
export function rollback(
  ctx: OpsContext,
  t: Target,
  to: string,
  opts: { materialize?: boolean; actor?: Actor } = {},
): Promise<RollbackResult> {
  return withBranchLease(ctx, t, () => rollbackLeased(ctx, t, to, opts));
}

/**
 * Runs every refusal `rollback` would on the branch as it stands, and changes nothing (no lease, no write): whether
 * this actor's rollback would go ahead. A caller asks it before it asks its human (`check` on the wire).
 */
export async function checkRollback(
  ctx: OpsContext,
  t: Target,
  to: string,
  opts: { actor?: Actor } = {},
): Promise<void> {
  const cur = await readBranch(ctx, t.db, t.branch);
  const vet = await vetRollback(ctx, t, to, cur.ref, opts.actor ?? HUMAN);
  if (await checkoutDirty(ctx, t, cur.ref)) await vet.write(cur.ref);
}

/** The refusals of a rollback, in order, on the ref as read; `write` is the rule of its implicit checkpoint. */
async function vetRollback(
  ctx: OpsContext,
  t: Target,
  to: string,
  ref: Ref,
  actor: Actor,
): Promise<{ point: Point; write: (ref: Ref) => Promise<void> }> {
  await refuseForeignLease(ctx, t.db, t.branch, ref, 'rollback');
  const point = await resolvePoint(ctx, t, ref, to);
  const human = `offshoot rollback ${t.db}@${t.branch} --to ${to}`;
  await refuseUndoPointChange(ctx, t.db, t.branch, ref, actor, 'rolling back', human);
  await refuseSecondRollback(ctx, t.db, t.branch, ref, actor);
  await checkUndoSlot(ctx, t.db, t.branch, 'pre-rollback');
  return { point, write: vetWrite(ctx, t, actor, 'implicit', human) };
}

/** Whether p is the state the branch, now on `lineage`, holds at p's txid: the same lineage once pass-throughs fold. */
async function onCurrentHistory(resolver: ChainResolver, lineage: string, p: Point): Promise<boolean> {
  if (p.lineage === lineage) return true;
  const [a, b] = await Promise.all([resolver.collapseBase(lineage, p.txid), resolver.collapseBase(p.lineage, p.txid)]);
  return a.lineage === b.lineage;
}

async function rollbackLeased(
  ctx: OpsContext,
  t: Target,
  to: string,
  opts: { materialize?: boolean; actor?: Actor },
): Promise<RollbackResult> {
  let cur = await readBranch(ctx, t.db, t.branch);
  const { point, write } = await vetRollback(ctx, t, to, cur.ref, opts.actor ?? HUMAN);
  const target = point.txid;
  if (await checkpointIfDirty(ctx, t, cur.ref, write)) cur = await readBranch(ctx, t.db, t.branch);
  const oldHead = cur.ref.head_txid;
  const resolver = new ChainResolver(ctx.store);
  const fresh = await newLineageAt(ctx, t.db, resolver, point.lineage, target, {
    materialize: opts.materialize ?? false,
  });
  // Checkpoints at or below the point stay when it is on the branch's current history (a checkpoint always is; a
  // moment may be a state a rollback or promote since left behind, whose history holds none of them).
  const kept: Record<string, Checkpoint> = nameMap();
  if (await onCurrentHistory(resolver, cur.ref.lineage, point))
    for (const [name, cp] of Object.entries(cur.ref.checkpoints))
      if (cp.txid <= target) kept[name] = { ...cp, epoch: 1 };
  if (fresh.mode === 'materialized') {
    // A lineage with no base must own a snapshot for every checkpoint it keeps.
    const txids = new Set(
      Object.values(kept)
        .map((c) => c.txid)
        .filter((x) => x !== target),
    );
    for (const x of txids)
      await copySnapshot(ctx, t.db, resolver, cur.ref.lineage, x, fresh.lineage, `rollback ${t.db}@${t.branch}`);
  }
  let next: Ref = {
    ...cur.ref,
    lineage: fresh.lineage,
    epoch: 1,
    head_txid: target,
    head_epoch: 1,
    checkpoints: kept,
    touched_at: ctx.now().toISOString(),
  };
  delete next.base;
  if (fresh.base) next.base = fresh.base;
  delete next.lease_holder;
  delete next.lease_expiry;
  // The undo point is written last, and put back if the repoint fails: a failed rollback keeps the previous one.
  const undo = await keepSafetyFork(ctx, t.db, t.branch, cur.ref, 'pre-rollback', resolver);
  try {
    next = await logged(ctx, t.db, t.branch, 'rollback', cur.ref, next, { name: to, undo: undo.name });
    await casRepoint(ctx, t.db, t.branch, cur.etag, next, 'rollback');
  } catch (err) {
    await undo.restore();
    throw err;
  }
  await undo.settle();
  const refreshed = await refreshCheckout(
    ctx,
    t.db,
    t.branch,
    next,
    `rolled back to ${JSON.stringify(to)}`,
    `rollback ${t.db}@${t.branch}`,
    () => keepModifiedCheckout(ctx, t, next),
  );
  return {
    db: t.db,
    branch: t.branch,
    checkpoint: to,
    txid: target,
    abandoned: oldHead > target ? { from: target + 1, to: oldHead } : undefined,
    backup: undo.name,
    ...(undo.earlier !== undefined ? { earlierBackup: undo.earlier } : {}),
    path: refreshed.path,
    refreshed: refreshed.refreshed,
    ...(refreshed.error ? { refreshError: refreshed.error } : {}),
    mode: fresh.mode,
  };
}
