import { newLineageId } from '../core/lineage.js';
import type { Checkpoint, Ref } from '../core/ref.js';
import { nameMap } from '../core/name-map.js';
import type { Target } from '../core/target.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { readBranch, refuseForeignLease } from './helpers/branch/branch-ref.js';
import { checkpointIfDirty } from './helpers/checkout/checkpoint-if-dirty.js';
import { withBranchLease } from './helpers/lease/branch-lease.js';
import type { OpsContext } from './helpers/context/context.js';
import { casRepoint } from './helpers/branch/repoint.js';
import { copySnapshot } from './helpers/chain/new-lineage.js';
import { refreshCheckout } from './helpers/checkout/refresh-checkout.js';
import { keepModifiedCheckout } from './helpers/safety/keep-diverged.js';
import { type Actor, HUMAN, vetWrite } from './helpers/safety/policy.js';
import { logged } from './helpers/history/record.js';

// The other compaction of a branch: merging a chain grown past its bound, after a checkpoint or on the janitor's cadence.
export { compactBranch } from './helpers/chain/chain-writer.js';

/** What compact did; `compacted` is false for a branch that was already self-contained. */
export interface CompactResult {
  db: string;
  branch: string;
  txid: number;
  compacted: boolean;
  snapshots: number;
}

/**
 * `offshoot compact db[@b]`: turns a shared fork into a self-contained branch — one snapshot at head in a fresh
 * lineage plus one per distinct checkpoint txid it keeps, the base pointer dropped, a `compact` checkpoint added.
 * A no-op on a branch with no base. This is O(database size) by design: cutting the pointer is its purpose. A dirty
 * checkout is checkpointed first, as `actor` may write into the branch.
 */
export function compact(ctx: OpsContext, t: Target, opts: { actor?: Actor } = {}): Promise<CompactResult> {
  return withBranchLease(ctx, t, () => compactLeased(ctx, t, opts.actor ?? HUMAN));
}

async function compactLeased(ctx: OpsContext, t: Target, actor: Actor): Promise<CompactResult> {
  let cur = await readBranch(ctx, t.db, t.branch);
  await refuseForeignLease(ctx, t.db, t.branch, cur.ref, 'compact');
  const vet = vetWrite(ctx, t, actor, 'implicit', `offshoot compact ${t.db}@${t.branch}`);
  if (await checkpointIfDirty(ctx, t, cur.ref, vet)) cur = await readBranch(ctx, t.db, t.branch);
  const resolver = new ChainResolver(ctx.store);
  if (cur.ref.base === undefined && (await resolver.base(cur.ref.lineage)) === undefined) {
    return { db: t.db, branch: t.branch, txid: cur.ref.head_txid, compacted: false, snapshots: 0 };
  }
  // An ephemeral branch stays one: its new lineage is held by the daemon too.
  const lineage = ctx.ephemeral?.holds(t.db, t.branch) ? ctx.ephemeral.newLineage() : newLineageId();
  const head = cur.ref.head_txid;
  const txids = new Set<number>([head, ...Object.values(cur.ref.checkpoints).map((c) => c.txid)]);
  const label = `compact ${t.db}@${t.branch}`;
  for (const x of txids) await copySnapshot(ctx, t.db, resolver, cur.ref.lineage, x, lineage, label);
  const now = ctx.now().toISOString();
  const checkpoints: Record<string, Checkpoint> = nameMap();
  for (const [name, cp] of Object.entries(cur.ref.checkpoints)) checkpoints[name] = { ...cp, epoch: 1 };
  checkpoints.compact = { txid: head, epoch: 1, created_at: now };
  let next: Ref = { ...cur.ref, lineage, epoch: 1, head_txid: head, head_epoch: 1, checkpoints, touched_at: now };
  delete next.base;
  delete next.lease_holder;
  delete next.lease_expiry;
  next = await logged(ctx, t.db, t.branch, 'compact', cur.ref, next);
  await casRepoint(ctx, t.db, t.branch, cur.etag, next, 'compact');
  const refreshed = await refreshCheckout(ctx, t.db, t.branch, next, 'compacted', label, () =>
    keepModifiedCheckout(ctx, t, next),
  );
  if (refreshed.error) ctx.warn(refreshed.error.message);
  return { db: t.db, branch: t.branch, txid: head, compacted: true, snapshots: txids.size };
}
