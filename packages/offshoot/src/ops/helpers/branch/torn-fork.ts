import type { Ref } from '../../../core/ref.js';
import type { VersionedRef } from '../../../store/store.js';
import type { OpsContext } from '../context/context.js';

/**
 * True when ref may be a torn fork by what it says alone: a shared fork never written since (its head is its fork
 * point). Whether it is one depends on the store: its lineage holds no object, base.json included.
 */
export function mayBeTornFork(ref: Ref): boolean {
  return ref.base !== undefined && ref.head_txid === ref.base.txid;
}

/**
 * True when ref is a torn fork: what a crash leaves of a fork whose ref reached the disk before its base.json did
 * (the store's group commit syncs both directories at once, and the fork answers only after both). Its lineage holds
 * nothing at all, so removing the ref loses nothing the fork ever held; it never answered, so nobody was told it
 * exists.
 */
export async function isTornFork(ctx: OpsContext, ref: Ref): Promise<boolean> {
  if (!mayBeTornFork(ref)) return false;
  return (await ctx.store.backend.listKeys(`data/${ref.lineage}/`)).length === 0;
}

/**
 * Removes db@branch's ref when it is a torn fork, by compare-and-swap on the version read (a fork under the same name
 * then starts clean); true when it was removed, false when the ref is a branch like any other.
 */
export async function clearTornFork(ctx: OpsContext, db: string, branch: string, got: VersionedRef): Promise<boolean> {
  if (!(await isTornFork(ctx, got.ref))) return false;
  await ctx.store.deleteRef(db, branch, got.etag);
  return true;
}
