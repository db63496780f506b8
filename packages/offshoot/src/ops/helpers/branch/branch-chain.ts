import type { DataObject } from '../../../core/keys.js';
import type { Ref } from '../../../core/ref.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import type { VersionedRef } from '../../../store/store.js';
import { notDeleting, readBranch } from './branch-ref.js';
import type { OpsContext } from '../context/context.js';

/** A branch's chain at its head: the objects a checkout reads, their bytes, and the lineages it reads through. */
export interface BranchChain {
  ref: Ref;
  members: DataObject[];
  bytes: number;
  /** The branch's own lineage first, then each base lineage followed. */
  lineages: string[];
}

/**
 * Resolves a branch's head chain with the same resolver the read path uses; reads refs and listings only. `known` is
 * the branch's ref when the caller has just read it, so it is not read twice.
 */
export async function branchChain(
  ctx: OpsContext,
  db: string,
  branch: string,
  resolver = new ChainResolver(ctx.store),
  known?: VersionedRef,
): Promise<BranchChain> {
  const { ref } = known === undefined ? await readBranch(ctx, db, branch) : notDeleting(db, branch, known);
  const chain = await resolver.resolve(ref.lineage, ref.head_txid);
  return {
    ref,
    members: chain.members,
    bytes: chain.members.reduce((a, m) => a + (m.size ?? 0), 0),
    lineages: chain.spine,
  };
}
