import { hasCode } from '../../../core/errors.js';
import { logged } from '../history/record.js';
import { type Ref, withoutLease } from '../../../core/ref.js';
import type { ChainResolver } from '../../../store/chain-resolver.js';
import type { VersionedRef } from '../../../store/store.js';
import type { OpsContext } from '../context/context.js';
import { newLineageAt } from '../chain/new-lineage.js';
import { MAX_UNDO_N, type UndoKind, undoPointName } from '../branch/undo-point-names.js';

/** An earlier undo point kept aside under a name of its own; drop() removes it again (the operation failed). */
export interface KeptAside {
  name: string;
  drop(): Promise<void>;
}

/**
 * Whether any branch but those in `exclude` holds the state `state` is at (its head) as its head or a checkpoint, or
 * `next` (what the new undo point will hold) is that state. Two points hold the same state when their lineages reach
 * the same lineage at that txid through pass-through base pointers (ChainResolver.collapseBase); a copy of a state
 * (a materialized fork) is not recognised as one, so the answer errs towards "no", which keeps more, never less. A
 * branch being reaped or destroyed, or one whose ref or base pointers cannot be read, holds nothing.
 */
async function heldElsewhere(
  ctx: OpsContext,
  db: string,
  branches: readonly string[],
  exclude: ReadonlySet<string>,
  state: Ref,
  next: Ref,
  resolver: ChainResolver,
): Promise<boolean> {
  const txid = state.head_txid;
  const root = (await resolver.collapseBase(state.lineage, txid)).lineage;
  const same = (r: Ref): Promise<boolean> =>
    resolver.collapseBase(r.lineage, txid).then(
      (k) => k.lineage === root,
      () => false,
    );
  if (next.head_txid === txid && (await same(next))) return true;
  const names = branches.filter((b) => !exclude.has(b));
  const raws = await ctx.store.rawRefs(names.map((branch) => ({ db, branch })));
  for (const [i, raw] of raws.entries()) {
    if (raw === undefined) continue;
    let r: Ref;
    try {
      r = ctx.store.parseBranchRef(db, names[i] as string, raw.body);
    } catch {
      continue;
    }
    if (r.reaping || r.deleting) continue;
    const at = r.head_txid === txid || Object.values(r.checkpoints).some((c) => c.txid === txid);
    if (at && (await same(r))) return true;
  }
  return false;
}

/**
 * Before the undo point `name` of `branch` is replaced by one holding `next`: keeps the earlier one, when no other
 * branch holds its state, as `<branch>-<kind>-<n>` (the first n ≥ 2 free), a shared fork of it with the same parent,
 * meta, TTL and touched time, so it reads as the same untouched undo point and expires when it would have. Returns
 * undefined when its state is held elsewhere and the replace loses nothing.
 */
export async function keepEarlierUndoPoint(
  ctx: OpsContext,
  db: string,
  branch: string,
  kind: UndoKind,
  name: string,
  old: VersionedRef,
  next: Ref,
  resolver: ChainResolver,
): Promise<KeptAside | undefined> {
  const branches = await ctx.store.listBranches(db);
  if (await heldElsewhere(ctx, db, branches, new Set([name, branch]), old.ref, next, resolver)) return undefined;
  const fresh = await newLineageAt(ctx, db, resolver, old.ref.lineage, old.ref.head_txid);
  const copy: Ref = withoutLease({
    ...old.ref,
    lineage: fresh.lineage,
    epoch: 1,
    head_epoch: 1,
    checkpoints: Object.fromEntries(Object.entries(old.ref.checkpoints).map(([k, c]) => [k, { ...c, epoch: 1 }])),
  });
  delete copy.base;
  delete copy.generation;
  if (fresh.base) copy.base = fresh.base;
  // The listing names the taken ones, so a long chain costs one put here, not one per earlier undo point.
  const taken = new Set(branches);
  let n = 2;
  while (taken.has(undoPointName(branch, kind, n))) n++;
  for (; ; n++) {
    const aside = undoPointName(branch, kind, n);
    try {
      const from = `${db}@${name}@${old.ref.head_txid}`;
      const etag = await ctx.store.createRef(
        db,
        aside,
        await logged(ctx, db, aside, 'fork', undefined, copy, { from }),
      );
      return { name: aside, drop: () => ctx.store.deleteRef(db, aside, etag) };
    } catch (err) {
      if (!hasCode(err, 'ALREADY_EXISTS') || n >= MAX_UNDO_N) throw err;
    }
  }
}
