import type { Target } from '../../../core/target.js';
import { ChainResolver, type ResolvedChain } from '../../../store/chain-resolver.js';
import { readBranch } from './branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { checkpointTxid } from './checkpoint-txid.js';

/** Resolves `db@branch[@checkpoint]` to the durable chain it names (the head when no checkpoint is given). */
export async function resolveTargetChain(
  ctx: OpsContext,
  t: Target,
  resolver: ChainResolver = new ChainResolver(ctx.store),
): Promise<ResolvedChain> {
  const { ref } = await readBranch(ctx, t.db, t.branch);
  const txid = t.checkpoint !== undefined ? checkpointTxid(ref, t, t.checkpoint) : ref.head_txid;
  return resolver.resolve(ref.lineage, txid);
}
